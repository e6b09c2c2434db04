// The quorum gate as the roll runs it, for a control plane before its drain and again before its
// reboot: every peer's etcd read at once, judged by src/rules/quorum.ts; a refusal gives the node back.
import type { TalosClient } from '../adapters/types.js';
import { ServerIdentityError, errorMessage } from '../core/errors.js';
import type { Reading } from '../core/model/readings.js';
import { quorumGateStep } from '../core/steps.js';
import { quorumGate, type EtcdReadings } from '../rules/quorum.js';
import type { RunContext } from './context.js';
import { QuorumRefusal } from './errors.js';
import type { FenceRead } from './fence.js';
import type { NodeRun } from './nodeRun.js';
import { NodeStop } from './stop.js';

async function reading<T>(f: () => Promise<T>): Promise<Reading<T>> {
  try {
    return { ok: true, value: await f() };
  } catch (e) {
    // an unreadable peer refuses the reboot; a refused server certificate stops the node instead
    if (e instanceof ServerIdentityError) throw e;
    return { ok: false, error: errorMessage(e) };
  }
}

/** A peer's etcd: its own status, the alarms, and its copy of etcd's member list. */
async function etcdReading(talos: TalosClient, address: string): Promise<EtcdReadings> {
  const [status, alarms, members] = await Promise.all([
    reading(() => talos.etcdStatus(address)),
    reading(() => talos.etcdAlarms(address)),
    reading(() => talos.etcdMembers(address)),
  ]);
  return { status, alarms, members };
}

/**
 * Every peer is asked for its status, the alarms and its copy of the member list (the gate requires
 * the copies to agree: src/rules/quorum.ts); the target is asked only for its status, which names its
 * own member (a failure there is no refusal: the target's etcd is the one going down).
 */
async function checkQuorum(ctx: RunContext, run: NodeRun, label: string): Promise<void> {
  const problems = await run.step(quorumGateStep(label), async () => {
    const nodes = await ctx.kube.listNodes();
    const controlPlanes = nodes.filter((n) => n.role === 'control-plane');
    const etcd = new Map<string, EtcdReadings>();
    // The peers are independent and read-only: ask them all at once.
    const peers = controlPlanes.map((p) => p.internalIPs[0]).filter((a, i) => controlPlanes[i].name !== run.node.name && !!a);
    const [targetStatus, readings] = await Promise.all([
      reading(() => ctx.talos.etcdStatus(run.address)),
      Promise.all(peers.map((a) => etcdReading(ctx.talos, a))),
    ]);
    peers.forEach((a, i) => etcd.set(a, readings[i]));
    return quorumGate({ target: run.node.name, controlPlanes, etcd, targetStatus });
  });
  if (problems.length > 0) throw new QuorumRefusal(problems);
}

/**
 * The quorum gate for a control plane; a refusal gives the node back (nothing was rebooted).
 * Returns the fence read still usable as the Lease proof of the next mutation: none after the gate
 * ran, since the proof must come from the read immediately before the mutation.
 */
export async function quorumOrRelease(
  ctx: RunContext,
  run: NodeRun,
  fence: FenceRead,
  label: string,
  nextStep: string,
): Promise<FenceRead | undefined> {
  if (run.node.role !== 'control-plane') return fence;
  try {
    await checkQuorum(ctx, run, label);
  } catch (e) {
    if (!(e instanceof QuorumRefusal)) throw e;
    throw new NodeStop('refused', e.message, { disposition: 'release', nextStep });
  }
  return undefined;
}
