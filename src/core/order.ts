// The one order of names (nodes, addresses, etcd member ids, PodDisruptionBudgets): UTF-16 code
// units, never the runner's locale, so the roll order and every list in a message are the same on
// every runner.

/** Code-unit order of two names, for `sort`. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
