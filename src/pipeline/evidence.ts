// Evidence reads inside a run: one batched `talosctl version` per pass, single-node readings that
// reuse it, and the wait for Talos >= 1.14 to restart cri by itself after the patch.
import { ServerIdentityError } from '../core/errors.js';
import type { DesiredCredential } from '../core/model/credential.js';
import type { NodeState } from '../core/model/node.js';
import type { Reading } from '../core/model/readings.js';
import type { CriLaunch, EvidenceVerdict } from '../core/model/verdict.js';
import { absentPaths, readEvidence } from './readEvidence.js';
import { rebootEvidence } from '../rules/evidence.js';
import type { RunContext } from './context.js';

/**
 * One batched `talosctl version` for a pass's nodes, instead of one per node; failures are read
 * again later, except a refused server certificate, which ends the run.
 */
export async function prefetchVersions(ctx: RunContext, nodes: NodeState[]): Promise<void> {
  if (ctx.config.reboot === 'always') return;
  const known = ctx.versions;
  const addresses = nodes.map((n) => n.internalIPs[0]).filter((a): a is string => !!a && !known.get(a)?.ok);
  if (addresses.length === 0) return;
  const read = await ctx.talos.version(addresses).catch((e: unknown) => {
    if (e instanceof ServerIdentityError) throw e;
    return new Map<string, Reading<string>>();
  });
  for (const [a, v] of read) if (v.ok) known.set(a, v);
}

/** One node's evidence for the hosts its roll is for; `afterPatch` for a reading after the credential patch (rule 2b of the evidence rule). */
export async function readOne(
  ctx: RunContext,
  node: { name: string; address: string; desired: readonly DesiredCredential[] },
  afterPatch?: { before: CriLaunch | undefined },
): Promise<EvidenceVerdict> {
  const { name, address } = node;
  const readings = await readEvidence(ctx.talos, [{ name, address }], ctx.config.criConfigPaths, {
    versions: ctx.versions,
    absent: ctx.absentPaths,
  });
  const r = readings.get(name)!;
  if (r.talosVersion.ok) ctx.versions.set(address, r.talosVersion);
  ctx.absentPaths.set(address, absentPaths(r));
  return rebootEvidence(r, node.desired, { marginMs: ctx.config.evidenceMarginMs, afterPatch });
}

/**
 * Talos >= 1.14 restarts cri itself when cri.toml changes. The same evidence rule, read again after
 * the patch, proves the new containerd loaded the desired credential: a containerd launched after the
 * one that ran before the patch (`before`), after the write that carries the credential. Until it does
 * (or the wait ends) we keep polling. Anything short of proof falls back to the reboot.
 */
export async function waitForCriRestart(
  ctx: RunContext,
  node: { name: string; address: string; desired: readonly DesiredCredential[] },
  before: CriLaunch,
): Promise<EvidenceVerdict> {
  const deadline = ctx.clock.now() + ctx.config.criRestartWaitMs;
  const poll = Math.max(500, ctx.pollIntervalMs);
  let last: EvidenceVerdict | undefined;
  for (;;) {
    last = await readOne(ctx, node, { before });
    if (last.verdict === 'skip') return last;
    if (ctx.clock.now() + poll > deadline || ctx.cancelled?.()) return last;
    await ctx.clock.sleep(poll);
  }
}
