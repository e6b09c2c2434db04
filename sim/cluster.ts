// The cluster twin: the simulated kube-apiserver and the simulated Talos nodes, wired together so
// a reboot on the Talos side shows on the Kubernetes side and the kubelet pulls images with the
// credential the node's containerd loaded.
import type { KubeAuth } from './kube/auth.js';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuthFields } from '../src/core/model/credential.js';
import { KubeSim } from './kube/index.js';
import { TalosSim } from './talos/index.js';
import type { ApiCertificate } from './talos/api/certs.js';
import type { CriRestartAfterBoot } from './talos/types.js';
import type { KubeNodeHooks } from './types.js';

export const REGISTRY = 'ghcr.io';
export const OLD_CREDENTIAL: AuthFields = { username: 'acme-bot', password: 'old-token-2026-10', auth: '', identitytoken: '' };
export const NEW_CREDENTIAL: AuthFields = { username: 'acme-bot', password: 'new-token-2026-11', auth: '', identitytoken: '' };
/** A second registry (a pull-through mirror, a port in its host) for runs rolling several registries. */
export const MIRROR = 'mirror.local:5000';
export const MIRROR_OLD_CREDENTIAL: AuthFields = { username: 'mirror-bot', password: 'mirror-old-2026-10', auth: '', identitytoken: '' };
export const MIRROR_NEW_CREDENTIAL: AuthFields = { username: 'mirror-bot', password: 'mirror-new-2026-11', auth: '', identitytoken: '' };
const DAY = 86_400_000;

export interface SimNodeSpec {
  name: string;
  role: 'control-plane' | 'worker';
  version?: '1.13' | '1.14';
  /** the node booted with the new credential already (e.g. a fresh autoscaler node) */
  current?: boolean;
  /** the files carry the new credential but containerd loaded the old one (a twin-level lie for probe tests) */
  staleContainerd?: boolean;
  cordoned?: boolean;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  bootedAgoMs?: number;
  /** fault mode (≤1.13): at its initial boot containerd launched before cri.toml was written */
  criFirst?: boolean;
  /** this node's initial boot gap (launch − cri.toml write), whatever the cluster's timings */
  bootGapMs?: number;
  /** fault mode (1.14): after each reboot Talos restarts cri once more just after the node is up */
  criRestartAfterBoot?: CriRestartAfterBoot;
  /** the legacy `machine.registries.config.<host>.auth` map the node carries before the roll (default OLD_CREDENTIAL), e.g. a GHCR user named like the repository's owner */
  oldCredential?: AuthFields;
  /** where its machine config carries the credential (AddNodeSpec.credentialForm); default the legacy map */
  credentialForm?: 'legacy' | 'document' | 'both';
  /** the node also carries MIRROR's credential, new or old, in its config and its containerd alike; default: no mirror */
  mirror?: 'new' | 'old';
}

export interface SimClusterOptions {
  heartbeatMs?: number;
  /** the node lifecycle controller's health pass and grace period, and the kubelet's pressure transition (SimTiming) */
  nodeMonitorPeriodMs?: number;
  nodeMonitorGraceMs?: number;
  pressureTransitionMs?: number;
  rebootMs?: number;
  /** pin the Talos 1.14 restart after a cri.toml write; default drawn from 50–800 ms (sim/talos/timing.ts) */
  criRestartMs?: number;
  /** pin every boot's launch − write gap; default drawn per node and version (sim/talos/timing.ts) */
  bootGapMs?: number;
  /** pin how long a rebooted node answers before it lists cri (Infinity: never); default: follows from the drawn write of the CRI files and the boot gap (sim/talos/timing.ts) */
  criUnlistedMs?: number;
  /** pin how long a rebooted node answers before machined writes the CRI files of its rebuilt /etc; default drawn 0.3–1.5 s (sim/talos/timing.ts) */
  configAfterAnswerMs?: number;
  /** pin the millisecond of the second at which each reboot writes cri.toml (0–999): keeps a pinned sub-second boot gap inside one second, where talosctl's second-rounded instants cannot order it (or across one, where they can) */
  bootWriteMsOfSecond?: number;
  /** seeds the twin's timings (default 1) */
  seed?: number;
  /** serve the Talos API and put a client certificate in the talosconfig (default true); false: the CLI read path */
  api?: boolean;
  /** the certificate the Talos API presents (default `valid`) */
  apiCertificate?: ApiCertificate;
  /** who may call the twin's API server, and the kubeconfig's user for it (sim/kube/auth.ts); default: anyone, plain http */
  kubeAuth?: KubeAuth;
  /** the fake talosctl on env()'s PATH (default: only with api: false; a patch of another form needs it too) */
  talosctl?: boolean;
  /**
   * Realistic durations in proportion, scaled down together (e.g. 1/60: a 90 s reboot takes 1.5 s).
   * A claim or any API write is never scaled: it costs what a real request costs, so the proportion
   * of a reboot to a claim stays that of a cluster. Explicit rebootMs/heartbeatMs still win.
   */
  timeScale?: number;
}

/**
 * A cluster's durations (ms, unscaled): a reboot of a Talos machine until its kubelet registers
 * again (90 s), a pod's termination grace during a drain (30 s), the kubelet's Ready after boot and
 * the CNI agent's readiness (10 s, 5 s), and the kubelet heartbeat (10 s).
 */
export const REALISTIC_MS = {
  rebootMs: 90_000,
  terminationMs: 30_000,
  bootDelayMs: 10_000,
  ciliumDelayMs: 5_000,
  heartbeatMs: 10_000,
  // kube-controller-manager's --node-monitor-period and --node-monitor-grace-period (50 s since 1.32), the
  // kubelet's --eviction-pressure-transition-period (docs/kubernetes-facts.md#k15-condition-taints)
  nodeMonitorPeriodMs: 5_000,
  nodeMonitorGraceMs: 50_000,
  pressureTransitionMs: 300_000,
};

export class SimCluster {
  private ipSeq = 10;
  readonly dir: string;

  private constructor(
    readonly kube: KubeSim,
    readonly talos: TalosSim,
    dir: string,
  ) {
    this.dir = dir;
  }

  static async start(opts: SimClusterOptions = {}): Promise<SimCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'rar-sim-'));
    mkdirSync(join(dir, 'talos'));
    mkdirSync(join(dir, 'kube'));
    // The two halves reference each other; the hooks forward to the kube side once it exists.
    // eslint-disable-next-line prefer-const -- assigned once the hooks that read it exist
    let kube: KubeSim | undefined;
    const hooks: KubeNodeHooks = {
      nodeDown: (name) => kube?.nodeDown(name),
      nodeUp: (name, bootID) => kube?.nodeUp(name, bootID),
    };
    const s = opts.timeScale;
    const scaled = (ms: number) => Math.max(1, Math.round(ms * s!));
    const kubeTiming =
      s === undefined
        ? {}
        : {
            terminationMs: scaled(REALISTIC_MS.terminationMs),
            bootDelayMs: scaled(REALISTIC_MS.bootDelayMs),
            ciliumDelayMs: scaled(REALISTIC_MS.ciliumDelayMs),
            nodeMonitorPeriodMs: scaled(REALISTIC_MS.nodeMonitorPeriodMs),
            nodeMonitorGraceMs: scaled(REALISTIC_MS.nodeMonitorGraceMs),
            pressureTransitionMs: scaled(REALISTIC_MS.pressureTransitionMs),
          };
    const talos = await TalosSim.start({
      kube: hooks,
      rebootMs: opts.rebootMs ?? (s === undefined ? 1500 : scaled(REALISTIC_MS.rebootMs)),
      criRestartMs: opts.criRestartMs,
      bootGapMs: opts.bootGapMs,
      criUnlistedMs: opts.criUnlistedMs,
      configAfterAnswerMs: opts.configAfterAnswerMs,
      bootWriteMsOfSecond: opts.bootWriteMsOfSecond,
      seed: opts.seed,
      api: opts.api,
      apiCertificate: opts.apiCertificate,
      talosctl: opts.talosctl,
      dir: join(dir, 'talos'),
    });
    kube = await KubeSim.start({
      heartbeatMs: opts.heartbeatMs ?? (s === undefined ? 1000 : scaled(REALISTIC_MS.heartbeatMs)),
      ...kubeTiming,
      ...(opts.nodeMonitorPeriodMs === undefined ? {} : { nodeMonitorPeriodMs: opts.nodeMonitorPeriodMs }),
      ...(opts.nodeMonitorGraceMs === undefined ? {} : { nodeMonitorGraceMs: opts.nodeMonitorGraceMs }),
      ...(opts.pressureTransitionMs === undefined ? {} : { pressureTransitionMs: opts.pressureTransitionMs }),
      imagePull: talos.imagePull,
      dir: join(dir, 'kube'),
      auth: opts.kubeAuth,
    });
    talos.setRegistryCredential(REGISTRY, NEW_CREDENTIAL);
    talos.setRegistryCredential(MIRROR, MIRROR_NEW_CREDENTIAL);
    return new SimCluster(kube, talos, dir);
  }

  addNode(spec: SimNodeSpec): { name: string; ip: string } {
    const ip = `10.5.0.${this.ipSeq++}`;
    const cred = spec.current ? NEW_CREDENTIAL : (spec.oldCredential ?? OLD_CREDENTIAL);
    const bootedAgoMs = spec.bootedAgoMs ?? (spec.current ? 2 * 60_000 : 10 * DAY);
    const mirror: Record<string, AuthFields> = spec.mirror
      ? { [MIRROR]: spec.mirror === 'new' ? MIRROR_NEW_CREDENTIAL : MIRROR_OLD_CREDENTIAL }
      : {};
    this.talos.addNode({
      name: spec.name,
      ip,
      role: spec.role,
      version: spec.version ?? '1.13',
      credential: { [REGISTRY]: spec.staleContainerd ? NEW_CREDENTIAL : cred, ...mirror },
      loadedCredential: { [REGISTRY]: cred, ...mirror },
      bootedAgoMs,
      criFirst: spec.criFirst,
      bootGapMs: spec.bootGapMs,
      criRestartAfterBoot: spec.criRestartAfterBoot,
      credentialForm: spec.credentialForm,
    });
    const bootID = this.talos.node(spec.name).bootID;
    this.kube.addNode({
      name: spec.name,
      ip,
      role: spec.role,
      labels: spec.labels,
      annotations: spec.annotations,
      unschedulable: spec.cordoned,
      bootID,
    });
    return { name: spec.name, ip };
  }

  /** The environment under which kubectl and talosctl reach this twin. */
  env(): Record<string, string> {
    const t = this.talos.env();
    return { ...this.kube.env(), ...t };
  }

  /**
   * Write the auth patch carrying `cred` (mode 0600, as a workflow step should): a RegistryAuthConfig
   * document, or with `form: 'legacy'` the v1alpha1 `machine.registries.config.<host>.auth` map.
   */
  writeAuthPatch(cred: AuthFields = NEW_CREDENTIAL, name = 'registry-auth.yaml', form: 'document' | 'legacy' = 'document'): string {
    const path = join(this.dir, name);
    const lines =
      form === 'document'
        ? [
            'apiVersion: v1alpha1',
            'kind: RegistryAuthConfig',
            `name: ${REGISTRY}`,
            `username: ${cred.username}`,
            `password: ${cred.password}`,
          ]
        : [
            'machine:',
            '  registries:',
            '    config:',
            `      ${REGISTRY}:`,
            '        auth:',
            `          username: ${cred.username}`,
            `          password: ${cred.password}`,
          ];
    writeFileSync(path, [...lines, ''].join('\n'), { mode: 0o600 });
    chmodSync(path, 0o600);
    return path;
  }

  /** Write an auth patch of one RegistryAuthConfig document per host (mode 0600), in the order given. */
  writeAuthPatchOf(creds: Record<string, AuthFields>, name: string): string {
    const path = join(this.dir, name);
    const docs = Object.entries(creds).map(([host, cred]) =>
      [
        'apiVersion: v1alpha1',
        'kind: RegistryAuthConfig',
        `name: ${host}`,
        `username: ${cred.username}`,
        `password: ${cred.password}`,
      ].join('\n'),
    );
    writeFileSync(path, `${docs.join('\n---\n')}\n`, { mode: 0o600 });
    chmodSync(path, 0o600);
    return path;
  }

  async stop(): Promise<void> {
    await Promise.allSettled([this.kube.stop(), this.talos.stop()]);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * The demo's default cluster: three control planes and three workers; one worker was just created by
 * the autoscaler with the current credential (its reboot must be skipped), one carries an operator's
 * cordon (it must stay cordoned), one control plane carries both credential forms (a RegistryAuthConfig
 * document over a stale legacy map). Kubelets write heartbeats throughout.
 */
export function addDefaultNodes(c: SimCluster, opts: { mixedVersions?: boolean } = {}): void {
  // mixedVersions: cp-3 and worker-1 run Talos 1.14 (cri restarts itself after the patch), the rest 1.13
  const v114 = opts.mixedVersions ? ('1.14' as const) : undefined;
  c.addNode({ name: 'cp-1', role: 'control-plane' });
  c.addNode({ name: 'cp-2', role: 'control-plane', credentialForm: 'both' });
  c.addNode({ name: 'cp-3', role: 'control-plane', version: v114 });
  c.addNode({ name: 'worker-1', role: 'worker', version: v114 });
  c.addNode({
    name: 'worker-2',
    role: 'worker',
    cordoned: true,
    annotations: { 'ops.acme.io/cordon-reason': 'disk replacement scheduled' },
  });
  // worker-3's boot gap is pinned where talosctl's second-rounded readings can order it (7 s): with a
  // drawn 0.3–3 s gap only nanosecond readings (the Talos API) prove it current, and the demo's point
  // is that a provably current node is not rebooted.
  c.addNode({ name: 'worker-3', role: 'worker', current: true, bootGapMs: 7000, labels: { 'node.kubernetes.io/instance-type': 'cx32' } });
  c.kube.addPod({
    namespace: 'default',
    name: 'web-1',
    nodeName: 'worker-1',
    owner: { kind: 'ReplicaSet', name: 'web-7d4b9' },
    labels: { app: 'web' },
  });
  c.kube.addPod({
    namespace: 'default',
    name: 'web-2',
    nodeName: 'worker-3',
    owner: { kind: 'ReplicaSet', name: 'web-7d4b9' },
    labels: { app: 'web' },
  });
  c.kube.addPdb({ namespace: 'default', name: 'web', selector: { app: 'web' }, disruptionsAllowed: 1 });
  for (const n of ['cp-1', 'cp-2', 'cp-3', 'worker-1', 'worker-2', 'worker-3']) {
    c.kube.addPod({ namespace: 'kube-system', name: `cilium-${n}`, nodeName: n, owner: { kind: 'DaemonSet', name: 'cilium' } });
  }
}

/** The verified marker (one JSON map, host → proof: src/rules/marker.ts) as `host@revision,…`; `-` when absent. */
function verifiedHosts(raw: string | undefined): string {
  if (raw === undefined) return '-';
  const byHost = JSON.parse(raw) as Record<string, { revision: string }>;
  return Object.entries(byHost)
    .map(([host, p]) => `${host}@${p.revision}`)
    .join(',');
}

/** One line per node: what a user checks after a roll (schedulable, verified revision, claims, boot). */
export function describeNodes(c: SimCluster, prefix = 'registry-auth-rollout'): string[] {
  return c.kube.nodes().map((n: any) => {
    const a = n.metadata.annotations ?? {};
    const ready = (n.status?.conditions ?? []).find((x: any) => x.type === 'Ready')?.status;
    const claim =
      (a[`${prefix}/owner`] ? ` CLAIMED phase=${a[`${prefix}/phase`]}` : '') + (a[`${prefix}/quarantined`] ? ' QUARANTINED' : '');
    const t = c.talos.node(n.metadata.name);
    return `${n.metadata.name.padEnd(11)} ${n.spec.unschedulable ? 'cordoned   ' : 'schedulable'} Ready=${ready} verified=${verifiedHosts(a[`${prefix}/verified`])}${claim} containerd PID ${t.containerd.pid}`;
  });
}
