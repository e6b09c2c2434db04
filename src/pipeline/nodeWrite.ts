// A node's CAS-guarded patches through the one writer (src/pipeline/write.ts): a phase patch, the
// marker, an adoption (patchNodeSurvivingLoss), and the patches that give up a claim, a release or the
// quarantine (releaseNode), which also leave an autoscaler mark someone changed as they set it
// (src/pipeline/autoscalerMarks.ts). What a re-read after a lost answer shows is judged by
// src/rules/lostWrite.ts on the node as served (src/rules/objectDocument.ts).
import type { KubeClient } from '../adapters/types.js';
import { errorMessage, ToolError } from '../core/errors.js';
import type { AnnotationKeys, ClaimCapture, NodeState } from '../core/model/node.js';
import type { JsonPatchOp } from '../core/model/patch.js';
import { nodeDocument } from '../rules/objectDocument.js';
import { sendKeepingTheirMarks } from './autoscalerMarks.js';
import { writeSurvivingLoss, type WriteDeps, type WriteOutcome } from './write.js';

export type NodeWriteDeps = WriteDeps & { kube: Pick<KubeClient, 'patchNode' | 'getNode' | 'readyz'> };

/** The node as it is now, undefined when it is gone (404); any other failure is thrown (the writer reads again). */
export async function readNodeOrGone(kube: Pick<KubeClient, 'getNode'>, name: string): Promise<NodeState | undefined> {
  try {
    return await kube.getNode(name);
  } catch (e) {
    if (e instanceof ToolError && e.kind === 'not-found') return undefined;
    throw e;
  }
}

/** 422: a `test` op failed (the apiserver drops which one: docs/kubernetes-facts.md#k4-json-patch-atomic). */
export const isTestFailure = (e: unknown): boolean => e instanceof ToolError && e.kind === 'invalid';

/**
 * A failure whose answer was lost, after which a re-read showed the write's tests no longer hold:
 * thrown as the CAS's own refusal (a 422, `invalid`), which a resend would have got, naming what moved.
 */
function refusedAfterLoss(name: string, after: unknown, failed: string[], gone: boolean): ToolError {
  const e = after instanceof ToolError ? after : undefined;
  return new ToolError({
    tool: e?.tool ?? 'kube-api',
    command: e?.command ?? `PATCH node ${name}`,
    kind: gone ? 'not-found' : 'invalid',
    exitCode: e?.exitCode ?? null,
    stderr: e?.stderr ?? errorMessage(after),
    node: name,
    message: `${errorMessage(after)}; a re-read shows ${gone ? `the node ${name} is gone` : `the patch's tests no longer hold (${failed.join(', ')})`}: it was not applied and is refused`,
  });
}

/**
 * A phase patch, the marker or an adoption: the node as written, or as a re-read shows it applied when
 * its answer was lost. Throws the CAS's refusal (cause `invalid` or `not-found`: also when a re-read
 * after a lost answer shows the tests no longer hold), the failure when the outcome stays unknown or
 * the retries ran out, or any definite failure.
 */
export async function patchNodeSurvivingLoss(deps: NodeWriteDeps, name: string, ops: JsonPatchOp[], what: string): Promise<NodeState> {
  const r = await writeSurvivingLoss(deps, {
    what: `${what} of ${name}`,
    ops: () => ops,
    send: (o) => deps.kube.patchNode(name, o),
    read: () => readNodeOrGone(deps.kube, name),
    document: nodeDocument,
  });
  return settled(r, name);
}

function settled(r: WriteOutcome<NodeState, NodeState>, name: string): NodeState {
  switch (r.kind) {
    case 'written':
      return r.value;
    case 'applied':
      return r.seen;
    case 'unknown':
      throw r.error;
    case 'refused':
      if (!r.read || isTestFailure(r.error) || r.verdict?.kind !== 'conflicted') throw r.error;
      throw refusedAfterLoss(name, r.error, r.verdict.failed, r.seen === undefined);
  }
}

/**
 * A patch that gives up a node's claim (`build(capture)`: a release, the quarantine), sent through the
 * one writer. An autoscaler mark someone changed during the hold is left as they set it and the patch
 * sent again without it (src/pipeline/autoscalerMarks.ts). Returns the node as written or as a re-read
 * shows it applied; a 422 on the first send is thrown as it is (the caller's refusal); a re-read that
 * shows the node no longer this run's (another owner, none without our release, gone) stops the tries
 * with the failure, saying so; an outcome that stays unknown, or retries that ran out, throw the last
 * failure (the callers keep the node in its phase and say how to release it).
 */
export async function releaseNode(
  deps: NodeWriteDeps & {
    log?: { info(message: string): void };
    /** each autoscaler mark left as someone else set it, one line (for the node's record: its summary row and Events) */
    keptMark?: (line: string) => void;
  },
  capture: ClaimCapture,
  keys: Pick<AnnotationKeys, 'owner' | 'autoscalerMarks'>,
  build: (capture: ClaimCapture) => JsonPatchOp[],
  what = 'the release',
): Promise<NodeState> {
  const name = capture.node;
  const note = deps.note ?? ((m: string) => deps.log?.info(m));
  // the marks still ours, kept across the tries once a re-read dropped one
  let current = capture;
  const r = await writeSurvivingLoss(
    { kube: deps.kube, clock: deps.clock, cancelled: deps.cancelled, note },
    {
      what: `${what} of ${name}`,
      ops: () => build(current),
      send: () =>
        sendKeepingTheirMarks(
          { kube: deps.kube, keys, note, kept: deps.keptMark },
          current,
          build,
          (ops) => deps.kube.patchNode(name, ops),
          (c) => (current = c),
        ),
      read: () => readNodeOrGone(deps.kube, name),
      document: nodeDocument,
      stillHolds: 'still ours',
    },
  );
  if (r.kind !== 'refused' || !r.read || r.verdict?.kind !== 'conflicted') return settled(r, name);
  const after = r.error instanceof ToolError ? r.error : undefined;
  const why = r.seen === undefined ? `the node ${name} is gone` : `${name} no longer carries this run's claim`;
  throw new ToolError({
    tool: after?.tool ?? 'kube-api',
    command: after?.command ?? `PATCH node ${name}`,
    kind: after?.kind ?? 'unknown',
    exitCode: after?.exitCode ?? null,
    stderr: after?.stderr ?? errorMessage(r.error),
    node: name,
    message: `${errorMessage(r.error)}; then ${why}, so it was left as it is`,
  });
}
