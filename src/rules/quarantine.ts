// Quarantine rules (`undrainable: quarantine`): a node whose drain timed out is not rebooted and not
// uncordoned. One CAS-guarded JSON Patch gives up the claim, keeps the cordon and writes the
// `<prefix>/quarantined` annotation: a JSON object (QuarantineRecord, src/rules/quarantineRecord.ts) that says why, when, by
// which run, and whether the node was cordoned before the run, so a later run restores it right.
// Pure: the pipeline reads the PDBs and sends the patch (src/pipeline/quarantine.ts).
import { matchesLabels, type LabelOperator, type LabelRequirement } from '../core/labelSelector.js';
import type { Config } from '../core/config.js';
import type { LabelSelector, PdbState, PodLabels } from '../core/model/cluster.js';
import type { AnnotationKeys, ClaimCapture, NodeState } from '../core/model/node.js';
import type { JsonPatchOp } from '../core/model/patch.js';
import type { DrainBlocker, Outcome } from '../core/model/record.js';
import { shellQuote } from '../core/shell.js';
import { releaseMarkOps } from './autoscalerMarks.js';
import { annotationPath, holdTests } from './claim.js';
import { kubectlCommand } from './commands.js';
import { formatQuarantine, quarantineOf, type QuarantineRecord } from './quarantineRecord.js';
import type { Waiting } from './schedule.js';
import { compareNames } from '../core/order.js';

export { formatQuarantine, parseQuarantine, quarantineOf, type QuarantineRecord } from './quarantineRecord.js';

/**
 * The quarantine: ONE JSON Patch, applied atomically.
 * - test: same uid and our owner token (holdTests: we only give up a claim we still hold), and
 *   `spec.unschedulable` true: the cordon this run set (or found) still stands. Someone who
 *   uncordoned the node meanwhile changed it under us; the patch then fails and the node is left as
 *   they set it.
 * - remove owner; `phase` and `was-cordoned` are first `add`ed then removed (a `remove` of a missing
 *   key fails the whole patch, as in the release);
 * - the autoscaler marks the claim wrote, and their record, removed as by a release (releaseMarkOps):
 *   nothing of the claim stays on the node;
 * - add `quarantined` (the record). No `spec.unschedulable` write: the cordon stays as it is, and no
 *   verified marker: the node is not verified.
 */
export function buildQuarantinePatch(capture: ClaimCapture, keys: AnnotationKeys, record: QuarantineRecord): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [...holdTests(capture, keys), { op: 'test', path: '/spec/unschedulable', value: true }];
  ops.push({ op: 'remove', path: annotationPath(keys.owner) });
  for (const key of [keys.phase, keys.wasCordoned]) {
    ops.push({ op: 'add', path: annotationPath(key), value: '' });
    ops.push({ op: 'remove', path: annotationPath(key) });
  }
  ops.push(...releaseMarkOps(capture, keys));
  ops.push({ op: 'add', path: annotationPath(keys.quarantined), value: formatQuarantine(record) });
  return ops;
}

/** The record this run writes: `wasCordoned` from the claim (itself taken from an earlier quarantine, see captureClaim). */
export function quarantineRecord(args: {
  capture: ClaimCapture;
  drainTimeout: string;
  blockedBy: DrainBlocker[];
  atMs: number;
  run: string;
}): QuarantineRecord {
  return {
    v: 1,
    reason: 'drain-timeout',
    drainTimeout: args.drainTimeout,
    blockedBy: args.blockedBy,
    at: new Date(args.atMs).toISOString(),
    run: args.run,
    wasCordoned: args.capture.wasCordoned,
  };
}

// ---------------------------------------------------------------------------------------------
// What blocked the drain: pods named by kubectl drain, matched to the PDBs of their namespace.
// ---------------------------------------------------------------------------------------------

/**
 * Whether a label selector selects `labels`, with the apiserver's semantics
 * (k8s.io/apimachinery pkg/apis/meta/v1/helpers.go LabelSelectorAsSelector): every matchLabels pair
 * and every expression must hold; `In` needs the key with one of the values, `NotIn` holds when the
 * key is absent or has none of them, `Exists` / `DoesNotExist` test the key only; an unknown
 * operator selects nothing. An empty selector selects every pod: a policy/v1 PDB with `selector: {}`
 * covers the whole namespace. No selector at all selects nothing.
 */
export function selectorMatches(selector: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (!selector) return false;
  const requirements: LabelRequirement[] = Object.entries(selector.matchLabels ?? {}).map(([key, v]) => ({
    key,
    operator: '=',
    values: [v],
  }));
  for (const x of selector.matchExpressions ?? []) {
    const operator = EXPRESSION_OPERATORS[x.operator];
    if (!operator) return false;
    requirements.push({ key: x.key, operator, values: x.values ?? [] });
  }
  // one Requirement.Matches for the PDB's structured selector and the node-selector's text alike
  return matchesLabels({ text: '', requirements }, labels);
}

/** metav1.LabelSelectorOperator → the selector package's operator (LabelSelectorAsSelector). */
const EXPRESSION_OPERATORS: Readonly<Record<string, LabelOperator | undefined>> = {
  In: 'in',
  NotIn: 'notin',
  Exists: 'exists',
  DoesNotExist: 'doesNotExist',
};

/**
 * Groups the pods that kept the drain from finishing (`namespace/name`) by the PDB that covers each
 * one (read from their namespaces: `pdbs`, `pods`). A pod no PDB covers (stuck terminating, or gone
 * since) is listed in a blocker without a PDB. Order: by PDB name, the uncovered pods last; pods sorted.
 */
export function drainBlockers(blockedPods: string[], pdbs: PdbState[], pods: PodLabels[]): DrainBlocker[] {
  const labelsOf = new Map(pods.map((p) => [`${p.namespace}/${p.name}`, p.labels]));
  const byPdb = new Map<string, DrainBlocker>();
  const uncovered: string[] = [];
  for (const ref of [...new Set(blockedPods)].sort()) {
    const ns = ref.slice(0, ref.indexOf('/'));
    const labels = labelsOf.get(ref);
    const covering = labels ? pdbs.filter((b) => b.namespace === ns && selectorMatches(b.selector, labels)) : [];
    if (covering.length === 0) uncovered.push(ref);
    for (const b of covering) {
      const id = `${b.namespace}/${b.name}`;
      const blocker = byPdb.get(id) ?? { pdb: id, status: { ...b.status }, pods: [] };
      blocker.pods.push(ref);
      byPdb.set(id, blocker);
    }
  }
  const out = [...byPdb.values()].sort((a, b) => compareNames(a.pdb!, b.pdb!));
  if (uncovered.length > 0) out.push({ pods: uncovered });
  return out;
}

/** `PDB default/web-pdb (allows 0 disruptions, 1/1 healthy) holding default/web-1` …, one line. */
export function describeBlockers(blockers: DrainBlocker[]): string {
  if (blockers.length === 0) return 'kubectl drain named no pod it was waiting for';
  return blockers
    .map((b) => {
      const pods = b.pods.join(', ');
      if (!b.pdb) return `pods no PodDisruptionBudget covers (still terminating, or gone since): ${pods}`;
      const s = b.status;
      const status = s ? ` (allows ${s.disruptionsAllowed} disruptions, ${s.currentHealthy}/${s.desiredHealthy} healthy)` : '';
      return `PodDisruptionBudget ${b.pdb}${status} holding ${pods}`;
    })
    .join('; ');
}

/**
 * How a person lifts the quarantine. The way that leaves the node right (`lift`): let the PDBs allow
 * the eviction, then rerun; the rerun drains and reboots the node, and its verified release restores
 * the schedulability from before the first quarantine and removes the annotation in one patch.
 * By hand instead (`byHand`; the node then keeps running the OLD credential until it is rebooted):
 * one CAS-guarded patch that removes the annotation and uncordons only when the node was schedulable
 * before; it fails (422) if a run claimed or re-quarantined the node since it was printed.
 */
export function liftQuarantine(
  node: Pick<NodeState, 'name' | 'uid'>,
  record: Pick<QuarantineRecord, 'wasCordoned' | 'blockedBy'>,
  annotationText: string,
  keys: AnnotationKeys,
  config: Pick<Config, 'kubeconfig' | 'kubeContext'>,
): { lift: string; byHand: string } {
  const ops: JsonPatchOp[] = [
    { op: 'test', path: '/metadata/uid', value: node.uid },
    { op: 'test', path: annotationPath(keys.quarantined), value: annotationText },
    { op: 'remove', path: annotationPath(keys.quarantined) },
  ];
  if (!record.wasCordoned) ops.push({ op: 'add', path: '/spec/unschedulable', value: false });
  const pdbs = record.blockedBy.flatMap((b) => (b.pdb ? [`PodDisruptionBudget ${b.pdb}`] : []));
  const fix = pdbs.length ? `let ${pdbs.join(', ')} allow the eviction` : 'let its pods be evicted';
  const keep = record.wasCordoned ? ' (it stays cordoned: it was cordoned before the run)' : '';
  return {
    lift: `${fix}, then rerun: the rerun reboots ${node.name} and restores its schedulability${keep}`,
    byHand: kubectlCommand(config, `patch node ${node.name} --type=json -p ${shellQuote(JSON.stringify(ops))}`),
  };
}

/** The lift as one next step a person reads (the summary, the error). */
export function liftNextStep(q: { lift: string; byHand: string }): string {
  return `To lift the quarantine, ${q.lift}. Or by hand (the node keeps the OLD credential in containerd until it is rebooted): ${q.byHand}`;
}

// ---------------------------------------------------------------------------------------------
// A quarantined node is capacity out of service (src/rules/schedule.ts rules 1 and 3).
// ---------------------------------------------------------------------------------------------

/** A quarantined node as the scheduler counts it and the capacity stop names it. */
export interface QuarantinedOut {
  name: string;
  role: NodeState['role'];
  labels: Record<string, string>;
  /** quarantined by this run (its drain timed out in this run) */
  byThisRun: boolean;
  /** from the annotation of an earlier run's quarantine: when, and by which run (empty when unreadable) */
  at?: string;
  run?: string;
}

/**
 * The nodes a listing shows quarantined: every node carrying the `quarantined` annotation, selected
 * or not (an earlier run's quarantine outside this run's selection still holds capacity). An annotation
 * that does not parse still quarantines: the node is cordoned because of it.
 */
export function quarantinedNodes(nodes: readonly NodeState[], keys: Pick<AnnotationKeys, 'quarantined'>): QuarantinedOut[] {
  return nodes.flatMap((n) => {
    const q = quarantineOf(n, keys);
    if (!q) return [];
    return [{ name: n.name, role: n.role, labels: n.labels, byThisRun: false, at: q.record?.at, run: q.record?.run }];
  });
}

/**
 * Whether a node is quarantined once its run in this run ended, from how it ended: its own quarantine
 * (`quarantined`), or a verified release, which lifts an earlier one in the same patch (src/rules/release.ts);
 * any other end gives back what the claim found (still quarantined if it was).
 */
export function quarantinedAfter(wasQuarantined: boolean, outcome: Outcome): boolean {
  if (outcome === 'quarantined') return true;
  if (outcome === 'rebooted' || outcome === 'reboot-skipped') return false;
  return wasQuarantined;
}

/**
 * Why the roll stopped when quarantined nodes hold the capacity: the nodes never started, what each
 * waits for, and each quarantined node counted (by this run, or since when and by which run).
 */
export function capacityStopMessage(args: {
  notStarted: readonly Waiting[];
  quarantined: readonly QuarantinedOut[];
  maxUnavailable: number;
  topologyKey?: string;
}): { message: string; nextStep: string } {
  const { notStarted, quarantined, maxUnavailable, topologyKey } = args;
  const who = quarantined
    .map(
      (q) =>
        `${q.name} (${q.byThisRun ? 'quarantined by this run' : `quarantined${q.at ? ` since ${q.at}` : ''}${q.run ? ` by ${q.run}` : ''}`})`,
    )
    .join(', ');
  const counted = `max-unavailable (${maxUnavailable})${topologyKey ? ` and the ${topologyKey} they are in` : ''}`;
  const waits = notStarted.map((w) => `${w.node}: ${w.message}`).join('; ');
  return {
    message:
      `the roll stopped with ${notStarted.length} node(s) not started (${notStarted.map((w) => w.node).join(', ')}): ` +
      `quarantined nodes are out of service and count toward ${counted}, so starting another would exceed it. ` +
      `Quarantined: ${who}. Not started: ${waits}`,
    nextStep:
      'Lift the quarantine of the nodes named (their own next step says how; `mode: fences` lists every quarantined node), or raise max-unavailable, then rerun.',
  };
}
