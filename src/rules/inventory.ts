// Inventory rules: which nodes may be touched at all, which ones need the new credential, in
// which order, and whether a node is still the machine the inventory saw.
// Pure: plain NodeState values in, problems or selections out.
import { matchesLabels, type LabelSelectorInput } from '../core/labelSelector.js';
import type { AnnotationKeys, NodeState } from '../core/model/node.js';
import { compareNames } from '../core/order.js';
import type { HostToProve } from '../core/model/hosts.js';
import { carriesMarker, hostsToProve, type MarkerWant } from './marker.js';

/** Group values by a key and keep only the keys that more than one node shares. */
function shared(pairs: Array<[string, string]>): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const [k, name] of pairs) {
    const list = groups.get(k) ?? [];
    list.push(name);
    groups.set(k, list);
  }
  return new Map([...groups].filter(([, names]) => names.length > 1));
}

/**
 * Problems that must stop the run before any mutation, each naming the nodes.
 *
 * - uid empty or shared: the claim, guard and release all test `/metadata/uid`; without a unique uid
 *   they could not tell a replaced node from the one we claimed.
 * - not exactly one InternalIP, or one InternalIP on several nodes: Talos is addressed by that IP, so
 *   an ambiguous address could reboot a different machine than the node we drained.
 * - an `owner` or `phase` annotation: a residual claim (another run, or one that failed after its
 *   drain began). It must be investigated and released by a human, never silently taken over.
 *   A quarantined node (`quarantined` annotation, no owner and no phase: src/rules/quarantine.ts) is no
 *   claim: the quarantine gave the claim up, and the next run rolls it again.
 *   `adoptable` (an apply run, which takes the run Lease before any node): the claims it accepts are no
 *   problem, the run adopts them once it holds the Lease (src/rules/adopt.ts, docs/recovery.md).
 */
export function validateInventory(nodes: NodeState[], keys: AnnotationKeys, adoptable?: (n: NodeState) => boolean): string[] {
  const problems: string[] = [];

  for (const n of nodes) {
    if (n.uid.trim() === '') problems.push(`node ${n.name} has an empty uid`);
  }
  for (const [uid, names] of shared(nodes.filter((n) => n.uid.trim() !== '').map((n) => [n.uid, n.name]))) {
    problems.push(`nodes ${names.sort(compareNames).join(', ')} share the uid ${uid}`);
  }

  for (const n of nodes) {
    if (n.internalIPs.length !== 1) {
      const found = n.internalIPs.length === 0 ? 'none' : n.internalIPs.join(', ');
      problems.push(`node ${n.name} must have exactly one InternalIP address, found ${n.internalIPs.length} (${found})`);
    }
  }
  const ipPairs: Array<[string, string]> = [];
  for (const n of nodes) for (const ip of new Set(n.internalIPs)) ipPairs.push([ip, n.name]);
  for (const [ip, names] of shared(ipPairs)) {
    problems.push(`InternalIP ${ip} is shared by nodes ${names.sort(compareNames).join(', ')}`);
  }

  for (const n of nodes) {
    const owner = n.annotations[keys.owner];
    const phase = n.annotations[keys.phase];
    if ((owner !== undefined || phase !== undefined) && !adoptable?.(n)) {
      const parts: string[] = [];
      if (owner !== undefined) parts.push(`${keys.owner}=${JSON.stringify(owner)}`);
      if (phase !== undefined) parts.push(`${keys.phase}=${JSON.stringify(phase)}`);
      problems.push(`node ${n.name} carries a residual claim (${parts.join(', ')})`);
    }
  }
  return problems;
}

export interface Selection {
  /** nodes to roll, in roll order */
  selected: NodeState[];
  /** names (sorted) of nodes in scope already verified for every host of the run at its revision (src/rules/marker.ts) */
  upToDate: string[];
  /** requested names that are not nodes of the cluster (sorted); the caller errors on them */
  unknownNames: string[];
  /** every node the names and the selector select, verified or not, in listing order (the selection src/rules/revocation.ts tells apart) */
  inScope: NodeState[];
  /**
   * nodes in scope, up to date (not to roll), whose marker carries the revision for a host without a
   * proof of it (src/rules/marker.ts hostsToProve): **to prove**, in roll order, each with those hosts
   */
  toProve: Array<{ node: NodeState; hosts: HostToProve[] }>;
}

/**
 * Restrict to `names` (when given) and to the nodes whose labels match `selector` (when given: the
 * listing holds every node, and the selector is matched here as the apiserver would), then select the
 * nodes that do not carry the run's verified marker (src/rules/marker.ts carriesMarker: a host without
 * a proof, or with another revision's, or a changed verify-image), and every quarantined node.
 *
 * An empty `names` array restricts to nothing: "all nodes" is `undefined`, decided by the config.
 *
 * Order: workers by name, then control planes by name. Workers go first so that a bad credential
 * or a broken step is discovered where etcd quorum is not at stake.
 */
export function selectNodes(
  nodes: NodeState[],
  opts: { names?: string[]; selector?: LabelSelectorInput; want: MarkerWant; keys: AnnotationKeys },
): Selection {
  const known = new Set(nodes.map((n) => n.name));
  const wanted = opts.names === undefined ? undefined : new Set(opts.names);
  const unknownNames = wanted === undefined ? [] : [...wanted].filter((name) => !known.has(name)).sort(compareNames);

  const inScope = nodes.filter(
    (n) => (wanted === undefined || wanted.has(n.name)) && (opts.selector === undefined || matchesLabels(opts.selector, n.labels)),
  );
  // A quarantined node is never up to date, whatever verified marker it still carries from an
  // earlier roll: its Talos config may hold the new credential while its containerd runs the old one.
  // A node still claimed (an abandoned claim the run adopts: validateInventory let it through) is never
  // up to date either: its roll was cut short, whatever its marker says.
  const current = (n: NodeState) =>
    carriesMarker(n.annotations, opts.keys, opts.want) &&
    n.annotations[opts.keys.quarantined] === undefined &&
    n.annotations[opts.keys.owner] === undefined;
  const stale = inScope.filter((n) => !current(n));
  const upToDate = inScope
    .filter(current)
    .map((n) => n.name)
    .sort(compareNames);

  const rank = (n: NodeState): number => (n.role === 'worker' ? 0 : 1);
  const order = (a: NodeState, b: NodeState) => rank(a) - rank(b) || compareNames(a.name, b.name);
  const selected = [...stale].sort(order);
  // To roll or to prove: a node whose marker carries the revision for every host is not rolled (its
  // credential is in place); one of its entries that proves nothing yet makes it to prove. A quarantined
  // node is to roll, whatever its marker says.
  const toProve = inScope
    .filter(current)
    .sort(order)
    .map((node) => ({ node, hosts: hostsToProve(node.annotations, opts.keys, opts.want) }))
    .filter((p) => p.hosts.length > 0);
  return { selected, upToDate, unknownNames, inScope, toProve };
}

/**
 * What makes a fresh read a different machine (or a machine on its way out) than the inventory saw;
 * empty when it is the same. The rollout refuses the node on any entry: the uid and InternalIP are
 * how every later patch and every talosctl call find "this" node, and the role decides whether the
 * quorum gate applies.
 */
export function identityChanges(before: NodeState, fresh: NodeState): string[] {
  const changes: string[] = [];
  if (fresh.uid !== before.uid) changes.push(`uid changed from ${before.uid} to ${fresh.uid} (the node was re-created)`);
  const ipBefore = before.internalIPs.join(', ');
  const ipFresh = fresh.internalIPs.join(', ');
  if (ipFresh !== ipBefore) changes.push(`InternalIP changed from ${ipBefore || 'none'} to ${ipFresh || 'none'}`);
  if (fresh.role !== before.role) changes.push(`role changed from ${before.role} to ${fresh.role}`);
  if (fresh.deletionTimestamp) changes.push(`deletion started at ${fresh.deletionTimestamp}`);
  return changes;
}

/** A selection input that selects nothing: the input to name and what to say. */
export interface EmptySelection {
  input: 'nodes' | 'node-selector';
  message: string;
}

/**
 * The `nodes` / `node-selector` inputs, when given, must select at least one node of the cluster (an
 * already verified one counts: that run is clean). A selector that matches no node is read as a typo
 * (`pool=genral`), never as "nothing to do": a clean run would hide it on every merge forever. A node
 * pool that can legitimately be empty (an autoscaler scaled to zero) is not selected by the selector
 * alone: the README says what to do ("A selection that selects nothing"). `nodes` naming a node the
 * cluster lacks is said by the listing itself (`no such node`), before this.
 *
 * No selection input (every node): an empty cluster selects nothing and is a clean run, as there is no
 * input to blame.
 */
export function emptySelection(opts: { names: readonly string[]; selector?: string; inScope: number }): EmptySelection | undefined {
  if (opts.inScope > 0 || (!opts.selector && opts.names.length === 0)) return undefined;
  if (!opts.selector) return { input: 'nodes', message: `${opts.names.join(', ')} select no node of the cluster` };
  if (opts.names.length === 0) return { input: 'node-selector', message: `${opts.selector} matches no node of the cluster` };
  return {
    input: 'node-selector',
    message: `${opts.selector} matches none of the nodes named by nodes (${opts.names.join(', ')}): together they select no node`,
  };
}
