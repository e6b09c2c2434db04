// One simulated Talos machine: boot timeline, rendered CRI files, the cri service (containerd) with
// its event history, COSI status resources, reboots and the v1.14 automatic cri restart.
// Every instant is on the node's wall clock: real time plus the node's clock offset.
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import type { KubeNodeHooks } from '../types.js';
import { goQuoteSlice } from './format.js';
import { appendDocument, applyPatches, configFingerprint, effectiveAuth, initialMachineConfig } from './machineconfig.js';
import type { Patch } from './machineconfig.js';
import {
  BASE_PART,
  BASE_SPEC,
  BASE_SPEC_CONTENT,
  CONF_D,
  CRI_TOML,
  CUSTOMIZATION_PART,
  basePart,
  renderCriFiles,
  renderCriTomlBeforeConfig113,
} from './render.js';
import { Timing } from './timing.js';
import type {
  AddNodeSpec,
  AuthFields,
  CriRestartAfterBoot,
  MachineConfigState,
  ServiceEvent,
  ServiceHealth,
  SimFile,
  SimTalosNode,
} from './types.js';

export const MAX_EVENTS = 64;
/** setTimeout's largest delay; a longer one would fire at once */
const MAX_TIMER_MS = 2 ** 31 - 1;
const ETC_LABEL = 'system_u:object_r:etc_t:s0';
/** v1.13.8's commit time stands in for the rootfs build time of files shipped in the image. */
const IMAGE_BUILD_MS = 1785848325000;

const CRI_ARGS = ['/bin/containerd', '--address', '/run/containerd/containerd.sock', '--config', '/etc/cri/containerd.toml'];
export const CRI_PROCESS = `Process(${goQuoteSlice(CRI_ARGS)})`;
// cri's volumes as the Waiting event names them: services/cri.go Volumes() plus constants.Overlays
// (v1.13: the containerd state under /var/lib/containerd and four overlays; v1.14: the `CRI` volume, /opt only)
const VOLUMES_113 =
  '/var/lib, /var/lib/cni, /var/lib/containerd, /var/run, /var/run/lock, /etc/cni, /etc/kubernetes, /usr/libexec/kubernetes, /opt';
const VOLUMES_114 = '/var/lib, /var/lib/cni, CRI, /var/run, /var/run/lock, /opt';
const ETC_FILES_COND = '/etc files ["machine-id" "cri/conf.d/cri.toml" "cri/conf.d/base-spec.json"] to be ready';

export interface OtherService {
  id: string;
  state: string;
  health: ServiceHealth;
  events: ServiceEvent[];
}

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

/**
 * Fault: the write of the next immediate apply waits for the `nth` matching read of this node (after
 * the apply) and lands right before that read is answered. `command` is the talosctl name (`read`,
 * `ls`, `get`, `service`; the API's Read, List, COSI Get and ServiceList count as the same), `target`
 * the path or resource id read (any when absent). Stages a write between two evidence reads.
 */
export interface HeldWriteMatch {
  command: string;
  target?: string;
  nth?: number;
}

const HEALTHY: ServiceHealth = { unknown: false, healthy: true, lastMessage: '' };
const UNKNOWN: ServiceHealth = { unknown: true, healthy: false, lastMessage: 'Unknown' };
const NOT_RUNNING: ServiceHealth = { unknown: false, healthy: false, lastMessage: 'service not running' };

export class NodeRuntime {
  readonly node: SimTalosNode;
  otherServices: OtherService[] = [];
  /** a `--mode=staged` config, active from the next boot */
  stagedConfig?: MachineConfigState;
  /** resolves when the machine is up again */
  rebooting?: Promise<void>;
  /** see TalosSim.failNextReboot */
  nextRebootFault?: 'ignored' | 'stays-down';
  /** resolves when the current boot is Running and ready (runningAndReady) */
  private ready: Promise<void> = Promise.resolve();
  private markReady: () => void = () => undefined;
  private nextPid = 0;
  private generation = 0;
  private restartPending = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly timing: Timing;
  private readonly restartAfterBoot?: CriRestartAfterBoot;
  private readonly applyTiming: Timing;
  private readonly bootTiming: Timing;
  private held?: { match: HeldWriteMatch; seen: number; write?: () => void; generation: number };
  /** the pending `--mode=try` rollback (revertAfter), until it fires or is cancelled */
  private rollback?: { prev: MachineConfigState };

  constructor(
    spec: AddNodeSpec,
    private readonly opts: RuntimeOptions,
  ) {
    const version = spec.version ?? '1.13';
    const node = {
      name: spec.name,
      ip: spec.ip,
      role: spec.role,
      version,
      bootID: randomUUID(),
      bootedAtMs: 0,
      up: true,
      clock: { offsetMs: spec.clock?.offsetMs ?? 0, synced: spec.clock?.synced ?? true, epoch: spec.clock?.epoch ?? 0 },
      machineConfig: initialMachineConfig(spec.role, spec.credential, {
        form: spec.credentialForm,
        staleLegacy: spec.staleLegacyCredential,
        self: { name: spec.name, ip: spec.ip },
      }),
      files: new Map(),
      etcFileStatus: new Map(),
      containerd: {
        pid: 0,
        startedAtMs: 0,
        loadedCredential: {},
        listed: true,
        state: 'Initialized',
        health: { ...UNKNOWN },
        events: [],
        mountNamespace: '',
      },
      images: new Set(),
    } as Omit<SimTalosNode, 'auth'> as SimTalosNode;
    Object.defineProperty(node, 'auth', { enumerable: true, get: () => effectiveAuth(node.machineConfig) });
    if (spec.role === 'control-plane') {
      node.etcd = { memberId: randomBytes(8).toString('hex'), healthy: true, learner: false, alarms: [], errors: '' };
    }
    this.node = node;
    this.nextPid = randomInt(1700, 2200);
    this.timing = new Timing(opts.random);
    this.restartAfterBoot = version === '1.14' ? spec.criRestartAfterBoot : undefined;
    this.applyTiming = new Timing(opts.applyRandom ?? opts.random);
    this.bootTiming = new Timing(opts.bootRandom ?? opts.random);

    const now = this.now();
    const bootedAgo = spec.bootedAgoMs ?? 10 * 24 * 3600 * 1000;
    const bootAt = now - bootedAgo;
    const writeAt = now - (spec.configWrittenAgoMs ?? bootedAgo - 100);
    const startAt =
      spec.criStartedAgoMs !== undefined ? now - spec.criStartedAgoMs : writeAt + (spec.bootGapMs ?? this.bootGap(spec.criFirst === true));
    // containerd launched before the file was rendered read the placeholder: no credential at all
    const loaded = startAt < writeAt && spec.criStartedAgoMs === undefined ? {} : (spec.loadedCredential ?? spec.credential);
    this.boot({ bootAt, writeAt, startAt, loaded });
    if (spec.eventsWithoutStart) this.flapHealth(startAt + 1000, now);
  }

  /** The node's wall clock, with the sub-millisecond digits the Talos API serves. */
  now(): number {
    return performance.timeOrigin + performance.now() + this.node.clock.offsetMs;
  }

  /** launch − write at boot, from the version's code path (timing.ts) unless pinned. */
  private bootGap(criFirst = false): number {
    // the fault is asked for by name, so it wins over a pinned gap
    if (criFirst && this.node.version === '1.13') return this.timing.bootGap113(true);
    if (this.opts.bootGapMs !== undefined) return this.opts.bootGapMs;
    if (this.node.version === '1.14') return this.timing.bootGap114();
    return this.timing.bootGap113(criFirst);
  }

  /** `fn` now when `ts` has passed, else when it comes: a boot is laid out partly in the future. */
  private atTime(ts: number, fn: () => void): void {
    const now = this.now();
    if (ts <= now) fn();
    else this.later(ts - now, fn);
  }

  /** An event stamped `ts`, shown once `ts` has come. */
  private pushAt(state: string, msg: string, ts: number): void {
    this.atTime(ts, () => this.push(state, msg, ts));
  }

  private later(ms: number, fn: () => void): void {
    // a step pinned never to come (criUnlistedMs: Infinity), or beyond what a timer can hold
    if (!(ms <= MAX_TIMER_MS)) return;
    const gen = this.generation;
    const t = setTimeout(
      () => {
        this.timers.delete(t);
        if (gen === this.generation) fn();
      },
      Math.max(0, ms),
    );
    this.timers.add(t);
  }

  dispose(): void {
    this.generation++;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  // --- cri service ----------------------------------------------------------------------------

  private push(state: string, msg: string, ts: number): void {
    const c = this.node.containerd;
    c.events.push({ state, msg, ts });
    if (c.events.length > MAX_EVENTS) c.events.splice(0, c.events.length - MAX_EVENTS);
    c.state = state;
    if (state !== 'Running') c.serviceResource = undefined;
  }

  /**
   * waitFor logs the condition's description at once (every condition, none waited on yet), then again
   * whenever it changes (checked each second): the conditions still pending.
   */
  private waitingMessages(): [string, string] {
    if (this.node.version === '1.14') {
      return [`Waiting for volumes ${VOLUMES_114} to be mounted, network, ${ETC_FILES_COND}`, 'Waiting for network'];
    }
    return [`Waiting for volumes ${VOLUMES_113} to be mounted, network`, 'Waiting for network'];
  }

  /** containerd launched at `at`: it reads cri.toml now, so it holds `loaded` until its next start. */
  private launch(at: number, loaded: Record<string, AuthFields>): void {
    const c = this.node.containerd;
    this.nextPid += randomInt(150, 900);
    c.pid = this.nextPid;
    c.startedAtMs = at;
    c.loadedCredential = structuredClone(loaded);
    c.mountNamespace = `mnt:[${4026532000 + randomInt(100, 999)}]`;
    c.health = { ...UNKNOWN };
    // process.go: the PID is recorded right after the launch, then the event is logged
    const after = this.timing.afterLaunch();
    c.servicePid = {
      version: 1,
      created: at + after.pidRecord,
      updated: at + after.pidRecord,
      pid: c.pid,
      mountNamespace: c.mountNamespace,
    };
    this.push('Running', `Process ${CRI_PROCESS} started with PID ${c.pid}`, at + after.event);
    c.serviceResource = { version: 1, created: at + after.event, updated: at + after.event, running: true, healthy: false, unknown: true };
  }

  private healthy(at: number): void {
    const c = this.node.containerd;
    if (c.state !== 'Running') return;
    c.health = { ...HEALTHY };
    this.push('Running', 'Health check successful', at);
    if (c.serviceResource) {
      c.serviceResource = { ...c.serviceResource, version: c.serviceResource.version + 1, updated: at, healthy: true, unknown: false };
    }
  }

  /** Health probe transitions that push the launch event out of the 64-event window. */
  private flapHealth(from: number, to: number): void {
    const n = MAX_EVENTS + 6;
    const step = Math.max(1, Math.floor((to - from) / (n + 1)));
    for (let i = 1; i <= n; i++) {
      const ts = from + i * step;
      if (i % 2 === 1) {
        this.node.containerd.health = { unknown: false, healthy: false, lastMessage: 'context deadline exceeded' };
        this.push('Running', 'Health check failed: context deadline exceeded', ts);
      } else {
        this.healthy(ts);
      }
    }
    if (this.node.containerd.health.healthy === false) this.healthy(from + (n + 1) * step);
  }

  // --- boot --------------------------------------------------------------------------------------

  /**
   * A fresh boot: tmpfs /etc rewritten, machined history restarted, containerd launched. Every step
   * happens at its instant: the initial boot lies in the past, a reboot's cri steps (files, load,
   * launch) lie after the node answers again. `startAllAt` (a reboot only): StartAllServices, which
   * loads the services machined does not start early (kubelet, etcd, trustd; cri on ≤ 1.13); before
   * it ServiceList lists only the early services.
   */
  private boot(b: { bootAt: number; writeAt: number; startAt: number; loaded: Record<string, AuthFields>; startAllAt?: number }): void {
    const { bootAt, writeAt, startAt, loaded, startAllAt } = b;
    const n = this.node;
    n.bootedAtMs = bootAt;
    n.files.clear();
    n.etcFileStatus.clear();
    const firstWrite = Math.min(bootAt + 100, writeAt);
    n.files.set(BASE_PART, { content: basePart(n.version), mtimeMs: IMAGE_BUILD_MS, mode: '-rw-r--r--', label: ETC_LABEL });
    if (n.version === '1.13') {
      n.files.set(CUSTOMIZATION_PART, { content: '', mtimeMs: IMAGE_BUILD_MS, mode: '-rw-r--r--', label: ETC_LABEL });
    }
    n.files.set(BASE_SPEC, { content: BASE_SPEC_CONTENT, mtimeMs: firstWrite, mode: '-rw-r--r--', label: ETC_LABEL });
    const firstStatus = firstWrite + this.timing.statusAfterWrite();
    this.status('cri/conf.d/base-spec.json', firstStatus, firstStatus, 1);
    // Talos 1.14 renders cri.toml only from the registries config (CRIConfigController, once the
    // machine config is loaded) and starts cri only once its status exists (below): a 1.14 boot writes
    // it once. ≤ 1.13 merges cri.toml from the *.part files whenever an EtcFileStatus changes
    // (CRIConfigPartsController), so as soon as machined starts it writes one from the image's parts
    // alone, without the registries, and writes it again once 01-registries.part, rendered from the
    // machine config, is there (files/cri_config_parts.go, cri_registry_config.go, v1.13).
    const ordered114 = n.version === '1.14' && startAt > writeAt;
    const rewritten = !ordered114 && writeAt - firstWrite > 500 && (startAllAt === undefined || n.version === '1.13');
    if (rewritten && n.version === '1.13') {
      n.files.set(CRI_TOML, { content: renderCriTomlBeforeConfig113(), mtimeMs: firstWrite, mode: '-rw-------', label: ETC_LABEL });
      this.status('cri/conf.d/cri.toml', firstStatus, firstStatus, 1);
    }
    // EtcFileController writes the file, then records its status
    const statusAt = writeAt + Math.min(this.timing.statusAfterWrite(), ordered114 ? (startAt - writeAt) / 4 : Infinity);
    const rendered = renderCriFiles(n.version, effectiveAuth(n.machineConfig));
    this.atTime(writeAt, () => {
      for (const [path, content] of rendered) {
        n.files.set(path, { content, mtimeMs: writeAt, mode: '-rw-------', label: ETC_LABEL });
        const again = rewritten && path === CRI_TOML;
        this.status(path.slice('/etc/'.length), again ? firstStatus : statusAt, statusAt, again ? 2 : 1);
      }
    });

    const c = n.containerd;
    c.events = [];
    c.servicePid = undefined;
    c.serviceResource = undefined;
    c.pid = 0;
    c.state = 'Initialized';
    c.health = { ...UNKNOWN };
    c.listed = false;
    if (ordered114) this.runAfterStatus114(statusAt, startAt);
    else if (startAllAt !== undefined) this.runAfterStatus114(startAllAt, startAt);
    else this.runFromBoot(bootAt, startAt);
    this.atTime(startAt, () => {
      this.launch(startAt, loaded);
      // the first health check, one second after the launch (health.DefaultSettings), of this
      // containerd only: a restart in between (criRestartAfterBoot) has checks of its own
      const pid = c.pid;
      const healthAt = startAt + 1000;
      if (healthAt <= this.now()) this.healthy(healthAt);
      else this.later(healthAt - this.now(), () => c.pid === pid && this.healthy(this.now()));
    });

    const all = this.bootServices(bootAt);
    const late = new Set(['kubelet', 'etcd', 'trustd']);
    if (startAllAt === undefined) {
      this.otherServices = all;
      return;
    }
    this.otherServices = all.filter((s) => !late.has(s.id));
    this.atTime(startAllAt, () => {
      const at = this.now();
      const loadedNow = all.filter((s) => late.has(s.id)).map((s) => ({ ...s, events: s.events.map((e) => ({ ...e, ts: at })) }));
      this.otherServices = [...this.otherServices, ...loadedNow].sort((x, y) => (x.id < y.id ? -1 : 1));
    });
  }

  /**
   * ≤ 1.13 (and layouts 1.14 cannot produce, kept for tests that pin them): the sequencer starts cri
   * early in the boot, and service_runner.go logs Starting → Waiting for the condition (network) →
   * Running pre state → Creating service runner → launch, on cri's own schedule, not the file's.
   */
  private runFromBoot(bootAt: number, startAt: number): void {
    const [waitAll, waitNet] = this.waitingMessages();
    const pre = this.timing.preLaunch();
    const startedAt = Math.min(bootAt + 1500, startAt - pre.preState - 2000);
    this.loadAt(startedAt);
    this.pushAt('Waiting', waitAll, startedAt + 0.4);
    this.pushAt('Waiting', waitNet, startedAt + 1000);
    this.pushAt('Preparing', 'Running pre state', startAt - pre.preState);
    this.pushAt('Preparing', 'Creating service runner', startAt - pre.runner);
  }

  /**
   * machined loads cri (LoadAndStart: listed by ServiceList from then on) and logs "Starting service"
   * at once (service_runner.go).
   */
  private loadAt(ts: number): void {
    this.atTime(ts, () => {
      this.node.containerd.listed = true;
      this.push('Starting', 'Starting service', ts);
    });
  }

  /**
   * 1.14: nothing starts cri at boot but cri.ServiceController (controllers/cri/service.go), once the
   * EtcFileStatus of cri.toml and base-spec.json both exist; it loads and starts the service, so its
   * whole run is logged AFTER cri.toml's status: Starting, Waiting for the full condition (cri.go
   * Condition: volumes, network, the /etc files), Running pre state, Creating service runner, launch.
   * With the conditions already holding that takes a few ms (timing.ts); a longer gap is time spent
   * waiting (for the network), whose description waitFor logs again once it changes. After a reboot
   * on ≤ 1.13 the same run follows StartAllServices' load (`statusAt` is then the load): the
   * conditions hold by then too.
   */
  private runAfterStatus114(statusAt: number, startAt: number): void {
    const [waitAll, waitNet] = this.waitingMessages();
    const run = this.timing.bootRun114();
    const pre = this.timing.preLaunch();
    const room = startAt - statusAt;
    const natural = run.preState + pre.preState;
    const k = room < natural ? room / natural : 1;
    this.loadAt(statusAt + run.starting * k);
    this.pushAt('Waiting', waitAll, statusAt + run.waiting * k);
    if (startAt - pre.preState - (statusAt + run.waiting) > 1000) this.pushAt('Waiting', waitNet, statusAt + run.waiting + 1000);
    this.pushAt('Preparing', 'Running pre state', startAt - pre.preState * k);
    this.pushAt('Preparing', 'Creating service runner', startAt - pre.runner * k);
  }

  private status(id: string, created: number, updated: number, version: number): void {
    this.node.etcFileStatus.set(id, { version, created, updated, specVersion: String(version) });
  }

  private bootServices(bootAt: number): OtherService[] {
    const ok = (id: string, afterMs: number): OtherService => ({
      id,
      state: 'Running',
      health: { ...HEALTHY },
      events: [{ state: 'Running', msg: 'Health check successful', ts: bootAt + afterMs }],
    });
    const goroutine = (id: string, afterMs: number): OtherService => ({
      id,
      state: 'Running',
      health: { unknown: true, healthy: false, lastMessage: '' },
      events: [{ state: 'Running', msg: 'Service started as goroutine', ts: bootAt + afterMs }],
    });
    const list = [
      ok('apid', 4200),
      goroutine('auditd', 1100),
      ok('containerd', 2600),
      goroutine('dashboard', 1300),
      ok('kubelet', 24500),
      goroutine('machined', 900),
      goroutine('syslogd', 1000),
      ok('udevd', 1900),
    ];
    if (this.node.role === 'control-plane') list.push(ok('etcd', 19800), ok('trustd', 4400));
    return list.sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  /**
   * The criRestartAfterBoot fault: base-spec.json written again (its status's specVersion bumped), so
   * cri.ServiceController stops and starts cri, events stamped as their timers fire; the new
   * containerd's health is unknown until the first check one second after the launch
   * (health.DefaultSettings: InitialDelay 1 s, Period 5 s, Timeout 500 ms), and the first
   * `failingChecks` checks time out. cri.toml is not touched: the new containerd reads the same file.
   */
  private rerenderBaseSpec(fault: CriRestartAfterBoot): void {
    const n = this.node;
    const writeAt = this.now();
    const file = n.files.get(BASE_SPEC);
    if (file) n.files.set(BASE_SPEC, { ...file, mtimeMs: writeAt });
    const st = n.etcFileStatus.get('cri/conf.d/base-spec.json');
    const statusAt = writeAt + this.timing.statusAfterWrite();
    this.status('cri/conf.d/base-spec.json', st?.created ?? statusAt, statusAt, (st?.version ?? 0) + 1);
    const gap = this.opts.criRestartMs ?? this.timing.restartGap114();
    const c = n.containerd;
    const at = this.criStopStart(writeAt, gap, () => this.launch(this.now(), effectiveAuth(n.machineConfig)));
    const failing = fault.failingChecks ?? 0;
    if (failing > 0) {
      at(gap + 1000, () => {
        if (c.state !== 'Running') return;
        const msg = 'rpc error: code = DeadlineExceeded desc = context deadline exceeded';
        c.health = { unknown: false, healthy: false, lastMessage: msg };
        this.push('Running', `Health check failed: ${msg}`, this.now());
      });
    }
    at(gap + 1000 + failing * 5000, () => this.healthy(this.now()));
  }

  // --- machine config ----------------------------------------------------------------------------

  /** Re-renders the CRI files; only files whose bytes change are written (UpdateFile/AtomicUpdate). */
  private rerender(): boolean {
    const n = this.node;
    const at = this.now();
    let criTomlChanged = false;
    for (const [path, content] of renderCriFiles(n.version, effectiveAuth(n.machineConfig))) {
      const cur = n.files.get(path);
      if (cur && cur.content === content) continue;
      n.files.set(path, { content, mtimeMs: at, mode: '-rw-------', label: ETC_LABEL });
      const id = path.slice('/etc/'.length);
      const st = n.etcFileStatus.get(id);
      const statusAt = at + this.timing.statusAfterWrite();
      if (st) this.status(id, st.created, statusAt, st.version + 1);
      else this.status(id, statusAt, statusAt, 1);
      if (path === CRI_TOML) criTomlChanged = true;
    }
    return criTomlChanged;
  }

  /**
   * ApplyConfiguration in an immediate mode (no-reboot, auto→no-reboot, try). It returns once the
   * MachineConfig resource is set (SetConfig); the controllers render and write the CRI files after
   * it returned (timing.ts), and a v1.14 cri restart follows that write.
   */
  applyNow(next: MachineConfigState): void {
    const n = this.node;
    if (configFingerprint(next) !== configFingerprint(n.machineConfig)) {
      n.machineConfig = { ...next, version: n.machineConfig.version + 1 };
    }
    const write = () => {
      const criChanged = this.rerender();
      // v1.14 cri.ServiceController restarts cri when cri.toml's spec version changes; ≤1.13 never does.
      if (criChanged && n.version === '1.14') this.scheduleCriRestart(n.files.get(CRI_TOML)!.mtimeMs);
    };
    if (this.held && !this.held.write) this.held = { ...this.held, write, generation: this.generation };
    else this.later(this.applyTiming.writeAfterApply(), write);
  }

  /** Arms the held-write fault (HeldWriteMatch) for the next immediate apply. */
  holdNextWrite(match: HeldWriteMatch): void {
    this.held = { match, seen: 0, generation: this.generation };
  }

  /** Both front doors (talosctl, the API) call this before answering a read of this node. */
  answering(command: string, target: string | undefined): void {
    const h = this.held;
    if (!h?.write || h.match.command !== command) return;
    if (h.match.target !== undefined && h.match.target !== target) return;
    if (++h.seen < (h.match.nth ?? 1)) return;
    this.held = undefined;
    // a reboot since the apply dropped the pending write (the new boot renders the config itself)
    if (h.generation === this.generation) h.write();
  }

  /** `--mode=try`: the previous config comes back when the try timeout passes (RollbackToConfigAfter). */
  revertAfter(prev: MachineConfigState, ms: number): void {
    this.cancelRollback();
    const armed = { prev };
    this.rollback = armed;
    this.later(ms, () => {
      if (this.rollback !== armed) return;
      this.rollback = undefined;
      this.applyNow(prev);
    });
  }

  /**
   * CancelConfigRollbackTimeout: a pending try-mode rollback will not happen. machined calls it at the
   * top of every ApplyConfiguration whose mode is not TRY, a dry run included (v1alpha1_server.go).
   */
  cancelRollback(): void {
    this.rollback = undefined;
  }

  /** Whether a try-mode rollback is pending. */
  rollbackPending(): boolean {
    return this.rollback !== undefined;
  }

  applyStaged(next: MachineConfigState): void {
    this.stagedConfig = next;
  }

  patch(patches: Patch[]): MachineConfigState {
    return applyPatches(this.node.machineConfig, patches);
  }

  /**
   * write → status update → cri.ServiceController → stop → start, the new containerd launching
   * `criRestartMs` (pinned) or 50–800 ms (drawn) after the write; events in that order, each stamped
   * when its timer fires (so a loaded machine stretches the chain, as it would a real one).
   */
  private scheduleCriRestart(writeAt: number): void {
    if (this.restartPending) return;
    this.restartPending = true;
    const gap = this.opts.criRestartMs ?? this.timing.restartGap114();
    const at = this.criStopStart(writeAt, gap, () => {
      this.restartPending = false;
      this.launch(this.now(), effectiveAuth(this.node.machineConfig));
    });
    at(gap + 1000, () => this.healthy(this.now()));
  }

  /**
   * The stop → start chain of a cri restart that Talos runs after a write at `writeAt` (1.14's
   * cri.ServiceController): SIGTERM, finished, Starting, Waiting, the pre-launch events, then `launch`
   * `gap` ms after the write; each event stamped when its timer fires. Returns the scheduler, so a
   * caller adds what follows the launch (health checks) on the same time axis.
   */
  private criStopStart(writeAt: number, gap: number, launch: () => void): (offset: number, fn: () => void) => void {
    const pre = this.timing.preLaunch();
    const c = this.node.containerd;
    const at = (offset: number, fn: () => void) => this.later(writeAt + offset - this.now(), fn);
    at(gap * 0.15, () => {
      c.health = { ...NOT_RUNNING };
      this.push('Stopping', `Sending SIGTERM to ${CRI_PROCESS}`, this.now());
    });
    at(gap * 0.35, () => {
      c.pid = 0;
      c.servicePid = undefined;
      this.push('Finished', 'Service finished successfully', this.now());
    });
    at(gap * 0.37, () => {
      c.health = { ...UNKNOWN };
      this.push('Starting', 'Starting service', this.now());
    });
    at(gap * 0.38, () => this.push('Waiting', this.waitingMessages()[0], this.now()));
    at(gap - pre.preState, () => this.push('Preparing', 'Running pre state', this.now()));
    at(gap - pre.runner, () => this.push('Preparing', 'Creating service runner', this.now()));
    at(gap, launch);
    return at;
  }

  // --- reboot ------------------------------------------------------------------------------------

  /** The machine goes down now and is back (Ready to answer) after rebootMs. */
  reboot(): Promise<void> {
    const n = this.node;
    const fault = this.nextRebootFault;
    this.nextRebootFault = undefined;
    // the sequence failed before anything stopped: nothing happens, ever
    if (fault === 'ignored') return new Promise<void>(() => undefined);
    this.generation++;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.restartPending = false;
    n.up = false;
    const c = n.containerd;
    c.pid = 0;
    c.servicePid = undefined;
    c.serviceResource = undefined;
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
      this.later(this.opts.rebootMs, () => {
        this.comeBack();
        this.rebooting = undefined;
        resolve();
      });
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
    const gap = this.bootGap();
    const ordered114 = n.version === '1.14' && gap > 0;
    let loadAt: number;
    let writeAt: number;
    if (this.opts.criUnlistedMs !== undefined) {
      loadAt = up + this.opts.criUnlistedMs;
      writeAt = ordered114 ? loadAt : loadAt + this.bootTiming.runAfterLoad() - gap;
    } else {
      writeAt = up + (this.opts.configAfterAnswerMs ?? this.bootTiming.configAfterAnswer());
      loadAt = ordered114 ? writeAt : writeAt + gap - this.bootTiming.runAfterLoad();
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
    this.boot({ bootAt, writeAt, startAt, loaded: gap < 0 ? {} : effectiveAuth(n.machineConfig), startAllAt: loadAt });
    n.up = true;
    this.atTime(startAt, () => {
      try {
        this.opts.kube.nodeUp(n.name, n.bootID);
      } catch {
        // see nodeDown
      }
      // the fault counts from the boot's launch: the restart comes while the node is coming up
      const fault = this.restartAfterBoot;
      if (fault) this.later(fault.afterUpMs, () => this.rerenderBaseSpec(fault));
    });
    this.atTime(startAt + 1000, () => this.markReady());
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
  listing(): Map<string, { dir: boolean; file?: SimFile; mtimeMs: number; mode: string; label: string }> {
    const n = this.node;
    const out = new Map<string, { dir: boolean; file?: SimFile; mtimeMs: number; mode: string; label: string }>();
    const bootWrite = n.bootedAtMs + 100;
    for (const d of ['/', '/etc', '/etc/cri', CONF_D, `${CONF_D}/hosts`]) {
      out.set(d, {
        dir: true,
        mtimeMs: d === '/' ? IMAGE_BUILD_MS : bootWrite,
        mode: d === `${CONF_D}/hosts` ? 'drwx------' : 'drwxr-xr-x',
        label: d === '/' ? 'system_u:object_r:root_t:s0' : ETC_LABEL,
      });
    }
    for (const [p, f] of n.files) out.set(p, { dir: false, file: f, mtimeMs: f.mtimeMs, mode: f.mode, label: f.label });
    return out;
  }

  /** Virtual procfs reads. */
  procFile(path: string): string | undefined {
    const n = this.node;
    if (path === '/proc/sys/kernel/random/boot_id') return `${n.bootID}\n`;
    if (path === '/proc/uptime') {
      const up = (this.now() - n.bootedAtMs) / 1000;
      return `${up.toFixed(2)} ${(up * 1.7).toFixed(2)}\n`;
    }
    const m = /^\/proc\/(\d+)\/stat$/.exec(path);
    if (m && Number(m[1]) === n.containerd.pid && n.containerd.pid > 0) {
      const ticks = Math.round((n.containerd.startedAtMs - n.bootedAtMs) / 10);
      const f = [
        m[1],
        '(containerd)',
        'S',
        '1',
        m[1],
        m[1],
        '0',
        '-1',
        '4194560',
        '41234',
        '0',
        '12',
        '0',
        '1204',
        '388',
        '0',
        '0',
        '20',
        '0',
        '31',
        '0',
        String(ticks),
        '2354233344',
        '15360',
        '18446744073709551615',
        '1',
        '1',
        '0',
        '0',
        '0',
        '0',
        '0',
        '0',
        '2143420159',
        '0',
        '0',
        '0',
        '17',
        '1',
        '0',
        '0',
        '0',
        '0',
        '0',
        '0',
        '0',
        '0',
        '0',
        '0',
        '0',
        '0',
        '0',
      ];
      return `${f.join(' ')}\n`;
    }
    return undefined;
  }
}
