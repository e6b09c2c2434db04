// One simulated Talos machine: its boots (the initial one and each reboot's), the config applied to it,
// and the views the front doors read. The jobs live beside it: the timers on the node's clock
// (nodeTimers.ts), the cri service and its history (criService.ts), the CRI files of /etc and their
// statuses (etcFiles.ts), immediate applies and their write (configApply.ts), the other services
// (otherServices.ts), procfs (procfs.ts). Every instant is on the node's wall clock: real time plus
// the node's clock offset.
import { randomUUID } from 'node:crypto';
import type { KubeNodeHooks } from '../types.js';
import { ConfigApply, type HeldWriteMatch } from './configApply.js';
import { CriService } from './criService.js';
import { EtcFiles, type ListedEntry } from './etcFiles.js';
import { appendDocument, applyPatches, effectiveAuth } from './machineconfig.js';
import type { Patch } from './machineconfig.js';
import { newTalosNode } from './newNode.js';
import { NodeTimers } from './nodeTimers.js';
import { bootServices, type OtherService } from './otherServices.js';
import { procFile } from './procfs.js';
import { Timing } from './timing.js';
import type { AddNodeSpec, AuthFields, CriRestartAfterBoot, MachineConfigState, SimTalosNode } from './types.js';

export interface RuntimeOptions {
  kube: KubeNodeHooks;
  rebootMs: number;
  /** pin the 1.14 restart (write → new launch) instead of drawing it from Timing */
  criRestartMs?: number;
  /** pin the boot gap (launch − write; negative: containerd first) instead of drawing it */
  bootGapMs?: number;
  /**
   * pin how long after a reboot the node answers before it lists cri (ms; Infinity: never, a boot
   * stuck before StartAllServices); default: drawn per reboot (timing.ts)
   */
  criUnlistedMs?: number;
  /**
   * pin how long after a reboot the node answers before machined writes the CRI files (ms); default:
   * drawn per reboot (timing.ts). Ignored when criUnlistedMs is pinned.
   */
  configAfterAnswerMs?: number;
  /** pin the millisecond of the second at which a reboot writes cri.toml (see TalosSimOptions) */
  bootWriteMsOfSecond?: number;
  /** the node's seeded generator (see timing.ts) */
  random: () => number;
  /** a third seeded generator, for the post-reboot window only (so its draws shift no other) */
  bootRandom?: () => number;
  /** a second seeded generator, for the write after a patch only (so adding that draw shifts no other) */
  applyRandom?: () => number;
}

export class NodeRuntime {
  readonly node: SimTalosNode;
  otherServices: OtherService[] = [];
  /** a `--mode=staged` config, active from the next boot */
  stagedConfig?: MachineConfigState;
  /** resolves when the machine is up again */
  rebooting?: Promise<void>;
  /** see TalosSim.failNextReboot and TalosSim.holdNextReboot */
  nextRebootFault?: 'ignored' | 'stays-down' | 'held';
  /** a held reboot's way back (TalosSim.releaseReboot) */
  releaseHeld?: () => void;
  /** see TalosSim.holdNextBootWindow: the next reboot's node answers, the rest of its boot waits */
  holdBootWindow = false;
  /** a held boot window's way on (TalosSim.releaseBootWindow) */
  releaseBootHeld?: () => void;
  /** resolves when the current boot is Running and ready (runningAndReady) */
  private ready: Promise<void> = Promise.resolve();
  private markReady: () => void = () => undefined;
  private readonly timers: NodeTimers;
  private readonly timing: Timing;
  private readonly cri: CriService;
  private readonly etc: EtcFiles;
  private readonly config: ConfigApply;
  private readonly restartFault?: CriRestartAfterBoot;
  private readonly bootTiming: Timing;

  constructor(
    spec: AddNodeSpec,
    private readonly opts: RuntimeOptions,
  ) {
    const node = newTalosNode(spec);
    this.node = node;
    this.timers = new NodeTimers(() => node.clock.offsetMs);
    this.timing = new Timing(opts.random);
    this.cri = new CriService(node, this.timers, this.timing, opts.criRestartMs);
    this.etc = new EtcFiles(node, this.timers, this.timing);
    this.config = new ConfigApply(node, this.timers, new Timing(opts.applyRandom ?? opts.random), this.etc, this.cri);
    this.restartFault = node.version === '1.14' ? spec.criRestartAfterBoot : undefined;
    this.bootTiming = new Timing(opts.bootRandom ?? opts.random);

    const now = this.now();
    const bootedAgo = spec.bootedAgoMs ?? 10 * 24 * 3600 * 1000;
    const bootAt = now - bootedAgo;
    const writeAt = now - (spec.configWrittenAgoMs ?? bootedAgo - 100);
    const startAt =
      spec.criStartedAgoMs !== undefined ? now - spec.criStartedAgoMs : writeAt + (spec.bootGapMs ?? this.bootGap(spec.criFirst === true));
    // containerd launched before the file was rendered read the placeholder: no credential at all
    const loaded = startAt < writeAt && spec.criStartedAgoMs === undefined ? {} : (spec.loadedCredential ?? spec.credential);
    if (spec.criHealthHeld) this.cri.holdHealth();
    this.boot({ bootAt, writeAt, startAt, loaded });
    if (spec.eventsWithoutStart) this.cri.flapHealth(startAt + 1000, now);
  }

  /** The node's wall clock, with the sub-millisecond digits the Talos API serves. */
  now(): number {
    return this.timers.now();
  }

  /** launch − write at boot, from the version's code path (timing.ts) unless pinned. */
  private bootGap(criFirst = false): number {
    // the fault is asked for by name, so it wins over a pinned gap
    if (criFirst && this.node.version === '1.13') return this.timing.bootGap113(true);
    if (this.opts.bootGapMs !== undefined) return this.opts.bootGapMs;
    if (this.node.version === '1.14') return this.timing.bootGap114();
    return this.timing.bootGap113(criFirst);
  }

  dispose(): void {
    this.timers.cancelAll();
  }

  // --- boot --------------------------------------------------------------------------------------

  /**
   * A fresh boot: tmpfs /etc rewritten, machined history restarted, containerd launched. Every step
   * happens at its instant: the initial boot lies in the past, a reboot's cri steps (files, load,
   * launch) lie after the node answers again. `startAllAt` (a reboot only): StartAllServices, which
   * loads the services machined does not start early (kubelet, etcd, trustd; cri on ≤ 1.13); before
   * it ServiceList lists only the early services.
   */
  private boot(b: {
    bootAt: number;
    writeAt: number;
    startAt: number;
    loaded: Record<string, AuthFields>;
    startAllAt?: number;
    /** a held boot window's release: the files the boot wrote at once are there already (writeAtBoot) */
    laterOnly?: boolean;
  }): void {
    const { bootAt, startAt, loaded, startAllAt } = b;
    this.node.bootedAtMs = bootAt;
    const { statusAt, ordered114 } = this.etc.writeAtBoot(b);
    this.cri.resetForBoot();
    if (ordered114) this.cri.runAfterStatus114(statusAt, startAt);
    else if (startAllAt !== undefined) this.cri.runAfterStatus114(startAllAt, startAt);
    else this.cri.runFromBoot(bootAt, startAt);
    this.cri.launchAtBoot(startAt, loaded);

    const all = bootServices(this.node.role, bootAt);
    const late = new Set(['kubelet', 'etcd', 'trustd']);
    if (startAllAt === undefined) {
      this.otherServices = all;
      return;
    }
    this.otherServices = all.filter((s) => !late.has(s.id));
    this.timers.atTime(startAllAt, () => {
      const at = this.now();
      const loadedNow = all.filter((s) => late.has(s.id)).map((s) => ({ ...s, events: s.events.map((e) => ({ ...e, ts: at })) }));
      this.otherServices = [...this.otherServices, ...loadedNow].sort((x, y) => (x.id < y.id ? -1 : 1));
    });
  }

  /**
   * The criRestartAfterBoot fault: base-spec.json written again (its status's specVersion bumped), so
   * cri.ServiceController stops and starts cri, events stamped as their timers fire.
   */
  private restartAfterBoot(fault: CriRestartAfterBoot): void {
    const writeAt = this.etc.rewriteBaseSpec();
    this.cri.restartWithFailingChecks(writeAt, fault.failingChecks ?? 0, () => effectiveAuth(this.node.machineConfig));
  }

  // --- machine config ----------------------------------------------------------------------------

  /** See ConfigApply.applyNow. */
  applyNow(next: MachineConfigState): void {
    this.config.applyNow(next);
  }

  /** See CriService.holdHealth / releaseHealth. */
  holdCriHealth(): void {
    this.cri.holdHealth();
  }

  releaseCriHealth(): void {
    this.cri.releaseHealth();
  }

  /** Arms the held-write fault (HeldWriteMatch) for the next immediate apply. */
  holdNextWrite(match: HeldWriteMatch): void {
    this.config.holdNextWrite(match);
  }

  /** Both front doors (talosctl, the API) call this before answering a read of this node. */
  answering(command: string, target: string | undefined): void {
    this.config.answering(command, target);
  }

  /** `--mode=try`: the previous config comes back when the try timeout passes (RollbackToConfigAfter). */
  revertAfter(prev: MachineConfigState, ms: number): void {
    this.config.revertAfter(prev, ms);
  }

  /** See ConfigApply.cancelRollback. */
  cancelRollback(): void {
    this.config.cancelRollback();
  }

  /** Whether a try-mode rollback is pending. */
  rollbackPending(): boolean {
    return this.config.rollbackPending();
  }

  applyStaged(next: MachineConfigState): void {
    this.stagedConfig = next;
  }

  patch(patches: Patch[]): MachineConfigState {
    return applyPatches(this.node.machineConfig, patches);
  }

  // --- reboot ------------------------------------------------------------------------------------

  /** The machine goes down now and is back (Ready to answer) after rebootMs. */
  reboot(): Promise<void> {
    const n = this.node;
    const fault = this.nextRebootFault;
    this.nextRebootFault = undefined;
    // the sequence failed before anything stopped: nothing happens, ever
    if (fault === 'ignored') return new Promise<void>(() => undefined);
    this.timers.cancelAll();
    n.up = false;
    this.cri.stopForReboot();
    try {
      this.opts.kube.nodeDown(n.name);
    } catch {
      // a failing hook must not wedge the machine
    }
    this.ready = new Promise((resolve) => {
      this.markReady = resolve;
    });
    this.rebooting = new Promise((resolve) => {
      if (fault === 'stays-down') return;
      const back = () =>
        this.timers.later(this.opts.rebootMs, () => {
          this.comeBack();
          this.rebooting = undefined;
          resolve();
        });
      if (fault === 'held') this.releaseHeld = back;
      else back();
    });
    return this.rebooting;
  }

  /**
   * The node answers again (apid, with the new boot id) before machined has written the CRI files of
   * the rebuilt /etc, and before anything loads cri. apid starts in the Initialize sequence and serves
   * once its certificate, issued from the machine config LoadConfig loads at the end of Initialize, is
   * there; the CRI files are rendered from that same config by machined's controllers on their own
   * schedule, and nothing orders the two (docs/talos-evidence-timing.md, "The window after a reboot").
   * The twin takes the unkind order: the write lands `configAfterAnswerMs` after the node answers
   * (drawn, timing.ts). On 1.14 cri.ServiceController loads cri once cri.toml's EtcFileStatus exists,
   * and cri launches a few ms later; on ≤ 1.13 StartAllServices loads it and cri launches the
   * version's boot gap after the write, while the cri.toml machined merged at its start from the
   * image's parts alone (no registry auth) is there all along (boot()). Pinning `criUnlistedMs`
   * instead fixes the load (the window before cri is listed) and derives the write from it, which on
   * ≤ 1.13 may come before the node answers. Then ServiceList lists only the early services; the
   * conditions hold by then (volumes mounted, network up), so the launch follows the load by a few ms;
   * health is known one second later, and only then does the kubelet start (it needs the CRI socket),
   * so Kubernetes sees the new boot id after the launch. (The criFirst fault is the node's initial boot
   * only: a reboot mends it.)
   */
  private comeBack(): void {
    const n = this.node;
    if (this.stagedConfig) {
      n.machineConfig = { ...this.stagedConfig, version: n.machineConfig.version + 1 };
      this.stagedConfig = undefined;
    }
    n.bootID = randomUUID();
    n.clock.epoch = 0;
    const up = this.now();
    if (this.holdBootWindow) {
      // held (TalosSim.holdNextBootWindow): the node answers as a boot does before machined writes the
      // CRI files and before StartAllServices, whose steps are laid out never to come; the release lays
      // them out from its own instant, as if this boot had been that much slower to get there
      this.holdBootWindow = false;
      this.boot({ bootAt: up - 8000, writeAt: Infinity, startAt: Infinity, loaded: {}, startAllAt: Infinity });
      n.up = true;
      n.answeredAtMs = up;
      const gen = this.timers.generation;
      this.releaseBootHeld = () => {
        // a reboot (or the twin's stop) since: that boot is gone
        if (gen === this.timers.generation) this.layOutBoot(up, this.now(), true);
      };
      return;
    }
    this.layOutBoot(up, up, false);
  }

  /**
   * The boot from the node's answer (`up`) on: the CRI files' write, cri's load and launch, the other
   * late services, Kubernetes' sight of the new boot id, readiness. The window before the write (or
   * before cri is listed) counts from `from`: the answer, or a held window's release (`laterOnly`:
   * what the boot wrote at once, at the answer, stays as it was; nothing is laid out before `from`).
   */
  private layOutBoot(up: number, from: number, laterOnly: boolean): void {
    const n = this.node;
    const gap = this.bootGap();
    const ordered114 = n.version === '1.14' && gap > 0;
    let loadAt: number;
    let writeAt: number;
    if (this.opts.criUnlistedMs !== undefined) {
      loadAt = from + this.opts.criUnlistedMs;
      writeAt = ordered114 ? loadAt : loadAt + this.bootTiming.runAfterLoad() - gap;
    } else {
      writeAt = from + (this.opts.configAfterAnswerMs ?? this.bootTiming.configAfterAnswer());
      loadAt = ordered114 ? writeAt : writeAt + gap - this.bootTiming.runAfterLoad();
    }
    // a held window's files come after its release, never in the past of what a client already read
    if (laterOnly && writeAt < from) {
      loadAt += from - writeAt;
      writeAt = from;
    }
    const msOfSecond = this.opts.bootWriteMsOfSecond;
    if (msOfSecond !== undefined) {
      // a test pins where in its second the write falls: the whole boot from the load on moves later
      const shift = (((msOfSecond - writeAt) % 1000) + 1000) % 1000;
      writeAt += shift;
      loadAt += shift;
    }
    const startAt = writeAt + gap;
    // apid comes up a few seconds into the boot (earlyServices), after machined, udevd, syslogd; a
    // pinned ≤ 1.13 gap longer than that puts the write earlier in the boot, never before it
    const bootAt = Math.min(up, writeAt) - 8000;
    this.boot({ bootAt, writeAt, startAt, loaded: gap < 0 ? {} : effectiveAuth(n.machineConfig), startAllAt: loadAt, laterOnly });
    if (!laterOnly) {
      n.up = true;
      n.answeredAtMs = up;
    }
    this.timers.atTime(startAt, () => {
      try {
        this.opts.kube.nodeUp(n.name, n.bootID);
      } catch {
        // see nodeDown
      }
      // the fault counts from the boot's launch: the restart comes while the node is coming up
      const fault = this.restartFault;
      if (fault) this.timers.later(fault.afterUpMs, () => this.restartAfterBoot(fault));
    });
    this.timers.atTime(startAt + 1000, () => this.markReady());
  }

  /**
   * The MachineStatus a `talosctl reboot --wait` tracker waits for (MachineReadyEventFn: stage Running
   * and ready; MachineStatusController's readiness checks: apid, machined, kubelet (etcd, trustd on a
   * control plane) up, the node Ready, static pods ready). The twin stands in with cri healthy after
   * this boot's launch, when the kubelet can start: it leaves out the kubelet's own start and the
   * Kubernetes side. Never resolves for a boot that never loads cri.
   */
  runningAndReady(): Promise<void> {
    return this.ready;
  }

  // --- simulator controls ------------------------------------------------------------------------

  stampMarker(revision: string): void {
    const mc = this.node.machineConfig;
    const marked = appendDocument(mc, { apiVersion: 'v1alpha1', kind: 'KsailDesiredRevision', name: 'registry-auth', revision });
    this.node.machineConfig = { ...marked, version: mc.version + 1 };
  }

  /** Directory tree view for ls: the conf.d files plus their directories. */
  listing(): Map<string, ListedEntry> {
    return this.etc.listing();
  }

  /** Virtual procfs reads. */
  procFile(path: string): string | undefined {
    return procFile(this.node, () => this.now(), path);
  }
}
