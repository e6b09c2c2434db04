// May the old registry credential be revoked now? The `old-credential-revocable` output and its
// summary line. Pure: the nodes the run last listed, this run's decision records in, a verdict out.
//
// Why this rule, in plain words: revoking the old credential at the registry breaks every pull of a
// containerd that still holds it (ImagePullBackOff, the day this action exists to prevent). So the
// answer is `true` only on proof about every node the inputs select:
// - **Every node the `nodes` / `node-selector` inputs select counts**, not only those this run rolled:
//   a node left out because it already verified this revision counts (its marker is the proof), and
//   so does a node the roll never reached or a quarantined one.
// - **The proof is this revision's verified marker for every host the run rolls** (src/rules/marker.ts),
//   which the action writes only after it proved the new credential loaded (src/rules/evidence.ts,
//   src/rules/proof.ts). A node without it, or with another revision's, may hold the old credential.
// - **A quarantined node holds it** (cordoned, never rebooted: src/rules/quarantine.ts), whatever
//   marker an earlier roll left; **a claimed or fenced node may** (a run stopped on it: Talos may or may
//   not have changed, and a person has to look).
// - **A node this run released with a warning may hold it**: its post-reboot proof was undecided and no
//   `verify-image` pull settled it, so on Talos ≤ 1.13 containerd may have read its config before the
//   credential was written (README "After a reboot, a proof that cannot be decided"). The marker was
//   written, so only this run can tell; a later run sees the marker only.
// - **This run's record of a node is fresher than the listing** that selected it: the listing may
//   predate the roll of the node (the last pass of a run that hit its pass limit, a relisting that
//   failed), while the record says how this run left it.
// - **No node selected is `false`**: a mistyped selector must not read as "safe".
// - **A plan tells what is true now**, before the roll: `true` only when every selected node already
//   verified this revision (the plan's result is `clean`); never a forecast of what `apply` will do.
// Nodes outside the inputs' selection, and nodes the cluster creates later (an autoscaler boots them
// from its own templates or machine configs, which the action does not see), are not judged: the
// verdict counts the first and names the second.
import type { AnnotationKeys, NodeState } from '../core/model/node.js';
import type { DecisionRecord, Outcome } from '../core/model/record.js';
import { compareNames } from '../core/order.js';
import { notVerifiedWhy } from './marker.js';

/** Why a node still holds, or may hold, the old credential. */
export type HolderKind = 'not-verified' | 'not-reached' | 'planned' | 'quarantined' | 'claimed' | 'proof-undecided' | 'refused' | 'failed';

export interface OldCredentialHolder {
  node: string;
  kind: HolderKind;
  /** one line a person reads */
  why: string;
}

export interface RevocationVerdict {
  revocable: boolean;
  /** one line: why the answer is what it is */
  reason: string;
  /** the nodes that hold or may hold the old credential, sorted by name; empty when revocable */
  holders: OldCredentialHolder[];
  /** how many nodes the inputs select (the nodes judged) */
  judged: number;
  /** how many nodes of the cluster the inputs leave out (not judged) */
  outsideScope: number;
}

/** What the rule judges. */
export interface RevocationInput {
  mode: 'apply' | 'plan';
  revision: string;
  /** the registry hosts the run rolls: a node counts as verified when its marker proves every one */
  hosts: readonly string[];
  keys: AnnotationKeys;
  /**
   * The nodes the `nodes` / `node-selector` inputs select, as the run last listed them, and how many
   * of the cluster's nodes they leave out. Undefined: the run ended before it listed any.
   */
  scope?: { nodes: readonly NodeState[]; outside: number };
  /** this run's decision records (they win over the listing: see above) */
  records: readonly DecisionRecord[];
  /** selected nodes the roll stopped before */
  notReached?: readonly string[];
}

/** What a node's own record, from this run, says; undefined: the node left no doubt (verified now). */
function fromRecord(r: DecisionRecord, revision: string): OldCredentialHolder | undefined {
  const node = r.node;
  const outcome: Outcome = r.outcome;
  if (outcome === 'rebooted' || outcome === 'reboot-skipped') {
    if (r.proofUndecided?.settledBy !== 'warning') return undefined;
    return { node, kind: 'proof-undecided', why: `released with a warning: ${r.proofUndecided.residualRisk}` };
  }
  if (outcome === 'quarantined') {
    return { node, kind: 'quarantined', why: `quarantined by this run (its drain timed out): ${r.reason}` };
  }
  if (outcome === 'planned-reboot') {
    return { node, kind: 'planned', why: `not verified for revision ${revision}; the plan would reboot it: ${r.reason}` };
  }
  if (outcome === 'planned-skip') {
    return { node, kind: 'planned', why: `not verified for revision ${revision} (only an apply proves and marks it): ${r.reason}` };
  }
  return { node, kind: outcome, why: `${outcome} in this run: ${r.reason}` };
}

/** What the listing says of a node this run left no record for; undefined: verified for this revision. */
function fromListing(n: NodeState, input: RevocationInput): OldCredentialHolder | undefined {
  const { keys, revision } = input;
  const a = n.annotations;
  const node = n.name;
  if (a[keys.owner] !== undefined || a[keys.phase] !== undefined) {
    const phase = a[keys.phase] ?? '(none)';
    return { node, kind: 'claimed', why: `carries a claim (phase=${phase}, owner ${a[keys.owner] ?? '(none)'}): a run stopped on it` };
  }
  if (a[keys.quarantined] !== undefined) {
    return { node, kind: 'quarantined', why: 'quarantined: cordoned and not rebooted, its containerd keeps the old credential' };
  }
  const seen = notVerifiedWhy(a, keys, { hosts: input.hosts, revision });
  if (seen === undefined) return undefined;
  if (input.notReached?.includes(node)) return { node, kind: 'not-reached', why: `${seen}; the roll stopped before it` };
  return { node, kind: 'not-verified', why: seen };
}

const NOT_SEEN = 'nodes the cluster creates later boot from their own templates or machine configs, which the action does not see';

export function judgeRevocation(input: RevocationInput): RevocationVerdict {
  if (!input.scope) {
    return {
      revocable: false,
      reason: 'the run ended before it listed the nodes, so no node was judged',
      holders: [],
      judged: 0,
      outsideScope: 0,
    };
  }
  const { nodes, outside } = input.scope;
  const outsideNote = outside > 0 ? `; ${outside} node(s) outside nodes/node-selector were not judged` : '';
  if (nodes.length === 0) {
    return {
      revocable: false,
      reason: `the inputs select no node, so nothing proves the new credential is in use${outsideNote}`,
      holders: [],
      judged: 0,
      outsideScope: outside,
    };
  }
  // a record by uid first: a node re-created under its name is another machine than the one rolled
  const byUid = new Map(input.records.map((r) => [r.uid, r]));
  const holders = nodes
    .map((n) => {
      const r = byUid.get(n.uid);
      return r ? fromRecord(r, input.revision) : fromListing(n, input);
    })
    .filter((h): h is OldCredentialHolder => h !== undefined)
    .sort((a, b) => compareNames(a.node, b.node));
  const revocable = holders.length === 0;
  const reason = revocable
    ? `all ${nodes.length} node(s) the inputs select carry the verified marker of revision ${input.revision} for ${input.hosts.join(', ')}, none quarantined or claimed${outsideNote}; ${NOT_SEEN}`
    : `${holders.length} of ${nodes.length} node(s) the inputs select still hold or may hold the old credential${input.mode === 'plan' ? ' (a plan changes nothing: this is the cluster before the roll)' : ''}${outsideNote}`;
  return { revocable, reason, holders, judged: nodes.length, outsideScope: outside };
}
