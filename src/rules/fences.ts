// Fence rules: what a leftover claim ("fence") on a node is, the exact command that
// releases it, and when `recover-fences` may release it on its own. Pure: src/fences/run.ts does the I/O.
//
// A fence is a node carrying our `owner` or `phase` annotation: a run claimed it and never released it
// (killed runner, a failure after the drain began). The inventory refuses to roll while any exists.
import type { LeaseState } from '../core/model/cluster.js';
import type { RunAttemptInfo } from '../core/model/workflowRun.js';
import type { Config } from '../core/config.js';
import type { AnnotationKeys, ClaimCapture, NodeState } from '../core/model/node.js';
import { parseOwnerToken, type OwnerToken } from '../core/owner.js';
import { shellQuote } from '../core/shell.js';
import { kubectlCommand, releaseCommand } from './commands.js';
import { recordedMarks } from './autoscalerMarks.js';
import { captureClaim } from './claim.js';
import { releaseLeasePatch } from './lease.js';
import { describeBlockers, liftQuarantine, quarantineOf } from './quarantine.js';
import { compareNames } from '../core/order.js';

export interface FenceRow {
  node: string;
  uid: string;
  /** the `owner` annotation as written; '' when missing */
  owner: string;
  /** the `phase` annotation as written; '' when missing */
  phase: string;
  /** the `was-cordoned` annotation as written; '' when missing */
  wasCordoned: string;
  /** `spec.unschedulable` is false now */
  schedulableNow: boolean;
  /** the owner's run attempt; undefined when the owner token is missing or does not parse */
  run?: RunAttemptInfo;
  /** the CAS-guarded `kubectl patch` that releases it; undefined without an owner to test */
  releaseCommand?: string;
  /** what the command assumes, or why there is none */
  note?: string;
}

export type FenceDecision =
  { node: string; action: 'release'; capture: ClaimCapture; reason: string } | { node: string; action: 'refuse'; reason: string };

export type LeaseDecision =
  | { action: 'none'; reason: string }
  | { action: 'release'; holder: string; reason: string }
  | { action: 'keep'; holder: string; reason: string };

/**
 * A quarantined node (`<prefix>/quarantined`): no fence (the quarantine gave the claim up, so
 * recover-fences never touches it), but a node left cordoned with the old credential in containerd
 * that a person must see: what blocked its drain, since when, by which run, and how to lift it.
 */
export interface QuarantineRow {
  node: string;
  uid: string;
  /** when it was quarantined (ISO); '' when the annotation does not say */
  since: string;
  /** the owner token of the run that quarantined it; '' when the annotation does not say */
  run: string;
  /** the schedulability lifting it restores; undefined when the annotation does not parse (then: stays cordoned) */
  wasCordoned?: boolean;
  /** what blocked its drain, one line */
  blockedBy: string;
  schedulableNow: boolean;
  /** a run holds it now (its owner annotation): it is being rolled again */
  claimedBy?: string;
  /** how to lift it: rerun after fixing the PDB, or the CAS-guarded patch by hand */
  lift: string;
  byHand: string;
  /** why the annotation could not be read, when it could not */
  note?: string;
}

export interface FenceJudgement {
  rows: FenceRow[];
  /** every quarantined node, sorted by name (not fences: recover-fences leaves them alone) */
  quarantined: QuarantineRow[];
  fences: FenceDecision[];
  lease: LeaseDecision;
}

export interface FenceInput {
  nodes: NodeState[];
  keys: AnnotationKeys;
  lease: LeaseState | undefined;
  /** keyed by the owner token string (a node's `owner`, the Lease's holderIdentity) */
  runs: ReadonlyMap<string, RunAttemptInfo>;
  /** kubeconfig/context for the printed commands */
  kubectl?: Pick<Config, 'kubeconfig' | 'kubeContext'>;
}

export function isFence(node: NodeState, keys: AnnotationKeys): boolean {
  return node.annotations[keys.owner] !== undefined || node.annotations[keys.phase] !== undefined;
}

/** Every owner token the fences and the Lease name (de-duplicated), i.e. every run to look up. */
export function ownersToLookUp(nodes: NodeState[], keys: AnnotationKeys, lease: LeaseState | undefined): string[] {
  const owners = new Set<string>();
  for (const n of nodes) {
    const o = n.annotations[keys.owner];
    if (o) owners.add(o);
  }
  if (lease?.holderIdentity) owners.add(lease.holderIdentity);
  return [...owners];
}

function wasCordonedValue(text: string | undefined): boolean | undefined {
  return text === 'true' ? true : text === 'false' ? false : undefined;
}

/**
 * The ClaimCapture a release needs, rebuilt from the node as it is now: the release patch tests the
 * uid and the owner token read here, so it fails (422) if either moved since this read.
 *
 * Restoring schedulability uses `was-cordoned`, the cordon state the claim found: `false` makes the
 * release uncordon the node, `true` leaves it cordoned (someone cordoned it for their own reason
 * before the run did). When the annotation is missing or garbled the capture says `true`, so the
 * printed command never uncordons a node that may have been cordoned on purpose.
 *
 * The autoscaler marks to remove are the ones the claim recorded on the node (`autoscaler-marks`,
 * src/rules/autoscalerMarks.ts recordedMarks), never the ones the node carries: an operator's are not
 * in the record, and a record naming another run than the node's owner token is nobody's to act on.
 */
export function fenceCapture(node: NodeState, keys: AnnotationKeys): ClaimCapture {
  // The node as it is now, but owned by the fence's token and with the cordon state from before its claim.
  const capture: ClaimCapture = {
    ...captureClaim(node, node.annotations[keys.owner] ?? '', keys),
    wasCordoned: wasCordonedValue(node.annotations[keys.wasCordoned]) ?? true,
  };
  // captureClaim names the marks a new claim would write; a release takes the record's, only when it
  // names the run whose token the node carries (one left by an earlier claim is nobody's to remove)
  delete capture.autoscalerMarks;
  delete capture.marksRecord;
  delete capture.marksFound;
  const recorded = recordedMarks(node, keys);
  return recorded !== undefined ? { ...capture, autoscalerMarks: recorded.marks, marksRecord: recorded.text } : capture;
}

/** The CAS-guarded command that frees the Lease from `holder` (fails if someone else holds it by then). */
export function leaseReleaseCommand(
  namespace: string,
  name: string,
  holder: string,
  kubectl: Pick<Config, 'kubeconfig' | 'kubeContext'> = {},
): string {
  return kubectlCommand(
    kubectl,
    `patch lease -n ${shellQuote(namespace)} ${shellQuote(name)} --type=json -p ${shellQuote(JSON.stringify(releaseLeasePatch(holder)))}`,
  );
}

function sameRunAttempt(a: OwnerToken, b: OwnerToken): boolean {
  return a.repository === b.repository && a.runId === b.runId && a.runAttempt === b.runAttempt;
}

function describeRun(run: RunAttemptInfo | undefined): string {
  if (!run) return 'was not looked up';
  const conclusion = run.conclusion ? ` (${run.conclusion})` : '';
  return `is ${run.state.replace('_', ' ')}${conclusion}${run.error ? `: ${run.error}` : ''}`;
}

function row(node: NodeState, input: FenceInput): FenceRow {
  const { keys } = input;
  const owner = node.annotations[keys.owner] ?? '';
  const wasCordoned = node.annotations[keys.wasCordoned] ?? '';
  const r: FenceRow = {
    node: node.name,
    uid: node.uid,
    owner,
    phase: node.annotations[keys.phase] ?? '',
    wasCordoned,
    schedulableNow: !node.unschedulable,
  };
  if (owner && parseOwnerToken(owner)) r.run = input.runs.get(owner);
  if (!owner) {
    r.note = 'no owner annotation, so no CAS-guarded release can be built: check who set the phase annotation and remove it by hand';
    return r;
  }
  r.releaseCommand = releaseCommand(fenceCapture(node, keys), keys, input.kubectl ?? {});
  if (wasCordonedValue(wasCordoned) === undefined) {
    r.note = `was-cordoned is ${wasCordoned ? `"${wasCordoned}"` : 'missing'}, so the command leaves the node cordoned: uncordon it yourself if it should run pods`;
  }
  return r;
}

/** Why recover-fences must leave this fence alone (empty: it may release it). */
function refusals(node: NodeState, input: FenceInput): string[] {
  const { keys, lease, runs } = input;
  const reasons: string[] = [];
  const ownerText = node.annotations[keys.owner];
  const owner = ownerText ? parseOwnerToken(ownerText) : undefined;
  const phase = node.annotations[keys.phase];
  if (!ownerText) reasons.push('no owner annotation: nobody can be asked whether the claim is still in use');
  else if (!owner) reasons.push(`owner ${JSON.stringify(ownerText)} is not an owner token of this action, so its run cannot be looked up`);
  if (phase === 'mutating') {
    reasons.push(
      'phase is mutating: the credential patch, drain or reboot may have begun and not finished; check the node (Ready, containerd, its workloads) and then release it with the command shown',
    );
  } else if (phase !== 'claimed') {
    reasons.push(`phase is ${phase === undefined ? 'missing' : JSON.stringify(phase)}, not claimed`);
  }
  if (ownerText && wasCordonedValue(node.annotations[keys.wasCordoned]) === undefined) {
    reasons.push('was-cordoned is missing or not true/false, so the schedulability to restore is unknown');
  }
  if (owner) {
    const run = runs.get(ownerText);
    if (run?.state !== 'completed')
      reasons.push(`the owner's run attempt ${describeRun(run)}; only a completed run is certainly no longer writing`);
  }
  if (lease?.holderIdentity) {
    const holder = parseOwnerToken(lease.holderIdentity);
    if (!owner || !holder || !sameRunAttempt(owner, holder)) {
      reasons.push(`the Lease is held by another run (${lease.holderIdentity}), which may be rolling nodes now`);
    }
  }
  return reasons;
}

function leaseDecision(input: FenceInput): LeaseDecision {
  const { lease, runs } = input;
  if (!lease) return { action: 'none', reason: 'the Lease does not exist' };
  const holder = lease.holderIdentity;
  if (!holder) return { action: 'none', reason: 'the Lease is free' };
  if (!parseOwnerToken(holder)) {
    return {
      action: 'keep',
      holder,
      reason: `holder ${JSON.stringify(holder)} is not an owner token of this action, so its run cannot be looked up`,
    };
  }
  const run = runs.get(holder);
  if (run?.state === 'completed') return { action: 'release', holder, reason: `the holder's run attempt ${describeRun(run)}` };
  return { action: 'keep', holder, reason: `the holder's run attempt ${describeRun(run)}` };
}

/**
 * Rows for the report and the recover-fences decisions.
 *
 * A fence is released ONLY when all hold: its owner token parses and GitHub says that run attempt is
 * `completed` (queued, in progress or unknown could still be writing, or start again); its phase is
 * `claimed` (nothing on Talos was touched — `mutating` needs a human); `was-cordoned` says what to
 * restore; and the Lease is absent, free, or held by that same run attempt (any other holder may be
 * rolling right now). Everything else is refused with all the reasons that apply.
 *
 * The Lease is released when its holder's run attempt is `completed`: that run can no longer write.
 */
export function quarantineRows(
  nodes: NodeState[],
  keys: AnnotationKeys,
  kubectl: Pick<Config, 'kubeconfig' | 'kubeContext'> = {},
): QuarantineRow[] {
  const rows: QuarantineRow[] = [];
  for (const n of [...nodes].sort((a, b) => compareNames(a.name, b.name))) {
    const q = quarantineOf(n, keys);
    if (!q) continue;
    const record = q.record ?? { wasCordoned: true, blockedBy: [] };
    const row: QuarantineRow = {
      node: n.name,
      uid: n.uid,
      since: q.record?.at ?? '',
      run: q.record?.run ?? '',
      blockedBy: q.record ? describeBlockers(q.record.blockedBy) : 'unknown',
      schedulableNow: !n.unschedulable,
      ...liftQuarantine(n, record, q.text, keys, kubectl),
    };
    if (q.record) row.wasCordoned = q.record.wasCordoned;
    const owner = n.annotations[keys.owner];
    if (owner !== undefined) row.claimedBy = owner;
    if (q.error) row.note = `the ${keys.quarantined} annotation cannot be read (${q.error}): lifting it leaves the node cordoned`;
    rows.push(row);
  }
  return rows;
}

export function judgeFences(input: FenceInput): FenceJudgement {
  const fenced = input.nodes.filter((n) => isFence(n, input.keys)).sort((a, b) => compareNames(a.name, b.name));
  const rows = fenced.map((n) => row(n, input));
  const fences: FenceDecision[] = fenced.map((n) => {
    const reasons = refusals(n, input);
    if (reasons.length > 0) return { node: n.name, action: 'refuse', reason: reasons.join('; ') };
    const run = input.runs.get(n.annotations[input.keys.owner]);
    const restore =
      n.annotations[input.keys.quarantined] !== undefined
        ? 'keep it cordoned and quarantined, as its claim found it'
        : n.annotations[input.keys.wasCordoned] === 'false'
          ? 'uncordon it (was-cordoned=false)'
          : 'keep it cordoned (was-cordoned=true)';
    return {
      node: n.name,
      action: 'release',
      capture: fenceCapture(n, input.keys),
      reason: `phase claimed, owner's run attempt ${describeRun(run)}: release and ${restore}`,
    };
  });
  return { rows, quarantined: quarantineRows(input.nodes, input.keys, input.kubectl), fences, lease: leaseDecision(input) };
}
