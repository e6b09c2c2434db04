// The cri service (containerd) of one simulated machine: its launches and what each one loaded, its
// health checks, its event history as `talosctl service cri` and ServiceList show it, and the runs of
// service_runner.go that lead to a launch: at boot (≤ 1.13 on cri's own schedule, 1.14 after
// cri.toml's EtcFileStatus) and the 1.14 stop → start after a rewrite.
import { randomInt } from 'node:crypto';
import { goQuoteSlice } from './format.js';
import type { NodeTimers } from './nodeTimers.js';
import type { Timing } from './timing.js';
import type { AuthFields, ServiceHealth, SimTalosNode } from './types.js';

export const MAX_EVENTS = 64;

const CRI_ARGS = ['/bin/containerd', '--address', '/run/containerd/containerd.sock', '--config', '/etc/cri/containerd.toml'];
export const CRI_PROCESS = `Process(${goQuoteSlice(CRI_ARGS)})`;
// cri's volumes as the Waiting event names them: services/cri.go Volumes() plus constants.Overlays
// (v1.13: the containerd state under /var/lib/containerd and four overlays; v1.14: the `CRI` volume, /opt only)
const VOLUMES_113 =
  '/var/lib, /var/lib/cni, /var/lib/containerd, /var/run, /var/run/lock, /etc/cni, /etc/kubernetes, /usr/libexec/kubernetes, /opt';
const VOLUMES_114 = '/var/lib, /var/lib/cni, CRI, /var/run, /var/run/lock, /opt';
const ETC_FILES_COND = '/etc files ["machine-id" "cri/conf.d/cri.toml" "cri/conf.d/base-spec.json"] to be ready';

export const HEALTHY: ServiceHealth = { unknown: false, healthy: true, lastMessage: '' };
export const UNKNOWN: ServiceHealth = { unknown: true, healthy: false, lastMessage: 'Unknown' };
const NOT_RUNNING: ServiceHealth = { unknown: false, healthy: false, lastMessage: 'service not running' };

export class CriService {
  private nextPid = randomInt(1700, 2200);
  private restartPending = false;
  /** checks held (holdHealth): the last one due, run on releaseHealth */
  private healthHeld = false;
  private heldCheck?: () => void;

  constructor(
    private readonly node: SimTalosNode,
    private readonly timers: NodeTimers,
    private readonly timing: Timing,
    /** pin the 1.14 restart (write → new launch) instead of drawing it from Timing */
    private readonly criRestartMs: number | undefined,
  ) {}

  private now(): number {
    return this.timers.now();
  }

  private push(state: string, msg: string, ts: number): void {
    const c = this.node.containerd;
    c.events.push({ state, msg, ts });
    if (c.events.length > MAX_EVENTS) c.events.splice(0, c.events.length - MAX_EVENTS);
    c.state = state;
    if (state !== 'Running') c.serviceResource = undefined;
  }

  /** An event stamped `ts`, shown once `ts` has come. */
  private pushAt(state: string, msg: string, ts: number): void {
    this.timers.atTime(ts, () => this.push(state, msg, ts));
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
  launch(at: number, loaded: Record<string, AuthFields>): void {
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

  healthy(at: number): void {
    const c = this.node.containerd;
    if (c.state !== 'Running') return;
    if (this.healthHeld) {
      this.heldCheck = () => this.healthy(this.now());
      return;
    }
    c.health = { ...HEALTHY };
    this.push('Running', 'Health check successful', at);
    if (c.serviceResource) {
      c.serviceResource = { ...c.serviceResource, version: c.serviceResource.version + 1, updated: at, healthy: true, unknown: false };
    }
  }

  /**
   * The health checks do not answer until releaseHealth: the service's health stays as it is (a
   * containerd just launched: "?", LAST HEALTH MESSAGE Unknown). The first check comes one second
   * after a launch; a test that looks at the service before it holds the check there instead of
   * racing that second against a loaded runner's pace. On release the check held last passes at once.
   */
  holdHealth(): void {
    this.healthHeld = true;
  }

  releaseHealth(): void {
    this.healthHeld = false;
    const check = this.heldCheck;
    this.heldCheck = undefined;
    if (check) return check();
    // released before its first check came (the test looked within that second, as a fast machine
    // does): the check answers now, as one held would, instead of a second later than the release
    if (this.node.containerd.state === 'Running' && this.node.containerd.health.unknown) this.healthy(this.now());
  }

  /** Health probe transitions that push the launch event out of the 64-event window. */
  flapHealth(from: number, to: number): void {
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

  /** A fresh boot: machined's history of cri restarts from nothing, cri not yet loaded. */
  resetForBoot(): void {
    const c = this.node.containerd;
    c.events = [];
    c.servicePid = undefined;
    c.serviceResource = undefined;
    c.pid = 0;
    c.state = 'Initialized';
    c.health = { ...UNKNOWN };
    c.listed = false;
  }

  /** The machine went down: no containerd, no restart to come. */
  stopForReboot(): void {
    this.restartPending = false;
    const c = this.node.containerd;
    c.pid = 0;
    c.servicePid = undefined;
    c.serviceResource = undefined;
  }

  /** The boot's launch at `startAt`, holding `loaded`, and its first health check. */
  launchAtBoot(startAt: number, loaded: Record<string, AuthFields>): void {
    const c = this.node.containerd;
    this.timers.atTime(startAt, () => {
      this.launch(startAt, loaded);
      // the first health check, one second after the launch (health.DefaultSettings), of this
      // containerd only: a restart in between (criRestartAfterBoot) has checks of its own
      const pid = c.pid;
      const healthAt = startAt + 1000;
      if (healthAt <= this.now()) this.healthy(healthAt);
      else this.timers.atTime(healthAt, () => c.pid === pid && this.healthy(this.now()));
    });
  }

  /**
   * ≤ 1.13 (and layouts 1.14 cannot produce, kept for tests that pin them): the sequencer starts cri
   * early in the boot, and service_runner.go logs Starting → Waiting for the condition (network) →
   * Running pre state → Creating service runner → launch, on cri's own schedule, not the file's.
   */
  runFromBoot(bootAt: number, startAt: number): void {
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
    this.timers.atTime(ts, () => {
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
  runAfterStatus114(statusAt: number, startAt: number): void {
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

  // --- restarts (1.14) ---------------------------------------------------------------------------

  /**
   * write → status update → cri.ServiceController → stop → start, the new containerd launching
   * `criRestartMs` (pinned) or 50–800 ms (drawn) after the write; events in that order, each stamped
   * when its timer fires (so a loaded machine stretches the chain, as it would a real one).
   */
  scheduleRestart(writeAt: number, loaded: () => Record<string, AuthFields>): void {
    if (this.restartPending) return;
    this.restartPending = true;
    const gap = this.criRestartMs ?? this.timing.restartGap114();
    const at = this.stopStart(writeAt, gap, () => {
      this.restartPending = false;
      this.launch(this.now(), loaded());
    });
    at(gap + 1000, () => this.healthy(this.now()));
  }

  /**
   * The criRestartAfterBoot fault's restart, after base-spec.json was written again at `writeAt`: the
   * new containerd's health is unknown until the first check one second after the launch
   * (health.DefaultSettings: InitialDelay 1 s, Period 5 s, Timeout 500 ms), and the first
   * `failingChecks` checks time out. cri.toml is not touched: the new containerd reads the same file.
   */
  restartWithFailingChecks(writeAt: number, failing: number, loaded: () => Record<string, AuthFields>): void {
    const gap = this.criRestartMs ?? this.timing.restartGap114();
    const c = this.node.containerd;
    const at = this.stopStart(writeAt, gap, () => this.launch(this.now(), loaded()));
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

  /**
   * The stop → start chain of a cri restart that Talos runs after a write at `writeAt` (1.14's
   * cri.ServiceController): SIGTERM, finished, Starting, Waiting, the pre-launch events, then `launch`
   * `gap` ms after the write; each event stamped when its timer fires. Returns the scheduler, so a
   * caller adds what follows the launch (health checks) on the same time axis.
   */
  private stopStart(writeAt: number, gap: number, launch: () => void): (offset: number, fn: () => void) => void {
    const pre = this.timing.preLaunch();
    const c = this.node.containerd;
    const at = (offset: number, fn: () => void) => this.timers.atTime(writeAt + offset, fn);
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
}
