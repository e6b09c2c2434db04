// Which selected nodes may start now, when several workers may be out at once.
// Pure: the roll order, what is in flight, what finished and what is quarantined go in; the nodes to
// start, and why every other node waits, come out. The run loop that calls it, and how failures, the
// time budget, the post step and the summary fit around it, are described in docs/parallel.md.
//
// The rules, each a guarantee the tests check after every simulated start:
// 1. At most `maxUnavailable` workers are out at once. Out is in flight (claimed and not yet
//    finished: counted from the moment the loop starts a node, before its claim lands, until its run
//    ended, so the count can only over-state what is out) or QUARANTINED: a node carrying the
//    quarantine annotation (this run's or an earlier run's, selected or not) stays cordoned with its
//    pods evicted or held: it is capacity out of service for as long as it stays quarantined, just as
//    a node being rolled is. No node starts that would take the count above `maxUnavailable`; a
//    quarantined node itself may start (it is out already: its roll adds nothing, and its verified
//    release is what lifts the quarantine), but never more than `maxUnavailable` workers in flight.
// 2. Control planes go one at a time, and only when every selected worker has finished and none is in
//    flight. Workers go first so a bad credential or a broken step shows where etcd quorum is not at
//    stake; one control plane at a time keeps the quorum gate's answer true while it drains. (A
//    quarantined control plane was never rebooted: its etcd runs, so it is no control plane out here;
//    it counts under rule 3 only.)
// 3. With a topology key, all nodes out at once, quarantined ones included, carry the same value of
//    that label. A node WITHOUT the label goes out only alone: it may be in any zone, so pairing it with
//    anyone could take two zones down at once. Within that rule the scheduler keeps a zone going: once a
//    zone's node is out, later workers of the same zone are started before an earlier worker of another
//    zone (the roll proceeds zone by zone instead of alternating, which would serialize it).
// 4. Once the roll stopped (a node failed, the run was cancelled, or the time budget ran out),
//    nothing new starts; nodes in flight finish by their own rules.
// Liveness: when the roll has not stopped and nothing is in flight, the first node left in roll
// order can always start, unless quarantined nodes hold the capacity (rules 1 and 3): then nothing
// ever will, and the decision says so (`capped`), so the loop stops and fails naming them instead of
// waiting on itself.
import type { NodeState } from '../core/model/node.js';
import { plural } from '../core/format.js';

export type SchedulableNode = Pick<NodeState, 'name' | 'role' | 'labels'>;

export interface ScheduleInput {
  /** the selected nodes in roll order (workers first, then control planes, as selectNodes returns them); names are unique */
  order: readonly SchedulableNode[];
  /** names of nodes started and not yet finished */
  inFlight: ReadonlySet<string>;
  /** names of nodes whose run ended, whatever the outcome */
  finished: ReadonlySet<string>;
  /** workers allowed out at once, already resolved to a whole number ≥ 1 (see resolveMaxUnavailable) */
  maxUnavailable: number;
  /** node label whose values must never be out two at once (e.g. topology.kubernetes.io/zone) */
  topologyKey?: string;
  /** true once a failure, a cancellation or the time budget stopped the roll */
  stopped: boolean;
  /**
   * the nodes quarantined right now (the quarantine annotation is on them), whether in the roll order
   * or not (an earlier run's, outside this run's selection): out of service (rules 1 and 3)
   */
  quarantined?: readonly SchedulableNode[];
}

export type WaitReason = 'stopped' | 'max-unavailable' | 'topology' | 'workers-first' | 'one-control-plane' | 'control-plane-out';

export interface Waiting {
  node: string;
  reason: WaitReason;
  /** one line for the log or summary, e.g. `3 workers out, max-unavailable is 3` */
  message: string;
}

export interface ScheduleDecision {
  /** nodes that may start now, in roll order; starting any subset of them keeps every rule */
  start: string[];
  /** every other node that has not started, in roll order, with why it waits */
  waiting: Waiting[];
  /** nothing in flight and nothing will ever start: the loop is done */
  complete: boolean;
  /**
   * complete with nodes left that never can start, because quarantined nodes hold the capacity
   * (max-unavailable or the topology rule): the roll stopped on them; `quarantinedOut` names them
   */
  capped: boolean;
  /** the quarantined nodes counted as out (those not in flight), in the order given */
  quarantinedOut: string[];
}

/** A node's topology domain; `undefined` when the node has no such label (it may go out only alone). */
function domainOf(n: SchedulableNode, key: string): string | undefined {
  return Object.prototype.hasOwnProperty.call(n.labels, key) ? n.labels[key] : undefined;
}

export function schedule(input: ScheduleInput): ScheduleDecision {
  const { order, inFlight, finished, maxUnavailable, topologyKey, stopped } = input;
  if (!Number.isInteger(maxUnavailable) || maxUnavailable < 1) {
    throw new RangeError(`maxUnavailable must be a whole number ≥ 1, got ${maxUnavailable}`);
  }
  const byName = new Map(order.map((n) => [n.name, n]));
  for (const [what, names] of [
    ['in flight', inFlight],
    ['finished', finished],
  ] as const) {
    for (const name of names) if (!byName.has(name)) throw new RangeError(`node ${name} is ${what} but not in the roll order`);
  }
  for (const name of inFlight) if (finished.has(name)) throw new RangeError(`node ${name} is both in flight and finished`);

  // What is out, updated as nodes are picked, so each decision sees the ones picked before it. A
  // quarantined node in flight is counted once, as in flight.
  const flying = [...inFlight].map((name) => byName.get(name) as SchedulableNode);
  const idleQuarantined = new Map<string, SchedulableNode>();
  for (const q of input.quarantined ?? []) if (!inFlight.has(q.name)) idleQuarantined.set(q.name, q);
  const quarantinedOut = [...idleQuarantined.keys()];
  let workersInFlight = flying.filter((n) => n.role === 'worker').length;
  let workersQuarantined = [...idleQuarantined.values()].filter((n) => n.role === 'worker').length;
  let controlPlaneOut = flying.find((n) => n.role === 'control-plane')?.name;
  // a started worker stays unfinished: control planes keep waiting for it
  const workersUnfinished = order.filter((n) => n.role === 'worker' && !finished.has(n.name)).length;
  /** every node out (in flight, picked, quarantined), by name: what the topology rule compares with */
  const out = new Map<string, SchedulableNode>([...flying, ...idleQuarantined.values()].map((n) => [n.name, n]));
  const quarantinedNote = () => {
    const names = [...idleQuarantined.keys()];
    return names.length ? ` (quarantined: ${names.join(', ')})` : '';
  };

  const start: string[] = [];
  const waiting: Waiting[] = [];
  const wait = (node: string, reason: WaitReason, message: string) => waiting.push({ node, reason, message });

  /** Rule 3 for `n`: why it may not go out beside what is out now (itself aside), or undefined. */
  const topologyConflict = (n: SchedulableNode): string | undefined => {
    if (!topologyKey) return undefined;
    const d = domainOf(n, topologyKey);
    const others = [...out.values()].filter((o) => o.name !== n.name);
    if (others.length === 0) return undefined;
    const domains = [...new Set(others.map((o) => domainOf(o, topologyKey)))];
    if (d !== undefined && domains.every((o) => o === d)) return undefined;
    const shown = domains.map((o) => (o === undefined ? `a node without ${topologyKey}` : `${topologyKey}=${o}`)).join(', ');
    const q = others.filter((o) => idleQuarantined.has(o.name)).map((o) => o.name);
    const note = q.length ? ` (quarantined: ${q.join(', ')})` : '';
    return d === undefined
      ? `has no ${topologyKey} label, so it goes out only alone; out now: ${shown}${note}`
      : `${topologyKey}=${d} waits while ${shown} is out${note}`;
  };
  const goOut = (n: SchedulableNode) => {
    start.push(n.name);
    out.set(n.name, n);
    if (idleQuarantined.delete(n.name) && n.role === 'worker') workersQuarantined--;
  };

  for (const n of order) {
    if (inFlight.has(n.name) || finished.has(n.name)) continue;
    if (stopped) {
      wait(n.name, 'stopped', 'the roll stopped: no new node starts');
      continue;
    }
    if (n.role === 'control-plane') {
      const conflict = topologyConflict(n);
      if (workersUnfinished > 0) {
        wait(n.name, 'workers-first', `control planes start after every worker: ${plural(workersUnfinished, 'worker')} not finished`);
      } else if (controlPlaneOut !== undefined) {
        wait(n.name, 'one-control-plane', `control planes go one at a time: ${controlPlaneOut} is out`);
      } else if (conflict) {
        wait(n.name, 'topology', conflict);
      } else {
        goOut(n);
        controlPlaneOut = n.name;
      }
      continue;
    }
    if (controlPlaneOut !== undefined) {
      // Only reachable when the caller's sets disagree with the roll order; kept so rule 2 holds anyway.
      wait(n.name, 'control-plane-out', `no worker starts while the control plane ${controlPlaneOut} is out`);
      continue;
    }
    // A quarantined worker is out already: starting it moves it from quarantined to in flight.
    const isQuarantined = idleQuarantined.has(n.name);
    const counted = workersInFlight + (isQuarantined ? 0 : workersQuarantined);
    if (workersInFlight >= maxUnavailable || counted >= maxUnavailable) {
      wait(
        n.name,
        'max-unavailable',
        `${plural(workersInFlight + workersQuarantined, 'worker')} out${quarantinedNote()}, max-unavailable is ${maxUnavailable}`,
      );
      continue;
    }
    const conflict = topologyConflict(n);
    if (conflict) {
      wait(n.name, 'topology', conflict);
      continue;
    }
    goOut(n);
    workersInFlight++;
  }
  const complete = inFlight.size === 0 && start.length === 0;
  return { start, waiting, complete, capped: complete && !stopped && waiting.length > 0, quarantinedOut };
}
