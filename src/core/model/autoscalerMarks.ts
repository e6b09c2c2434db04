// The autoscalers' "keep off this node" annotations the claim writes while it holds a node, and the
// record of which of them the claim wrote. Plain data, no I/O. Why and where from: docs/autoscaler-marks.md.

/**
 * A drained, cordoned node is exactly what a cluster autoscaler removes; these keep each one off a node
 * while the run holds it, each honoured with the value "true":
 * - cluster-autoscaler: a node with `cluster-autoscaler.kubernetes.io/scale-down-disabled: "true"` is
 *   never a scale-down candidate (kubernetes/autoscaler cluster-autoscaler/core/scaledown/eligibility/eligibility.go,
 *   ScaleDownDisabledKey);
 * - Karpenter: a node with `karpenter.sh/do-not-disrupt: "true"` is never voluntarily disrupted
 *   (kubernetes-sigs/karpenter pkg/apis/v1/labels.go DoNotDisruptAnnotationKey).
 */
export const AUTOSCALER_MARKS = ['cluster-autoscaler.kubernetes.io/scale-down-disabled', 'karpenter.sh/do-not-disrupt'] as const;
export type AutoscalerMark = (typeof AUTOSCALER_MARKS)[number];

/** The value each mark is written with, and the only value a release removes. */
export const AUTOSCALER_MARK_VALUE = 'true';
