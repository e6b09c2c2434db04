// Claim rules: how the action takes exclusive hold of a node before it drains it, how it tells a
// benign race from a real conflict, and how it re-checks its hold later (the guard).
//
// The first bug of the old script: its claim was a JSON Patch guarded by `test /metadata/resourceVersion`.
// Every write to a Node bumps that (a kubelet status patch, a label, anybody's annotation, the node
// lifecycle controller adding the cordon-mirror taint), so the claim failed on busy nodes however
// often it was retried. The claim here tests only what drain safety depends on, so unrelated writes
// cannot break it, while a concurrent cordon, a new taint, another owner, a replaced node or a started
// deletion still do. (docs/kubernetes-facts.md#k4-json-patch-atomic: the apiserver applies a JSON Patch atomically to the
// latest object and fails it as a whole with 422 when a `test` fails.)
import type { AnnotationKeys, ClaimCapture, NodeState, Taint } from '../core/model/node.js';
import type { JsonPatchOp } from '../core/model/patch.js';
import type { AnnotatedPhase } from '../core/model/phase.js';
import { claimMarkOps, claimMarkValues, formatMarksRecord, marksAppeared, marksFound, marksToWrite } from './autoscalerMarks.js';
import { annotationPath } from './pointer.js';
import { quarantineOf } from './quarantineRecord.js';

export { annotationPath, escapePointer } from './pointer.js';
export {
  ADVISORY_TAINT,
  CNI_AGENT_TAINT_KEY,
  CONDITION_TAINTS,
  CONDITION_TAINT_KEYS,
  CONTROLLER_TAINTS,
  LIFECYCLE_TAINT_KEYS,
  MIRROR_TAINT,
  isControllerTaint,
  lifecycleTaints,
  schedulingTaints,
  taintId,
} from './taints.js';
import { CONTROLLER_TAINTS, isControllerTaint, kindOf, schedulingTaints } from './taints.js';

const CLAIMED: AnnotatedPhase = 'claimed';

/**
 * What the claim captures. `wasCordoned` is the schedulability to give back once the node is verified:
 * `spec.unschedulable` as read, except on a quarantined node (with `keys`): that one is cordoned BECAUSE
 * of the quarantine, so the time before comes from the quarantine's record (src/rules/quarantineRecord.ts
 * quarantineOf; an unreadable record counts as cordoned), and `quarantined` keeps the annotation as read.
 */
export function captureClaim(node: NodeState, owner: string, keys?: Pick<AnnotationKeys, 'quarantined'>): ClaimCapture {
  const quarantine = keys ? quarantineOf(node, keys) : undefined;
  const marks = marksToWrite(node);
  const found = marksFound(node);
  return {
    node: node.name,
    uid: node.uid,
    internalIP: node.internalIPs[0] ?? '',
    role: node.role,
    wasCordoned: quarantine ? quarantine.wasCordoned : node.unschedulable,
    taints: node.taints.map((t) => ({ ...t })),
    schedulingTaints: schedulingTaints(node.taints),
    owner,
    hadAnnotationsMap: node.hasAnnotationsMap,
    ...(quarantine ? { quarantined: quarantine.text } : {}),
    ...(marks.length > 0 ? { autoscalerMarks: marks, marksRecord: formatMarksRecord(owner, marks) } : {}),
    ...(Object.keys(found).length > 0 ? { marksFound: found } : {}),
  };
}

/**
 * Whether the node was cordoned when the claim read it: as captured, or because a quarantine (which
 * always leaves the cordon) was on it. What the claim's re-reads and an unverified release compare with.
 */
export function cordonedAtClaim(capture: Pick<ClaimCapture, 'wasCordoned' | 'quarantined'>): boolean {
  return capture.quarantined !== undefined || capture.wasCordoned;
}

/**
 * A taint as the apiserver serializes it: `value` and `timeAdded` are `omitempty`, so an empty or
 * missing one is absent, and a `test` op's object must have exactly the stored key set (docs/kubernetes-facts.md#k6-omitempty).
 */
function storedTaint(t: Taint): Record<string, string> {
  const out: Record<string, string> = { key: t.key };
  if (t.value !== undefined && t.value !== '') out.value = t.value;
  out.effect = t.effect;
  if (t.timeAdded !== undefined && t.timeAdded !== '') out.timeAdded = t.timeAdded;
  return out;
}

/**
 * `test /spec/taints` value. An empty list is stored as an absent key (omitempty), and `test` of an
 * absent key passes only with `null`; `[]` would fail on every untainted node.
 */
function taintsTestValue(taints: Taint[]): Record<string, string>[] | null {
  return taints.length === 0 ? null : taints.map(storedTaint);
}

/**
 * The claim's annotation writes, then the autoscaler marks it writes and their record
 * (src/rules/autoscalerMarks.ts); the whole map when the node has none (add below a missing parent fails).
 */
function claimAnnotationOps(node: NodeState, owner: string, keys: AnnotationKeys): JsonPatchOp[] {
  const capture = captureClaim(node, owner, keys);
  const values: Record<string, string> = {
    [keys.owner]: owner,
    [keys.phase]: CLAIMED,
    [keys.wasCordoned]: capture.wasCordoned ? 'true' : 'false',
  };
  if (!node.hasAnnotationsMap)
    return [{ op: 'add', path: '/metadata/annotations', value: { ...values, ...claimMarkValues(capture, keys) } }];
  return [
    ...Object.entries(values).map(([k, v]) => ({ op: 'add' as const, path: annotationPath(k), value: v })),
    ...claimMarkOps(capture, keys),
  ];
}

/**
 * The claim: ONE JSON Patch, applied atomically to the latest stored node.
 *
 * `test` ops cover only what drain safety depends on:
 * - `/metadata/uid` as read: the node was not deleted and re-created under the same name.
 * - `/metadata/deletionTimestamp` null: nobody is deleting it.
 * - `/spec/unschedulable` as read: `true`, or `null` when it was false (the server drops `false`,
 *   so `test … false` would fail on every schedulable node). A concurrent cordon/uncordon fails the claim.
 * - `/spec/taints` exactly as read (or `null` when there were none): a taint added or removed by
 *   someone else fails the claim. (A merely benign taint move is sorted out by judgeClaimRejection.)
 * - our `owner` and `phase` annotations absent: nobody else holds the node. When the annotations map
 *   itself is absent, `test /metadata/annotations null` instead (a `test` below a missing parent fails),
 *   and the map is then added whole.
 *
 * NOT `metadata.resourceVersion`: a kubelet status write, a label or someone else's annotation would
 * fail it (the first bug). Those writes cannot make draining this node unsafe, so the claim ignores them.
 *
 * - on a quarantined node, its `quarantined` annotation as read: `was-cordoned` is taken from it
 *   (captureClaim), so a quarantine rewritten meanwhile fails the claim instead of being misread.
 *
 * Then: add `owner`, `phase=claimed`, `was-cordoned` ("true"/"false" as read, or from the quarantine's
 * record), the autoscaler marks the node does not carry (each tested absent) with their record
 * `autoscaler-marks` (src/rules/autoscalerMarks.ts), and set `spec.unschedulable=true`, all in the same
 * atomic write.
 */
export function buildClaimPatch(node: NodeState, owner: string, keys: AnnotationKeys): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [
    { op: 'test', path: '/metadata/uid', value: node.uid },
    { op: 'test', path: '/metadata/deletionTimestamp', value: null },
    { op: 'test', path: '/spec/unschedulable', value: node.unschedulable ? true : null },
    { op: 'test', path: '/spec/taints', value: taintsTestValue(node.taints) },
  ];
  if (node.hasAnnotationsMap) {
    ops.push({ op: 'test', path: annotationPath(keys.owner), value: null });
    ops.push({ op: 'test', path: annotationPath(keys.phase), value: null });
    const quarantined = node.annotations[keys.quarantined];
    if (quarantined !== undefined) ops.push({ op: 'test', path: annotationPath(keys.quarantined), value: quarantined });
  } else {
    ops.push({ op: 'test', path: '/metadata/annotations', value: null });
  }
  ops.push(...claimAnnotationOps(node, owner, keys));
  ops.push({ op: 'add', path: '/spec/unschedulable', value: true });
  return ops;
}

function setDiff(before: string[], after: string[]): { appeared: string[]; disappeared: string[] } {
  const b = new Set(before);
  const a = new Set(after);
  return {
    appeared: [...a].filter((x) => !b.has(x)).sort(),
    disappeared: [...b].filter((x) => !a.has(x)).sort(),
  };
}

function describeTaintDiff(before: string[], after: string[]): string[] {
  const { appeared, disappeared } = setDiff(before, after);
  return [...appeared.map((t) => `taint ${t} appeared`), ...disappeared.map((t) => `taint ${t} disappeared`)];
}

/** What a re-read shows that must stop the claim (empty = nothing that matters to drain safety moved). */
function claimConflicts(capture: ClaimCapture, reread: NodeState, keys: AnnotationKeys): string[] {
  const reasons: string[] = [];
  if (reread.uid !== capture.uid) reasons.push(`uid replaced (was ${capture.uid}, now ${reread.uid}): the node was re-created`);
  if (reread.deletionTimestamp) reasons.push(`deletion started at ${reread.deletionTimestamp}`);
  const owner = reread.annotations[keys.owner];
  const phase = reread.annotations[keys.phase];
  if (owner !== undefined) reasons.push(`${keys.owner} is held by ${JSON.stringify(owner)}`);
  if (phase !== undefined)
    reasons.push(`${keys.phase} is set to ${JSON.stringify(phase)}${owner === undefined ? ' without an owner' : ''}`);
  if (reread.unschedulable !== cordonedAtClaim(capture)) {
    reasons.push(
      reread.unschedulable
        ? 'spec.unschedulable flipped from false to true (someone else cordoned the node)'
        : 'spec.unschedulable flipped from true to false (someone else uncordoned the node)',
    );
  }
  reasons.push(...describeTaintDiff(capture.schedulingTaints, schedulingTaints(reread.taints)));
  return reasons;
}

/** The controller taints (CONTROLLER_TAINTS) on a node, as `key:effect` kinds, in a fixed order. */
function controllerKinds(taints: Taint[]): string[] {
  return [...new Set(taints.filter(isControllerTaint).map(kindOf))].sort();
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The benign moves a re-read shows, for the retry warning (what made the `test` fail without mattering). */
function benignChanges(capture: ClaimCapture, reread: NodeState): string[] {
  const changed: string[] = [];
  const before = controllerKinds(capture.taints);
  const after = controllerKinds(reread.taints);
  for (const kind of [...new Set([...before, ...after])].sort()) {
    const what = CONTROLLER_TAINTS.find((c) => kind.startsWith(`${c.key}:`))!.writer;
    if (before.includes(kind) !== after.includes(kind))
      changed.push(`${what} ${kind} ${after.includes(kind) ? 'appeared' : 'disappeared'}`);
    else {
      // Same taint, re-written (e.g. the lifecycle controller re-added it with a new timeAdded):
      // the claim's exact `test` of spec.taints fails on it, though drain safety did not move.
      const pick = (ts: Taint[]) => ts.filter((t) => kindOf(t) === kind).map(storedTaint);
      if (!sameJson(pick(capture.taints), pick(reread.taints))) changed.push(`${what} ${kind} re-written`);
    }
  }
  // Reached only when the scheduling taints are equal as a set of key=value:effect: what moved is the
  // order or a timeAdded, never a value (that is a conflict, see taintId).
  const keep = (ts: Taint[]) => ts.filter((t) => !isControllerTaint(t)).map(storedTaint);
  if (!sameJson(keep(capture.taints), keep(reread.taints))) {
    changed.push('spec.taints rewritten with the same scheduling taints (order or timeAdded changed)');
  }
  if (capture.hadAnnotationsMap === false && reread.hasAnnotationsMap) changed.push('metadata.annotations map appeared');
  changed.push(...marksAppeared(capture, reread));
  if (changed.length === 0) changed.push('no change in the fields the claim tests (e.g. only status, labels or other annotations moved)');
  return changed;
}

export type ClaimRejection = { kind: 'ours' } | { kind: 'retry'; changed: string[] } | { kind: 'conflict'; reasons: string[] };

/**
 * After the claim got a 422 (a `test` failed; the apiserver drops the reason), judge a fresh re-read.
 *
 * - `ours`: the same uid carries OUR owner token. The patch was applied and only its response was lost
 *   in transit (the write is atomic, so the rest of it — phase, was-cordoned, cordon — came with it).
 *   The claim holds; the guard re-checks the node before anything disruptive.
 * - `retry`: same uid, not being deleted, no owner/phase annotation, spec.unschedulable still as
 *   captured and the scheduling taints (key, value and effect) unchanged as a set. Only things that
 *   cannot make a drain unsafe moved (a controller taint: a condition taint such as memory-pressure or
 *   an unreachable blip, the cordon mirror, the autoscaler's hint; the taint list's order or
 *   timestamps, an annotations map appeared, an autoscaler mark the claim was to write set by someone
 *   else (kept as theirs: __tests__/rules/autoscalerMarks.test.ts), or nothing visible at all; __tests__/rules/claim.test.ts
 *   judgeClaimRejection rows). A taint whose value changed
 *   is a conflict: tolerations match on the value. The caller rebuilds the patch from the re-read and retries
 *   after claimBackoffMs, up to `claim-attempts`.
 * - `conflict`: anything else. Refuse without draining, naming what changed.
 */
export function judgeClaimRejection(capture: ClaimCapture, reread: NodeState, keys: AnnotationKeys): ClaimRejection {
  if (reread.uid === capture.uid && reread.annotations[keys.owner] === capture.owner) return { kind: 'ours' };
  const reasons = claimConflicts(capture, reread, keys);
  if (reasons.length > 0) return { kind: 'conflict', reasons };
  return { kind: 'retry', changed: benignChanges(capture, reread) };
}

/**
 * Backoff before claim attempt `attempt + 1`: 200 ms × 2^(attempt−1), capped at 2 s, scaled by a
 * jitter factor 0.5..1.5 taken from `random` (0 ≤ random < 1), so two runs that collided do not
 * collide again in lockstep. Short on purpose: a benign race is over in milliseconds.
 */
export function claimBackoffMs(attempt: number, random: number): number {
  const n = Number.isFinite(attempt) ? Math.max(1, Math.floor(attempt)) : 1;
  const r = Number.isFinite(random) ? Math.min(Math.max(random, 0), 1) : 0.5;
  const base = Math.min(200 * 2 ** (n - 1), 2000);
  return Math.round(base * (0.5 + r));
}

/** `test` ops that prove we still hold the node: same uid, our owner token (used by phase and release patches). */
export function holdTests(capture: ClaimCapture, keys: AnnotationKeys): JsonPatchOp[] {
  return [
    { op: 'test', path: '/metadata/uid', value: capture.uid },
    { op: 'test', path: annotationPath(keys.owner), value: capture.owner },
  ];
}

/** Set `phase` (before the first Talos mutation), only while the node is still ours. */
export function buildPhasePatch(capture: ClaimCapture, keys: AnnotationKeys, phase: Exclude<AnnotatedPhase, 'claimed'>): JsonPatchOp[] {
  return [...holdTests(capture, keys), { op: 'add', path: annotationPath(keys.phase), value: phase }];
}

/**
 * The guard, re-checked before the drain, beside it (its watch), after it, before the credential patch,
 * and while waiting for the rebooted node: problems (empty = still safe to continue).
 * - uid different: the node was re-created; we would act on a machine we never claimed.
 * - deletion started: someone is removing the node; continuing would race them.
 * - owner not ours: someone took or released our claim.
 * - unschedulable not true: someone uncordoned it, so pods could land on a node about to reboot.
 * - scheduling taints (key, value and effect: see taintId) differ from the capture: someone else is
 *   changing where pods may run.
 *
 * Never compared, on either side, appearing or disappearing: the controller taints (CONTROLLER_TAINTS,
 * through schedulingTaints): a NotReady or unreachable blip, memory, disk or PID pressure (relieved by
 * our own drain, say), the network unavailable, the cordon mirror, the autoscaler's hint, Cilium's
 * agent-not-ready (at our own reboot, or an agent restart). Whether an
 * unreachable node can still be rolled is the Talos API's to say, not the guard's (src/pipeline/fence.ts,
 * reachable).
 */
export function checkGuard(capture: ClaimCapture, node: NodeState, keys: AnnotationKeys): string[] {
  const problems: string[] = [];
  if (node.uid !== capture.uid) problems.push(`uid changed from ${capture.uid} to ${node.uid} (the node was re-created)`);
  if (node.deletionTimestamp) problems.push(`deletion started at ${node.deletionTimestamp}`);
  const owner = node.annotations[keys.owner];
  if (owner !== capture.owner) {
    problems.push(owner === undefined ? `${keys.owner} was removed` : `${keys.owner} is held by ${JSON.stringify(owner)}, not by this run`);
  }
  if (!node.unschedulable) problems.push('spec.unschedulable is no longer true (someone uncordoned the node)');
  problems.push(...describeTaintDiff(capture.schedulingTaints, schedulingTaints(node.taints)));
  return problems;
}
