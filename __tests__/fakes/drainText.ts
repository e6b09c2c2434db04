// kubectl drain's stderr when a PodDisruptionBudget kept refusing an eviction until its --timeout ran out,
// as kubectl 1.32 prints it (docs/kubernetes-facts.md#k14-drain-timeout-output): one home for the
// transcript the parser tests and the pipeline's fakes feed in.

/** The line of one eviction a PDB refused (kubectl retries it 5 s later). */
export function pdbRefusal(pod: string): string {
  const [ns, name] = pod.split('/');
  return `error when evicting pods/"${name}" -n "${ns}" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.`;
}

/**
 * The whole stderr of a drain of `node` that gave up after `timeout` (kubectl's formatting, e.g. `8s`,
 * `1m0s`) on `pending` (`namespace/name`), after the PDB refusals `refused` (default: that pod once).
 */
export function drainTimeoutStderr(opts: { node: string; pending: string; timeout: string; refused?: string[] }): string {
  const [ns, name] = opts.pending.split('/');
  const ended = `error when evicting pods/"${name}" -n "${ns}": global timeout reached: ${opts.timeout}`;
  return [
    ...(opts.refused ?? [opts.pending]).map(pdbRefusal),
    `There are pending pods in node "${opts.node}" when an error occurred: ${ended}`,
    `pod/${name}`,
    `error: unable to drain node "${opts.node}" due to error: ${ended}, continuing command...`,
    'There are pending nodes to be drained:',
    ` ${opts.node}`,
    ended,
  ].join('\n');
}
