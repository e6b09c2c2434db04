// Whether Kubernetes has lost touch with a node: its own observation (the node lifecycle controller
// marked the kubelet silent), never a write of another actor. The guard does not count it
// (src/rules/controllerTaints.ts); whether the node can still be rolled is the Talos API's to
// say, so the pipeline asks it before the drain and before the reboot (src/pipeline/fence.ts).
import type { NodeState } from '../core/model/node.js';
import { CONDITION_TAINTS } from './controllerTaints.js';

/**
 * What shows that the kubelet stopped reporting, or undefined: the `unreachable` taint (any effect),
 * or Ready=Unknown, which the controller sets first and taints a moment later
 * (kubernetes:pkg/controller/nodelifecycle/node_lifecycle_controller.go, tryUpdateNodeHealth then
 * doNoExecuteTaintingPass; docs/kubernetes-facts.md#k15-condition-taints).
 */
export function kubeletUnreachable(node: Pick<NodeState, 'taints' | 'ready'>): string | undefined {
  if (node.taints.some((t) => t.key === CONDITION_TAINTS.unreachable)) {
    return `Kubernetes marks it ${CONDITION_TAINTS.unreachable} (its kubelet stopped posting status)`;
  }
  if (node.ready === 'Unknown') return 'its Ready condition is Unknown (its kubelet stopped posting status)';
  return undefined;
}
