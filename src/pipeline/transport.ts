// Surviving a connection that drops mid-request: wait for the apiserver, and node patches whose
// response may be lost in transit.
import type { KubeClient } from '../adapters/types.js';
import type { Clock } from '../core/clock.js';
import { outcomeUnknown, ToolError } from '../core/errors.js';
import type { NodeState } from '../core/model/node.js';
import type { JsonPatchOp } from '../core/model/patch.js';
import { STEP } from '../core/steps.js';
import type { RunContext } from './context.js';
import type { NodeRun } from './nodeRun.js';

/** How long to wait for the apiserver to answer /readyz again after a transport failure (src/rules/budget.ts counts it). */
export const READYZ_WAIT_MS = 120_000;

export function isTransport(e: unknown): boolean {
  return e instanceof ToolError && e.kind === 'transport';
}

/** After a transport failure: poll `/readyz` (bounded) until the apiserver answers again, as a step of the node's run. */
export async function waitForApiserver(ctx: RunContext, run: NodeRun): Promise<void> {
  await run.step(STEP.waitApiserver, async () => {
    const deadline = ctx.clock.now() + READYZ_WAIT_MS;
    for (;;) {
      try {
        await ctx.kube.readyz();
        return;
      } catch (e) {
        if (ctx.clock.now() + 1000 > deadline || ctx.cancelled?.() || isCancelled(e)) throw e;
        await ctx.clock.sleep(1000);
      }
    }
  });
}

const isCancelled = (e: unknown): boolean => e instanceof ToolError && e.kind === 'cancelled';

/**
 * After a write whose outcome is unknown (src/core/errors.ts outcomeUnknown): read until the read answers,
 * waiting for `/readyz` between tries, for at most READYZ_WAIT_MS. Undefined when the outcome stays
 * unknown: the deadline passed, or the run was cancelled (a cancelled run starts no process, so
 * nothing can be read any more: the post step, a fresh process, reads instead).
 */
export async function readAfterUnknown<T>(
  deps: { kube: Pick<KubeClient, 'readyz'>; clock: Clock; cancelled?: () => boolean },
  read: () => Promise<T>,
): Promise<T | undefined> {
  const deadline = deps.clock.now() + READYZ_WAIT_MS;
  for (;;) {
    if (deps.cancelled?.()) return undefined;
    try {
      return await read();
    } catch (e) {
      if (isCancelled(e)) return undefined;
    }
    // The read failed: wait until the apiserver is ready again (a second apart), then read once more.
    for (;;) {
      if (deps.clock.now() + 1000 > deadline || deps.cancelled?.()) return undefined;
      await deps.clock.sleep(1000);
      try {
        await deps.kube.readyz();
        break;
      } catch (e) {
        if (isCancelled(e)) return undefined;
      }
    }
  }
}

/**
 * A node patch whose response may be lost: on a failure whose outcome is unknown (a dropped
 * connection, the apiserver's 504, our own deadline: src/core/errors.ts outcomeUnknown), re-read the node and
 * go on when our change is visible (`landed`), otherwise send it again, within `attempts`.
 * Only for patches that are CAS-guarded by their own `test` ops, so sending one twice is harmless.
 *
 * A resend answered 422 (one of its `test`s failed) after an unknown outcome is no refusal yet: the
 * first send may have landed, and then the resend's test of what it changed (our owner token, before a
 * release) fails BECAUSE of it. So the node is read again (waiting for /readyz, as any read after an
 * unknown outcome) and the change is accepted when the node shows it; otherwise the 422 stands. A 422
 * on the first send is the CAS refusing, thrown as it is.
 */
export async function patchNodeSurvivingTransport(
  ctx: Pick<RunContext, 'kube' | 'clock' | 'cancelled'>,
  name: string,
  ops: JsonPatchOp[],
  landed: (n: NodeState) => boolean,
  attempts = 3,
): Promise<NodeState> {
  let mayHaveLanded = false;
  for (let i = 1; ; i++) {
    try {
      return await ctx.kube.patchNode(name, ops);
    } catch (e) {
      if (mayHaveLanded && isTestFailure(e)) {
        const reread = await readAfterUnknown(ctx, () => ctx.kube.getNode(name));
        if (reread && landed(reread)) return reread;
        throw e;
      }
      if (!outcomeUnknown(e) || isCancelled(e) || i >= attempts) throw e;
      mayHaveLanded = true;
      const reread = await ctx.kube.getNode(name).catch(() => undefined);
      if (reread && landed(reread)) return reread;
    }
  }
}

/** 422: a `test` op failed (the apiserver drops which one: docs/kubernetes-facts.md#k4-json-patch-atomic). */
export const isTestFailure = (e: unknown): boolean => e instanceof ToolError && e.kind === 'invalid';
