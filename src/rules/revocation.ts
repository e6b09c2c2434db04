// May the old registry credential be revoked now, and has the selection converged? The
// `old-credential-revocable` and `selection-converged` outputs and their summary line. Pure: every node
// the run last listed, which of them the inputs select, this run's decision records in, a verdict out.
//
// Why this rule, in plain words: revoking the old credential at the registry breaks every pull of a
// containerd that still holds it (ImagePullBackOff, the day this action exists to prevent), on every
// node of the cluster, whatever this run rolled. So the answer is `true` only on proof about every node
// of the cluster the run listed:
// - **Every node of the cluster counts**, not only those the `nodes` / `node-selector` inputs select:
//   a run scoped to one pool must not answer `true` while a control plane outside it still runs the
//   old credential (a pool's run once said `true` so, and the revocation it gated broke that node's
//   pulls). A node left out because it already verified this revision counts by its marker, and so do
//   a node the roll never reached, a quarantined one and one outside the selection. The selection's
//   own answer is `selectionConverged` (the `selection-converged` output): the same judgement over the
//   selected nodes only, which says nothing about the others.
// - **The proof is this revision's verified marker for every host the run rolls** (`markerMissing`,
//   src/rules/marker.ts, the one place it is
//   read), which the action writes only after it proved the new credential loaded (src/rules/evidence.ts,
//   src/rules/proof.ts). A node without it, or with another revision's, may hold the old credential.
// - **A quarantined node holds it** (cordoned, never rebooted: src/rules/quarantine.ts), whatever
//   marker an earlier roll left; **a claimed or fenced node may** (a run stopped on it: Talos may or may
//   not have changed, and a person has to look).
// - **A node released with a warning may hold it**: its post-reboot proof was undecided and no
//   `verify-image` pull settled it, so on Talos ≤ 1.13 containerd may have read its config before the
//   credential was written (docs/decision-rules.md, "After a reboot, a proof that cannot be decided").
//   This run's record says so for a node it released; the marker says so in every later run: its entry
//   records `proof: "undecided"` (src/rules/marker.ts), and the node counts until a run proves it. So
//   does an entry that does not say how it was proven (written before the marker did: the safest
//   reading, since such a release wrote the same marker as a proven one).
// - **What this run's proving found is fresher than the listing** (src/pipeline/prove.ts): a node it
//   proved no longer counts, one it could not prove counts with the reason and what would prove it.
// - **This run's record of a node is fresher than the listing**: the listing may predate the roll of
//   the node (the last pass of a run that hit its pass limit, a relisting that failed), while the
//   record says how this run left it.
// - **No node listed is `false`**, and so is no node selected for `selectionConverged`: a mistyped
//   selector must not read as "the selection converged".
// - **A plan tells what is true now**, before the roll: `true` only when every node already verified
//   this revision; never a forecast of what `apply` will do.
// Nodes the cluster creates later (an autoscaler boots them from its own templates or machine
// configs, which the action does not see) are not judged: the verdict names them every time.
import { hostsToProve, notVerifiedWhy } from './marker.js';
import type { AnnotationKeys, NodeState } from '../core/model/node.js';
import type { ProofCheck } from '../core/model/proofCheck.js';
import type { DecisionRecord, Outcome } from '../core/model/record.js';
import type { OldCredentialHolder, RevocationVerdict } from '../core/model/revocation.js';
import { compareNames } from '../core/order.js';

export type { HolderKind, OldCredentialHolder, RevocationVerdict } from '../core/model/revocation.js';

/** What the rule judges. */
export interface RevocationInput {
  mode: 'apply' | 'plan';
  revision: string;
  /** the registry hosts the run rolls: a node counts as verified when its marker proves every one */
  hosts: readonly string[];
  keys: AnnotationKeys;
  /**
   * Every node of the cluster as the run last listed it, and the uids of those the `nodes` /
   * `node-selector` inputs select. Undefined: the run ended before it listed any.
   */
  listing?: { nodes: readonly NodeState[]; selected: ReadonlySet<string> };
  /** this run's decision records (they win over the listing: see above) */
  records: readonly DecisionRecord[];
  /** selected nodes the roll stopped before */
  notReached?: readonly string[];
  /** what this run's proving found of the nodes to prove (they win over the listing: see above) */
  proofChecks?: readonly ProofCheck[];
}

type Holder = Omit<OldCredentialHolder, 'selected'>;

/**
 * Does the node carry this revision's verified marker? Undefined when it does; otherwise what it
 * carries instead, in words. The one place the marker is read, so a change of what marks a node
 * verified (one marker per registry host) changes this body only.
 */
export function markerMissing(n: NodeState, keys: AnnotationKeys, hosts: readonly string[], revision: string): string | undefined {
  return notVerifiedWhy(n.annotations, keys, { hosts, revision });
}

/** What a node's own record, from this run, says; undefined: the node left no doubt (verified now). */
function fromRecord(r: DecisionRecord, revision: string): Holder | undefined {
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
function fromListing(n: NodeState, selected: boolean, input: RevocationInput): Holder | undefined {
  const { keys, revision, hosts } = input;
  const a = n.annotations;
  const node = n.name;
  if (a[keys.owner] !== undefined || a[keys.phase] !== undefined) {
    const phase = a[keys.phase] ?? '(none)';
    return { node, kind: 'claimed', why: `carries a claim (phase=${phase}, owner ${a[keys.owner] ?? '(none)'}): a run stopped on it` };
  }
  if (a[keys.quarantined] !== undefined) {
    return { node, kind: 'quarantined', why: 'quarantined: cordoned and not rebooted, its containerd keeps the old credential' };
  }
  const seen = markerMissing(n, keys, hosts, revision);
  if (seen === undefined) return unproven(n, selected, input);
  if (!selected) {
    return { node, kind: 'not-verified', why: `${seen}; outside nodes/node-selector, so this run does not roll it` };
  }
  if (input.notReached?.includes(node)) return { node, kind: 'not-reached', why: `${seen}; the roll stopped before it` };
  return { node, kind: 'not-verified', why: seen };
}

/**
 * A node whose marker carries the revision for every host: a holder when an entry proves nothing yet
 * (src/rules/marker.ts hostsToProve), unless this run proved it since the listing; undefined otherwise.
 */
function unproven(n: NodeState, selected: boolean, input: RevocationInput): Holder | undefined {
  const open = hostsToProve(n.annotations, input.keys, { hosts: input.hosts, revision: input.revision });
  if (open.length === 0) return undefined;
  const node = n.name;
  const check = input.proofChecks?.find((c) => c.uid === n.uid);
  if (check?.proven) return undefined;
  const why = open.map((h) => h.why).join('; ');
  if (check) {
    return {
      node,
      kind: 'proof-undecided',
      why: `${why}; not proven by this run: ${check.detail}${check.nextStep ? `. ${check.nextStep}` : ''}`,
    };
  }
  const later = !selected
    ? 'outside nodes/node-selector, so this run does not prove it'
    : input.mode === 'plan'
      ? 'an apply run with nothing to roll proves it (a read of the evidence, or a pull of verify-image)'
      : 'a run with nothing to roll proves it (a read of the evidence, or a pull of verify-image)';
  return { node, kind: 'proof-undecided', why: `${why}; ${later}` };
}

/**
 * A node this run released verified, for the hosts its roll was for: another host of the run whose
 * entry proves nothing yet (the roll kept it as read) still makes it a holder.
 */
function notRolledUnproven(n: NodeState, r: DecisionRecord, selected: boolean, input: RevocationInput): Holder | undefined {
  const rolled = new Set((r.hosts ?? []).map((h) => h.host));
  const others = input.hosts.filter((h) => !rolled.has(h));
  return others.length === 0 || rolled.size === 0 ? undefined : unproven(n, selected, { ...input, hosts: others });
}

const NOT_SEEN = 'nodes the cluster creates later boot from their own templates or machine configs, which the action does not see';

export function judgeRevocation(input: RevocationInput): RevocationVerdict {
  if (!input.listing) {
    return {
      revocable: false,
      reason: 'the run ended before it listed the nodes, so no node was judged',
      holders: [],
      judged: 0,
      outsideScope: 0,
      selectionConverged: false,
    };
  }
  const { nodes, selected } = input.listing;
  const inSelection = nodes.filter((n) => selected.has(n.uid)).length;
  const outside = nodes.length - inSelection;
  if (nodes.length === 0) {
    return {
      revocable: false,
      reason: 'the cluster lists no node, so nothing proves the new credential is in use',
      holders: [],
      judged: 0,
      outsideScope: 0,
      selectionConverged: false,
    };
  }
  // a record by uid first: a node re-created under its name is another machine than the one rolled
  const byUid = new Map(input.records.map((r) => [r.uid, r]));
  const holders = nodes
    .map((n): OldCredentialHolder | undefined => {
      const r = byUid.get(n.uid);
      const isSelected = selected.has(n.uid);
      const h = r ? (fromRecord(r, input.revision) ?? notRolledUnproven(n, r, isSelected, input)) : fromListing(n, isSelected, input);
      return h && { ...h, selected: isSelected };
    })
    .filter((h): h is OldCredentialHolder => h !== undefined)
    .sort((a, b) => compareNames(a.node, b.node));
  const revocable = holders.length === 0;
  const selectionConverged = inSelection > 0 && !holders.some((h) => h.selected);
  const reason = revocable
    ? `all ${nodes.length} node(s) of the cluster carry the verified marker of revision ${input.revision} for ${input.hosts.join(', ')}, each proven, none quarantined or claimed${outsideNote(outside)}${
        inSelection === 0 ? '; the inputs select no node' : ''
      }; ${NOT_SEEN}`
    : `${holders.length} of ${nodes.length} node(s) of the cluster still hold or may hold the old credential${outsideNote(holders.filter((h) => !h.selected).length)}${
        input.mode === 'plan' ? ' (a plan changes nothing: this is the cluster before the roll)' : ''
      }; ${selectionNote(inSelection, selectionConverged)}`;
  return { revocable, reason, holders, judged: nodes.length, outsideScope: outside, selectionConverged };
}

/** how many of the nodes just counted are outside the selection, when any */
function outsideNote(outside: number): string {
  return outside > 0 ? ` (${outside} of them outside nodes/node-selector)` : '';
}

function selectionNote(inSelection: number, converged: boolean): string {
  if (inSelection === 0) return 'the inputs select no node';
  return converged
    ? `the ${inSelection} node(s) the inputs select all carry it (selection converged)`
    : 'the nodes the inputs select have not all converged';
}
