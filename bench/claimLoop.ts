// The two claims the benchmark compares.
//
// `actionClaim` is the action's own claim: `claimNode` from src/pipeline/claim.ts, through the same Kubectl
// adapter (no Lease and no cancellation here); its refusals are mapped to ClaimRefused.
//
// `oneShotClaim` is the old script's claim: read, PATCH guarded by `test /metadata/resourceVersion`,
// give up on the first 422.
import type { KubeClient } from '../src/adapters/types.js';
import { ToolError } from '../src/core/errors.js';
import type { AnnotationKeys, NodeState } from '../src/core/model/node.js';
import type { JsonPatchOp } from '../src/core/model/patch.js';
import type { Clock } from '../src/core/clock.js';
import { claimNode, type ClaimResult } from '../src/pipeline/claim.js';
import { NodeStop } from '../src/pipeline/stop.js';
import { buildClaimPatch } from '../src/rules/claim.js';

/**
 * The OLD script's claim, kept ONLY so the benchmark and the tests can show what it did wrong: the
 * action's claim writes, guarded by nothing but `test /metadata/resourceVersion`, so any write to the
 * node between the read and the patch (a kubelet heartbeat, a label) makes it fail.
 */
export function oneShotClaimPatch(node: NodeState, owner: string, keys: AnnotationKeys): JsonPatchOp[] {
  return [
    { op: 'test', path: '/metadata/resourceVersion', value: node.resourceVersion },
    ...buildClaimPatch(node, owner, keys).filter((op) => op.op !== 'test'),
  ];
}

export interface ClaimDeps {
  kube: KubeClient;
  keys: AnnotationKeys;
  owner: string;
  config: { claimAttempts: number };
}

/** The claim was refused: a genuine conflict, or it did not land within claim-attempts. */
export class ClaimRefused extends Error {
  constructor(
    readonly kind: 'conflict' | 'exhausted',
    message: string,
    readonly attempts: number,
  ) {
    super(message);
  }
}

export async function actionClaim(deps: ClaimDeps, fresh: NodeState, clock: Clock): Promise<ClaimResult> {
  try {
    return await claimNode(deps, fresh, clock);
  } catch (e) {
    if (e instanceof NodeStop && e.claimFailure) {
      throw new ClaimRefused(e.claimFailure, e.message, e.claimFailure === 'exhausted' ? deps.config.claimAttempts : 0);
    }
    throw e;
  }
}

export async function oneShotClaim(deps: ClaimDeps, fresh: NodeState): Promise<{ attempts: 1 }> {
  try {
    await deps.kube.patchNode(fresh.name, oneShotClaimPatch(fresh, deps.owner, deps.keys));
    return { attempts: 1 };
  } catch (e) {
    if (e instanceof ToolError && e.kind === 'invalid')
      throw new ClaimRefused('conflict', 'resourceVersion changed between the read and the patch', 1);
    throw e;
  }
}
