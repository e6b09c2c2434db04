// TalosSim: the Talos half of the cluster twin. It owns the simulated machines, serves the fake
// talosctl executable (sim/bin/talosctl) over loopback, records every call, and answers the
// Kubernetes half's simulated kubelet when it pulls images through containerd.
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ImagePullHooks, KubeNodeHooks } from '../types.js';
import type { CommandContext, Out, RunRequest, SimServices } from './commands/context.js';
import { API_COMMANDS, API_MUTATIONS, APPLY_CONFIGURATION, COMMANDS, GRPC_CODES, isMutating, names } from './commandTable.js';
import { EtcdMembership } from './etcdMembership.js';
import { credentialFor, parseImageRef, registryFor, unauthorized } from './commands/image.js';
import { clusterCerts, talosconfigYaml, type ApiCertificate, type ClusterCerts } from './api/certs.js';
import { startApiServer, type ApiCallRecord, type ApiServer, type Route } from './api/server.js';
import { unavailableError } from './format.js';
import { loadPatch, parseConfigText, sameAuth } from './machineconfig.js';
import { startFrontDoor, type FrontDoor } from './frontDoor.js';
import { startServer } from './server.js';
import type { LocalRecord, SimServer } from './server.js';
import type { HeldWriteMatch } from './configApply.js';
import { NodeRuntime } from './state.js';
import { nodeSeed, seededRandom } from './timing.js';
import type { AddNodeSpec, AuthFields, CommandRecord, FailAction, FailMatch, SimEtcdMember, SimTalosNode } from './types.js';

/** A call held by TalosSim.holdNextCall: `reached` once it arrived; `release()` lets it be served. */
export interface HeldCall {
  reached: Promise<void>;
  release(): void;
}

export interface TalosSimOptions {
  kube: KubeNodeHooks;
  /** real ms a reboot takes (default 1500) */
  rebootMs?: number;
  /** pin the Talos 1.14 restart (cri.toml write → new launch); default: drawn from 50–800 ms per restart */
  criRestartMs?: number;
  /** pin the boot gap (launch − cri.toml write) of every node; default: drawn per node and version (timing.ts) */
  bootGapMs?: number;
  /**
   * pin how long a rebooted node answers (new boot id) before it lists cri; Infinity: never. Default:
   * follows from the drawn write of the CRI files (configAfterAnswerMs) and the version's boot gap (timing.ts)
   */
  criUnlistedMs?: number;
  /**
   * pin how long a rebooted node answers (new boot id) before machined writes the CRI files of its
   * rebuilt /etc; default: drawn per reboot from 0.3–1.5 s (timing.ts). Ignored when criUnlistedMs is pinned.
   */
  configAfterAnswerMs?: number;
  /** pin the millisecond of the second at which each reboot writes cri.toml (0–999): keeps a pinned sub-second boot gap inside one second, where talosctl's second-rounded instants cannot order it (or across one, where they can) */
  bootWriteMsOfSecond?: number;
  /** seeds every node's timing generator (default 1: runs are reproducible; vary it to explore) */
  seed?: number;
  /** where to write the talosconfig (default: a new temporary directory, removed on stop) */
  dir?: string;
  /**
   * Serve the Talos API (gRPC, mutual TLS) on the same endpoint and put the client certificate in
   * the talosconfig (default true). false: a talosconfig without credentials, as a context using
   * Omni's signed requests has, so the action reads through talosctl.
   */
  api?: boolean;
  /** the certificate the API presents (default `valid`; see ApiCertificate) */
  apiCertificate?: ApiCertificate;
  /**
   * Put the fake talosctl on env()'s PATH. Default: only when the talosconfig has no client
   * certificate (api: false), the one case besides a patch of another form that needs talosctl; a
   * twin with the API runs with no talosctl anywhere on PATH unless a test asks for it.
   */
  talosctl?: boolean;
}

interface FailRule {
  match: FailMatch;
  action: FailAction;
  left: number;
}

export class TalosSim {
  readonly talosconfigPath: string;
  readonly binDir: string;
  readonly commands: CommandRecord[] = [];
  /** every Talos API call the twin answered */
  readonly apiCalls: ApiCallRecord[] = [];
  private readonly bodyForms = new Map<NodeRuntime, 'string' | 'document'>();
  private readonly applyWarnings = new Map<NodeRuntime, string[]>();
  /** machines whose next apply another writer overwrites right after it answered, and with what (overwriteNextApply) */
  private readonly overwrittenApplies = new Map<NodeRuntime, ((applied: string) => string) | undefined>();
  /** the certificates of the twin's cluster (CA, apid, clients by role) */
  readonly certs?: ClusterCerts;
  readonly imagePull: ImagePullHooks;

  private readonly runtimes: NodeRuntime[] = [];
  private readonly registry = new Map<string, AuthFields>();
  /** etcd's member list: filled by control planes as they are added, then changed only on purpose */
  private readonly etcd = new EtcdMembership();
  private readonly failRules: FailRule[] = [];
  private readonly services: SimServices;
  private readonly unknownTypes = new Map<NodeRuntime, Set<string>>();
  private api?: ApiServer;
  /** servers replaced by a re-issued certificate, still carrying the connections opened before it */
  private readonly retiredApis: ApiServer[] = [];

  private constructor(
    private readonly opts: Required<
      Omit<
        TalosSimOptions,
        | 'dir'
        | 'api'
        | 'apiCertificate'
        | 'criRestartMs'
        | 'bootGapMs'
        | 'criUnlistedMs'
        | 'configAfterAnswerMs'
        | 'bootWriteMsOfSecond'
        | 'talosctl'
      >
    > &
      Pick<TalosSimOptions, 'criRestartMs' | 'bootGapMs' | 'criUnlistedMs' | 'configAfterAnswerMs' | 'bootWriteMsOfSecond'>,
    private readonly server: SimServer,
    private readonly dir: string,
    private readonly ownsDir: boolean,
    certs: ClusterCerts | undefined,
    private readonly talosctlOnPath: boolean,
    private readonly frontDoor: FrontDoor,
  ) {
    this.binDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'bin');
    this.talosconfigPath = join(dir, 'talosconfig');
    this.certs = certs;
    // The endpoint is the loopback address, which the valid apid certificate names among the
    // machine's addresses (the `wrong-san` one does not, as through a load balancer or a tunnel).
    writeFileSync(
      this.talosconfigPath,
      talosconfigYaml({ context: 'sim', endpoints: [`127.0.0.1:${server.port}`], ca: certs?.ca.crt, client: certs?.client('os:admin') }),
    );
    this.services = {
      rebootMs: opts.rebootMs,
      controlPlanes: () => this.runtimes.filter((rt) => rt.node.role === 'control-plane'),
      etcdMembers: (rt) => this.etcd.seenBy(rt),
      removeEtcdMember: (id) => this.removeEtcdMember(id),
      registryCredential: (host) => this.registry.get(host),
    };
    this.imagePull = { pull: (nodeName, image) => this.kubeletPull(nodeName, image) };
  }

  static async start(opts: TalosSimOptions): Promise<TalosSim> {
    const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'talos-sim-'));
    // eslint-disable-next-line prefer-const -- assigned once the hooks that read it exist
    let sim: TalosSim | undefined;
    const certs = opts.api === false ? undefined : clusterCerts();
    const server = await startServer(
      {
        run: (req, out, signal) => (sim as TalosSim).run(req, out, signal),
        record: (rec) => sim?.recordLocal(rec),
      },
      certs ? (socket) => sim?.injectApi(socket) : undefined,
    );
    const frontDoor = await startFrontDoor();
    sim = new TalosSim(
      {
        kube: opts.kube,
        rebootMs: opts.rebootMs ?? 1500,
        criRestartMs: opts.criRestartMs,
        bootGapMs: opts.bootGapMs,
        criUnlistedMs: opts.criUnlistedMs,
        configAfterAnswerMs: opts.configAfterAnswerMs,
        bootWriteMsOfSecond: opts.bootWriteMsOfSecond,
        seed: opts.seed ?? 1,
      },
      server,
      dir,
      opts.dir === undefined,
      certs,
      opts.talosctl ?? !certs,
      frontDoor,
    );
    if (certs) sim.api = sim.startApi({ ...certs, server: certs.serverAs(opts.apiCertificate ?? 'valid') });
    const exe = join(sim.binDir, 'talosctl');
    // A checkout or copy may lose the executable bit; PATH lookup needs it.
    if ((statSync(exe).mode & 0o111) === 0) chmodSync(exe, 0o755);
    return sim;
  }

  /**
   * TALOSCONFIG, PATH with the fake talosctl first when it is on PATH (see TalosSimOptions.talosctl),
   * and TALOSCTL_SIM_FRONT_DOOR, where the fake talosctl (a bash script) has this process run the
   * client instead of starting Node for each call (frontDoor.ts)
   */
  env(): Record<string, string> {
    const path = process.env.PATH ?? '';
    return {
      PATH: this.talosctlOnPath ? `${this.binDir}:${path}` : path,
      TALOSCONFIG: this.talosconfigPath,
      TALOSCTL_SIM_FRONT_DOOR: this.frontDoor.address,
    };
  }

  /** fake talosctl calls run in this process through the front door, and those it handed back to a Node process of their own */
  get frontDoorCalls(): { inProcess: number; handedBack: number } {
    return { inProcess: this.frontDoor.calls, handedBack: this.frontDoor.handedBack };
  }

  /** the talosconfig endpoint (`127.0.0.1:PORT`), serving talosctl's HTTP and the Talos API */
  get endpoint(): string {
    return `127.0.0.1:${this.server.port}`;
  }

  /** TLS connections opened to the Talos API so far (one per client connection, however many calls) */
  get apiConnections(): number {
    return this.server.tlsConnections;
  }

  /**
   * The endpoint becomes another machine presenting `kind`'s certificate (as when the endpoint node
   * reboots and the address answers from elsewhere): the API connections open now are dropped, and
   * the clients' reconnections meet the new certificate.
   */
  presentApiCertificate(kind: ApiCertificate): void {
    if (!this.certs || !this.api) throw new Error('the twin serves no Talos API (api: false)');
    const old = this.api;
    this.api = this.startApi({ ...this.certs, server: this.certs.serverAs(kind) });
    old.close();
  }

  /**
   * The endpoint's address moves to another machine, as a VIP moves to another control plane while
   * the one holding it reboots: the API connections open now are dropped, and the machine now behind
   * the address presents its apid certificate, of the cluster CA, naming its own addresses but not
   * the moved one (`wrong-san`), until Talos re-issues it naming that address too. Talos issues apid's
   * certificate for the machine's addresses (secrets.APICertSANsController follows the node's addresses,
   * secrets.APIController re-issues on a change) and apid serves every new handshake with the current one
   * (internal/app/apid/pkg/provider), so the clients' reconnections meet the refused certificate, then the
   * good one. Re-issued as the `dials`-th new connection after the move has met the refused certificate
   * (that one still meets it): counted in the clients' dials, not in wall time, so a test about what the
   * client does once the certificate is good again does not depend on how fast a loaded machine gets
   * through the wrong one (a timer here stretched the refused window past the reads' deadlines).
   */
  moveApiAddress(reissueAfter: { dials: number }): void {
    this.presentApiCertificate('wrong-san');
    this.reissueAfterDials = { left: reissueAfter.dials };
  }

  /** moveApiAddress({ dials }): the dials still to meet the moved address's certificate */
  private reissueAfterDials: { left: number } | undefined;

  /** A TLS connection to the Talos API: served by the current apid, after counting it against a pending re-issue. */
  private injectApi(socket: Parameters<ApiServer['inject']>[0]): void {
    const api = this.api;
    const pending = this.reissueAfterDials;
    api?.inject(socket);
    if (pending && --pending.left <= 0) {
      this.reissueAfterDials = undefined;
      this.reissueApiCertificate('valid');
    }
  }

  /**
   * apid's certificate re-issued: new handshakes get `kind`'s certificate; the connections already
   * open stay as they are (apid's TLS config hands out the current certificate per handshake).
   */
  reissueApiCertificate(kind: ApiCertificate): void {
    if (!this.certs || !this.api) throw new Error('the twin serves no Talos API (api: false)');
    this.retiredApis.push(this.api);
    this.api = this.startApi({ ...this.certs, server: this.certs.serverAs(kind) });
  }

  /**
   * The next call of `method` (a full gRPC path) to `node` (any node when absent) arrives and is never
   * answered: the endpoint's connections drop while it is served, as when the machine behind the
   * endpoint goes away (a VIP moving off a control plane that reboots) or apid restarts. Whether the
   * request did anything is unknown to the client; its reconnection meets the same apid, certificate
   * and all. Counted in `droppedCalls`.
   */
  dropConnectionsDuringNext(method: string, node?: string): void {
    this.dropRules.push({ method, node });
  }

  /** the calls the connections dropped under (dropConnectionsDuringNext), in arrival order */
  readonly droppedCalls: Array<{ method: string; node: string }> = [];
  private readonly dropRules: Array<{ method: string; node?: string }> = [];

  /** Whether a rule for `method` (on `node` when it names one, by name or address) takes this call. */
  private ruleTakes(rule: { method: string; node?: string }, method: string, node: string): boolean {
    return rule.method === method && (rule.node === undefined || this.find(rule.node) === this.find(node));
  }

  /** dropsConnections of the API's hooks: a matching call takes its rule, and every API connection open now is dropped once its handler returned. */
  private dropsConnections(method: string, node: string): boolean {
    const i = this.dropRules.findIndex((r) => this.ruleTakes(r, method, node));
    if (i < 0) return false;
    this.dropRules.splice(i, 1);
    this.droppedCalls.push({ method, node });
    const api = this.api;
    if (api && this.apiCerts) {
      // apid anew behind the same address, with the certificate it had: the open connections go
      this.api = this.startApi(this.apiCerts);
      setImmediate(() => api.close());
    }
    return true;
  }

  /**
   * The next call of `method` (a full gRPC path) to `node` (any node when absent) whose request
   * `matches` arrives and waits, not yet served, until `release()`; `reached` settles when it arrived.
   * A test that must act while the action waits on that call (a cancellation between the drain and
   * the Reboot, while the boot id is read) acts on this event, not on a log line printed before the
   * call, which a loaded machine may let the action run past. A call its client cancelled while held is
   * never served (recorded CANCELLED), as apid would not answer one; `stop()` releases what is held.
   */
  holdNextCall(method: string, opts: { node?: string; matches?: (req: Record<string, unknown>) => boolean } = {}): HeldCall {
    let arrived!: () => void;
    let release!: () => void;
    const reached = new Promise<void>((r) => (arrived = r));
    const released = new Promise<void>((r) => (release = r));
    this.holdRules.push({ method, node: opts.node, matches: opts.matches, arrived, released });
    this.releaseOnStop.push(release);
    return { reached, release };
  }

  private readonly holdRules: Array<{
    method: string;
    node?: string;
    matches?: (req: Record<string, unknown>) => boolean;
    arrived: () => void;
    released: Promise<void>;
  }> = [];
  private readonly releaseOnStop: Array<() => void> = [];

  /** held of the API's hooks: a matching call takes its rule and waits for its release. */
  private held(method: string, node: string, req: Record<string, unknown>): Promise<void> | undefined {
    const i = this.holdRules.findIndex((r) => this.ruleTakes(r, method, node) && (r.matches?.(req) ?? true));
    if (i < 0) return undefined;
    const [rule] = this.holdRules.splice(i, 1);
    rule.arrived();
    return rule.released;
  }

  /** Makes a machine behave as a Talos release older than a COSI resource type (e.g. ServicePIDs, v1.13+). */
  forgetResourceType(nameOrIp: string, type: string): void {
    const rt = this.get(nameOrIp);
    this.unknownTypes.set(rt, new Set([...(this.unknownTypes.get(rt) ?? []), type]));
  }

  async stop(): Promise<void> {
    for (const release of this.releaseOnStop) release();
    for (const rt of this.runtimes) rt.dispose();
    for (const a of this.retiredApis) a.close();
    this.api?.close();
    await this.server.close();
    await this.frontDoor.close();
    if (this.ownsDir) rmSync(this.dir, { recursive: true, force: true });
  }

  addNode(spec: AddNodeSpec): void {
    if (this.runtimes.some((rt) => rt.node.name === spec.name || rt.node.ip === spec.ip)) {
      throw new Error(`node ${spec.name} (${spec.ip}) already exists`);
    }
    this.runtimes.push(
      new NodeRuntime(spec, {
        kube: this.opts.kube,
        rebootMs: this.opts.rebootMs,
        criRestartMs: this.opts.criRestartMs,
        bootGapMs: this.opts.bootGapMs,
        criUnlistedMs: this.opts.criUnlistedMs,
        configAfterAnswerMs: this.opts.configAfterAnswerMs,
        bootWriteMsOfSecond: this.opts.bootWriteMsOfSecond,
        random: seededRandom(nodeSeed(this.opts.seed, spec.name)),
        applyRandom: seededRandom(nodeSeed(this.opts.seed, `${spec.name}/apply`)),
        bootRandom: seededRandom(nodeSeed(this.opts.seed, `${spec.name}/boot`)),
      }),
    );
    const etcd = this.node(spec.name).etcd;
    // A control plane joins etcd under its hostname, advertising its address (Talos etcd service).
    if (etcd) this.etcd.join(etcd.memberId, spec.name, spec.ip, etcd.learner);
  }

  private find(nameOrIp: string): NodeRuntime | undefined {
    return this.runtimes.find((rt) => rt.node.name === nameOrIp || rt.node.ip === nameOrIp);
  }

  private get(nameOrIp: string): NodeRuntime {
    const rt = this.find(nameOrIp);
    if (!rt) throw new Error(`no simulated Talos node ${nameOrIp}`);
    return rt;
  }

  node(nameOrIp: string): SimTalosNode {
    return this.get(nameOrIp).node;
  }

  setRegistryCredential(host: string, fields: AuthFields): void {
    this.registry.set(host, { ...fields });
  }

  setEtcd(nameOrIp: string, s: { healthy?: boolean; learner?: boolean; alarm?: 'NOSPACE' | 'CORRUPT' | null; errors?: string }): void {
    const e = this.get(nameOrIp).node.etcd;
    if (!e) throw new Error(`${nameOrIp} is not a control-plane node`);
    if (s.healthy !== undefined) e.healthy = s.healthy;
    if (s.learner !== undefined) {
      e.learner = s.learner;
      this.etcd.setLearner(e.memberId, s.learner);
    }
    if (s.alarm !== undefined) e.alarms = s.alarm === null ? [] : [s.alarm];
    if (s.errors !== undefined) e.errors = s.errors;
  }

  /** etcd's member list as every healthy member answers it (a copy). */
  etcdMembers(): SimEtcdMember[] {
    return this.etcd.list();
  }

  /** See EtcdMembership.add: a member that no simulated machine runs. Returns its id (random unless given). */
  addEtcdMember(m: { id?: string; name: string; address: string; learner?: boolean; started?: boolean }): string {
    return this.etcd.add(m);
  }

  /** See EtcdMembership.lag: `nameOrIp`'s etcd answers the member list as it is now; `catchUp` ends the lag. */
  lagEtcdMemberList(nameOrIp: string, catchUp = false): void {
    this.etcd.lag(this.get(nameOrIp), catchUp);
  }

  /** `etcd remove-member`: false when no such member exists. */
  removeEtcdMember(id: string): boolean {
    if (!this.etcd.remove(id)) return false;
    // a removed member's etcd learns it was removed and stops (etcd: "the member has been permanently removed")
    for (const rt of this.runtimes) if (rt.node.etcd?.memberId === id) rt.node.etcd.healthy = false;
    return true;
  }

  setClock(nameOrIp: string, c: { offsetMs?: number; synced?: boolean; epoch?: number }): void {
    const clock = this.get(nameOrIp).node.clock;
    if (c.offsetMs !== undefined) clock.offsetMs = c.offsetMs;
    if (c.synced !== undefined) clock.synced = c.synced;
    if (c.epoch !== undefined) clock.epoch = c.epoch;
  }

  /**
   * Fault: the CRI write of the node's next patch waits for the `nth` matching read after the patch and
   * lands right before that read is answered, on either read path (see HeldWriteMatch).
   */
  holdNextWrite(nameOrIp: string, match: HeldWriteMatch): void {
    this.get(nameOrIp).holdNextWrite(match);
  }

  /**
   * Fault: the node's next reboot goes wrong. `ignored`: the Reboot is answered but the sequence
   * fails (machined logs it; the node never goes down); `stays-down`: the node goes down and never
   * comes back. Either way the reboot can only end at its deadline.
   */
  failNextReboot(nameOrIp: string, how: 'ignored' | 'stays-down'): void {
    this.get(nameOrIp).nextRebootFault = how;
  }

  /**
   * cri's health checks on the node do not answer until `releaseCriHealth` (then the check held last
   * passes at once): a containerd just launched shows health "?" and LAST HEALTH MESSAGE Unknown for as
   * long as a test needs to look, instead of the one second before its first check. `criHealthHeld` in
   * the node's spec holds them from its first boot.
   */
  holdCriHealth(nameOrIp: string): void {
    this.get(nameOrIp).holdCriHealth();
  }

  releaseCriHealth(nameOrIp: string): void {
    this.get(nameOrIp).releaseCriHealth();
  }

  /**
   * The node's next reboot goes down and stays down until `releaseReboot`, then comes back after
   * rebootMs as usual: a test that looks at the node while it is down does not race the reboot's clock.
   */
  holdNextReboot(nameOrIp: string): void {
    this.get(nameOrIp).nextRebootFault = 'held';
  }

  /** The held reboot (holdNextReboot) goes on: the node comes back rebootMs from now. */
  releaseReboot(nameOrIp: string): void {
    const n = this.get(nameOrIp);
    if (!n.releaseHeld) throw new Error(`${nameOrIp}: no held reboot to release`);
    n.releaseHeld();
    n.releaseHeld = undefined;
  }

  /**
   * The node's next reboot answers (apid, the new boot id) and then holds the window after the answer
   * open until `releaseBootWindow`: no CRI files of the rebuilt /etc written yet (1.13: the cri.toml
   * merged from the image's parts alone), cri not listed, kubelet, etcd and trustd not started, as a
   * boot slow to load its config would be. From the release the boot goes on with its pinned or drawn
   * window (criUnlistedMs, configAfterAnswerMs) counted from the release: a test that reads inside the
   * window with talosctl processes does not race the window's clock against a loaded machine's starts.
   */
  holdNextBootWindow(nameOrIp: string): void {
    this.get(nameOrIp).holdBootWindow = true;
  }

  /** The held boot window (holdNextBootWindow) goes on: its steps are laid out from now. */
  releaseBootWindow(nameOrIp: string): void {
    const n = this.get(nameOrIp);
    if (!n.releaseBootHeld) throw new Error(`${nameOrIp}: no held boot window to release`);
    n.releaseBootHeld();
    n.releaseBootHeld = undefined;
  }

  /**
   * An operator's `talosctl patch machineconfig --mode=try` on the node (NO_REBOOT now, the previous
   * config back after `timeoutMs`), as its own ApplyConfiguration in TRY mode would do it: the patch
   * text through talosctl's merge, then RollbackToConfigAfter. Returns once applied.
   */
  applyInTryMode(nameOrIp: string, patchText: string, timeoutMs: number): void {
    const rt = this.get(nameOrIp);
    const before = rt.node.machineConfig;
    const next = rt.patch([loadPatch(patchText)]);
    rt.revertAfter(before, timeoutMs);
    rt.applyNow(next);
  }

  /** Whether a `--mode=try` rollback is still pending on the node (any ApplyConfiguration but TRY cancels it). */
  tryRollbackPending(nameOrIp: string): boolean {
    return this.get(nameOrIp).rollbackPending();
  }

  stampConfigMarker(nameOrIp: string, revision: string): void {
    this.get(nameOrIp).stampMarker(revision);
  }

  /**
   * Every mutation sent, by talosctl or over the API (`via: 'api'`, argv `(api) <method>`, under the
   * talosctl command name: ApplyConfiguration as `patch`, Reboot as `reboot`), in the order received:
   * a test asserting "not rebooted" or "not patched" holds on either path. `commands` alone holds what
   * talosctl ran.
   */
  mutatingCommands(): CommandRecord[] {
    const api = this.apiCalls
      // a dry run answers the diff and changes nothing
      .filter((c) => API_MUTATIONS.has(c.method) && !c.dryRun)
      .map((c): CommandRecord => {
        const path = API_COMMANDS[c.method];
        const command = path.split(' ')[0];
        return {
          argv: ['(api)', c.method],
          nodes: [c.node],
          command,
          path,
          mutating: true,
          exitCode: c.code,
          at: c.at,
          via: 'api',
        };
      });
    return [...this.commands.filter((c) => c.mutating), ...api].sort((a, b) => a.at - b.at);
  }

  /** ApplyConfiguration calls over the API (each one sent, whatever it answered). */
  applyCalls(): ApiCallRecord[] {
    return this.apiCalls.filter((r) => r.method === APPLY_CONFIGURATION);
  }

  /** How the node's MachineConfig resource carries its body (see ApiHooks.configBodyForm); default `string`. */
  setConfigBodyForm(nameOrIp: string, form: 'string' | 'document'): void {
    this.bodyForms.set(this.get(nameOrIp), form);
  }

  /**
   * The node's next ApplyConfiguration answers OK, then another writer (Omni, an operator's talosctl)
   * puts the previous config back at once, or with `rewrite` writes its own edit of the text just
   * applied: there is no compare-and-swap on a machine config.
   */
  overwriteNextApply(nameOrIp: string, rewrite?: (applied: string) => string): void {
    this.overwrittenApplies.set(this.get(nameOrIp), rewrite);
  }

  /** The warnings the node's ApplyConfiguration returns from now on. */
  warnOnApply(nameOrIp: string, warnings: string[]): void {
    this.applyWarnings.set(this.get(nameOrIp), warnings);
  }

  failNext(match: FailMatch, action: FailAction): void {
    this.failRules.push({ match, action, left: match.count ?? 1 });
  }

  // --- calls from the executable -----------------------------------------------------------------

  private takeRule(command: string, path: string, nodes: string[]): FailRule | undefined {
    const sameNode = (a: string, b: string) => a === b || (this.find(a) !== undefined && this.find(a) === this.find(b));
    const i = this.failRules.findIndex(
      (r) =>
        (r.match.command === command || r.match.command === path) &&
        (r.match.node === undefined || nodes.some((n) => sameNode(n, r.match.node as string))),
    );
    if (i < 0) return undefined;
    const rule = this.failRules[i];
    rule.left -= 1;
    if (rule.left <= 0) this.failRules.splice(i, 1);
    return rule;
  }

  private recordLocal(rec: LocalRecord): void {
    const { command, path } = names(rec.commandPath || 'talosctl');
    this.commands.push({ argv: rec.argv, nodes: rec.nodes, command, path, mutating: false, exitCode: rec.exitCode, at: Date.now() });
  }

  private async run(req: RunRequest, out: Out, signal: AbortSignal): Promise<number> {
    const { command, path } = names(req.commandPath);
    const rec: CommandRecord = { argv: req.argv, nodes: req.nodes, command, path, mutating: isMutating(req), exitCode: -1, at: Date.now() };
    this.commands.push(rec);
    const rule = this.takeRule(command, path, req.nodes);
    if (rule && 'stderr' in rule.action) {
      out.err(rule.action.stderr);
      rec.exitCode = rule.action.exitCode;
      return rec.exitCode;
    }
    if (rule && 'stderrFrom' in rule.action) {
      out.err(rule.action.stderrFrom({ args: req.args, patches: (req.patches ?? []).map((p) => p.content) }));
      rec.exitCode = rule.action.exitCode;
      return rec.exitCode;
    }
    const downNodes = rule ? (rule.match.node === undefined ? 'all' : rule.match.node) : undefined;
    const ctx: CommandContext = {
      req,
      out,
      sim: this.services,
      signal,
      reach: (node) => {
        const rt = this.find(node);
        const forcedDown =
          downNodes === 'all' || (downNodes !== undefined && (node === downNodes || (rt !== undefined && rt === this.find(downNodes))));
        if (forcedDown || !rt || !rt.node.up) return { ok: false, error: unavailableError(node) };
        return { ok: true, rt };
      },
    };
    for (const n of req.nodes) this.find(n)?.answering(command, req.args.find((a) => a.startsWith('/')) ?? req.args[1] ?? req.args[0]);
    const impl = COMMANDS[req.command];
    rec.exitCode = impl ? await impl(ctx) : (out.fail(`talosctl simulator: ${req.commandPath} is not simulated`), 1);
    return rec.exitCode;
  }

  // --- calls to the Talos API ---------------------------------------------------------------------

  /** the certificates the current apid serves with (startApi) */
  private apiCerts?: ClusterCerts;

  private startApi(certs: ClusterCerts): ApiServer {
    this.apiCerts = certs;
    return startApiServer(certs, {
      dropsConnections: (method, node) => this.dropsConnections(method, node),
      held: (method, node, req) => this.held(method, node, req),
      route: (node, method, req) => this.route(node, method, req),
      configBodyForm: (rt) => this.bodyForms.get(rt) ?? 'string',
      applyWarnings: (rt) => this.applyWarnings.get(rt) ?? [],
      applied: (rt, before) => {
        if (!this.overwrittenApplies.has(rt)) return;
        const rewrite = this.overwrittenApplies.get(rt);
        this.overwrittenApplies.delete(rt);
        rt.applyNow(rewrite ? { ...parseConfigText(rewrite(rt.node.machineConfig.text)), version: 0 } : before);
      },
      controlPlanes: () => this.services.controlPlanes(),
      etcdMembers: (rt) => this.etcd.seenBy(rt),
      knowsType: (rt, type) => !this.unknownTypes.get(rt)?.has(type),
      record: (rec) => this.apiCalls.push(rec),
      rebootSequence: (rt) => void rt.reboot(),
      answering: (rt, method, req) => {
        const target = req.path ?? req.root ?? req.id;
        rt.answering((API_COMMANDS[method] ?? method).split(' ')[0], target === undefined ? undefined : String(target));
      },
    });
  }

  /** apid's routing of a `node` value, with the same fault rules as the talosctl commands. */
  private route(node: string, method: string, req: Record<string, unknown>): Route {
    const command = API_COMMANDS[method] ?? method;
    const rule = this.takeRule(command.split(' ')[0], command, [node]);
    if (rule && 'stderrFrom' in rule.action) {
      // an error echoing what was sent: ApplyConfiguration's config text stands in for the patch files
      const data = Buffer.isBuffer(req.data) ? [req.data.toString('utf8')] : [];
      const text = rule.action.stderrFrom({ args: [], patches: data });
      const m = /rpc error: code = (\w+) desc = ([^]*)/.exec(text);
      return { ok: false, code: GRPC_CODES[m?.[1] ?? 'Unknown'] ?? 2, details: m ? m[2] : text.trim() };
    }
    if (rule && 'stderr' in rule.action) {
      const m = /rpc error: code = (\w+) desc = ([^\n]*)/.exec(rule.action.stderr);
      return { ok: false, code: GRPC_CODES[m?.[1] ?? 'Unknown'] ?? 2, details: m ? m[2] : rule.action.stderr.trim() };
    }
    const rt = this.find(node);
    if (rule || !rt || !rt.node.up)
      return { ok: false, code: 14, details: unavailableError(node).replace(/^rpc error: code = Unavailable desc = /, '') };
    return { ok: true, rt };
  }

  // --- the simulated kubelet's pulls -------------------------------------------------------------

  /** A CRI pull: containerd authenticates with what it LOADED at its start, not with the files. */
  private kubeletPull(nodeName: string, image: string): { ok: true; imageID: string } | { ok: false; error: string } {
    const img = parseImageRef(image);
    const rt = this.find(nodeName);
    if (!rt || !rt.node.up || rt.node.containerd.pid === 0) {
      return { ok: false, error: `failed to pull and unpack image "${img.normalized}": containerd is not running on ${nodeName}` };
    }
    const wanted = registryFor((h) => this.registry.get(h), img.domain);
    if (wanted) {
      const loaded = credentialFor(rt.node.containerd.loadedCredential, img.domain);
      if (!sameAuth(wanted, loaded)) {
        return { ok: false, error: `failed to pull and unpack image "${img.normalized}": ${unauthorized(img)}` };
      }
    }
    rt.node.images.add(img.normalized);
    return { ok: true, imageID: img.pinned };
  }
}
