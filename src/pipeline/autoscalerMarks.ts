// The autoscaler marks at a release: a patch that gives up a claim (every release, the quarantine,
// `recover-fences`'s) removes each mark the claim wrote behind a `test` of "true"
// and a `test` of the record the claim wrote (src/rules/autoscalerMarks.ts). A mark or a record someone
// changed while the node was held fails that test and the whole patch with it (422); this re-reads the
// node and, while it is still ours, sends the patch again without what is no longer provably ours, so
// their change is kept and the release does not fail over it. Imports no other file of pipeline/.
import type { KubeClient } from '../adapters/types.js';
import { ToolError } from '../core/errors.js';
import type { AnnotationKeys, ClaimCapture } from '../core/model/node.js';
import type { JsonPatchOp } from '../core/model/patch.js';
import { withoutChangedMarks } from '../rules/autoscalerMarks.js';

export interface MarksDeps {
  kube: Pick<KubeClient, 'getNode'>;
  keys: Pick<AnnotationKeys, 'owner' | 'autoscalerMarks'>;
  /** a line for each mark left as someone else set it (the log) */
  note?: (message: string) => void;
  /** the same line, without the node's name, for the node's record (its summary row and Events) */
  kept?: (line: string) => void;
}

/**
 * Sends `build(capture)` through `send`. On a 422 (a `test` failed; the apiserver does not say which:
 * docs/kubernetes-facts.md#k4-json-patch-atomic) with marks recorded, the node is read again: the same
 * uid with our owner token and a recorded mark no longer "true", or the record no longer as written →
 * `onCapture` gets the capture without it (without any mark or record, for the record) and the patch is
 * built and sent again. Anything else (not ours, everything still as written, the re-read failing)
 * throws the 422 as it was: the caller's refusal. Ends: each resend has fewer marks, or no record.
 */
export async function sendKeepingTheirMarks<T>(
  deps: MarksDeps,
  capture: ClaimCapture,
  build: (capture: ClaimCapture) => JsonPatchOp[],
  send: (ops: JsonPatchOp[]) => Promise<T>,
  onCapture?: (capture: ClaimCapture) => void,
): Promise<T> {
  let current = capture;
  for (;;) {
    try {
      return await send(build(current));
    } catch (e) {
      if (!(e instanceof ToolError && e.kind === 'invalid') || current.marksRecord === undefined) throw e;
      const now = await deps.kube.getNode(current.node).catch(() => undefined);
      if (!now || now.uid !== current.uid || now.annotations[deps.keys.owner] !== current.owner) throw e;
      const next = withoutChangedMarks(current, now, deps.keys);
      if (!next) throw e;
      for (const line of next.changed) {
        deps.note?.(`${current.node}: ${line}`);
        deps.kept?.(line);
      }
      current = next.capture;
      onCapture?.(current);
    }
  }
}
