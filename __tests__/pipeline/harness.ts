// Builds a small cluster of in-memory fakes and runs the rollout against it.
import type { Config } from '../../src/core/config.js';
import { DEFAULT_CRI_CONFIG_PATHS } from '../../src/core/config.js';
import type { AuthFields, DesiredCredential } from '../../src/core/model/credential.js';
import { annotationKeys } from '../../src/core/model/node.js';
import { RunLock } from '../../src/pipeline/runLock.js';
import { readMarkers } from '../../src/rules/marker.js';
import type { RolloutDeps } from '../../src/pipeline/context.js';
import { runRollout } from '../../src/pipeline/run.js';
import { TestClock } from '../fakes/clock.js';
import { FakeKube, type FakeNodeSpec } from '../fakes/fakeKube.js';
import { FakeTalos } from '../fakes/fakeTalos.js';

export const OLD: AuthFields = { username: 'bot', password: 'old-pw', auth: '', identitytoken: '' };
export const NEW: AuthFields = { username: 'bot', password: 'new-pw', auth: '', identitytoken: '' };
export const DESIRED: DesiredCredential = { host: 'ghcr.io', tomlHost: 'ghcr.io', fields: NEW };
export const OWNER = 'acme/infra/runs/42/attempts/1/abcdef';
export const keys = annotationKeys('registry-auth-rollout');

/** A node's verified marker as a release writes it (src/rules/marker.ts): the run's host proven at `revision` by the evidence. */
export function provenMarker(revision: string, host = DESIRED.host): string {
  return JSON.stringify({ [host]: { revision, at: '2026-12-01T00:00:00.000Z', proof: 'evidence' } });
}

/** The revision a node's verified marker records for `host` (the map alone, not the old single-key form). */
export function verifiedRev(node: { annotations: Record<string, string> }, host = DESIRED.host): string | undefined {
  return readMarkers(node.annotations, keys).byHost[host]?.revision;
}
const DAY = 86_400_000;

export interface NodeOpts extends Partial<FakeNodeSpec> {
  /** files already carry the new credential and containerd started after they were written */
  current?: boolean;
  version?: string;
}

export function makeCluster(nodes: Array<NodeOpts & { name: string }>) {
  const clock = new TestClock();
  const kube = new FakeKube();
  const talos = new FakeTalos(clock);
  talos.patchRenders = { 'ghcr.io': NEW };
  let ip = 10;
  for (const n of nodes) {
    const address = `10.0.0.${ip++}`;
    kube.addNode({ ip: address, ...n, name: n.name });
    const bootAt = clock.now() - 10 * DAY;
    const cred = n.current ? NEW : OLD;
    talos.add({
      name: n.name,
      address,
      version: n.version ?? 'v1.13.8',
      criPid: 1893,
      criStartedAtMs: bootAt + 6000,
      files: Object.fromEntries(DEFAULT_CRI_CONFIG_PATHS.map((p) => [p, { mtimeMs: bootAt + 100, auth: { 'ghcr.io': { ...cred } } }])),
      synced: true,
      epoch: 0,
      etcd: n.role === 'control-plane' ? {} : undefined,
    });
  }
  talos.rebootHook = (t) => {
    kube.mutate(t.name, (o) => {
      o.status.nodeInfo.bootID = `boot-${t.name}-${clock.now()}`;
    });
  };
  return { clock, kube, talos };
}

export function config(over: Partial<Config> = {}): Config {
  return {
    mode: 'apply',
    authPatch: '/tmp/auth.yaml',
    registry: [],
    revision: 'rev-2',
    nodes: [],
    reboot: 'evidence',
    criConfigPaths: DEFAULT_CRI_CONFIG_PATHS,
    evidenceMarginMs: 2000,
    claimAttempts: 5,
    drainTimeoutMs: 60_000,
    undrainable: 'stop',
    settleTimeoutMs: 0,
    readyTimeoutMs: 600_000,
    verifyNamespace: 'kube-system',
    criRestartWaitMs: 60_000,
    annotationPrefix: 'registry-auth-rollout',
    leaseNamespace: 'kube-system',
    leaseName: 'registry-auth-rollout',
    maxUnavailable: { count: 1 },
    failOnPartial: false,
    preflight: false,
    healthGates: [],
    storageGate: false,
    gateTimeoutMs: 900_000,
    ...over,
  };
}

export function roll(c: ReturnType<typeof makeCluster>, over: Partial<Config> = {}, extra: Partial<RolloutDeps> = {}) {
  return runRollout(rolloutDeps(c, over, extra));
}

/** The run's ports on the fakes, as `roll` hands them to the run. */
export function rolloutDeps(c: ReturnType<typeof makeCluster>, over: Partial<Config> = {}, extra: Partial<RolloutDeps> = {}): RolloutDeps {
  return {
    kube: c.kube,
    talos: c.talos,
    config: config(over),
    desired: [DESIRED],
    owner: OWNER,
    keys,
    clock: c.clock,
    pollIntervalMs: 1000,
    lock: new RunLock({ kube: c.kube, namespace: 'kube-system', name: 'registry-auth-rollout', owner: OWNER, clock: c.clock }),
    ...extra,
  };
}

/**
 * The Lease's holder is alive: every read of the Lease after the first shows it renewed since (a new
 * resourceVersion), so a run watching it (src/pipeline/runLock.ts watchExpiry) sees it written and is refused.
 */
export function holderRenewsWhileWatched(kube: FakeKube): void {
  const read = kube.getLease.bind(kube);
  let reads = 0;
  kube.getLease = async (ns: string, name: string) => {
    const o = kube.leases.get(`${ns}/${name}`);
    if (o?.spec.holderIdentity && reads++ > 0) o.metadata.resourceVersion = String(Number(o.metadata.resourceVersion) + 1);
    return read(ns, name);
  };
}
