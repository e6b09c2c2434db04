// Which selected nodes may start now, when several workers may be out at once.
// Pure: the roll order, what is in flight and what finished go in; the nodes to start, and why every
// other node waits, come out. The run loop that calls it, and how failures, the time budget, the
// post step and the summary fit around it, are described in docs/parallel.md.
//
// The rules, each a guarantee the tests check after every simulated start:
// 1. At most `maxUnavailable` workers are in flight (claimed and not yet finished). "In flight"
//    counts from the moment the loop starts a node, before its claim lands, until its run ended
//    (released, verified, refused or left fenced): the count can only over-state what is out.
// 2. Control planes go one at a time, and only when every selected worker has finished and none is in
//    flight. Workers go first so a bad credential or a broken step shows where etcd quorum is not at
//    stake; one control plane at a time keeps the quorum gate's answer true while it drains.
// 3. With a topology key, all nodes out at once carry the same value of that label. A node WITHOUT
//    the label goes out only alone: it may be in any zone, so pairing it with anyone could take two
//    zones down at once. Within that rule the scheduler keeps a zone going: once a zone's node is out,
//    later workers of the same zone are started before an earlier worker of another zone (the roll
//    proceeds zone by zone instead of alternating, which would serialize it).
// 4. Once the roll stopped (a node failed, the run was cancelled, or the time budget ran out),
//    nothing new starts; nodes in flight finish by their own rules.
// Liveness: when the roll has not stopped and nothing is in flight, the first node left in roll
// order can always start, so the loop never waits on itself.
import type { NodeState } from '../core/model.js';

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
}

/** A node's topology domain; `undefined` when the node has no such label (it may go out only alone). */
function domainOf(n: SchedulableNode, key: string): string | undefined {
  return Object.prototype.hasOwnProperty.call(n.labels, key) ? n.labels[key] : undefined;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
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

  // What is out, updated as nodes are picked, so each decision sees the ones picked before it.
  const out = [...inFlight].map((name) => byName.get(name) as SchedulableNode);
  let workersOut = out.filter((n) => n.role === 'worker').length;
  let controlPlaneOut = out.find((n) => n.role === 'control-plane')?.name;
  // a started worker stays unfinished: control planes keep waiting for it
  const workersUnfinished = order.filter((n) => n.role === 'worker' && !finished.has(n.name)).length;
  const domainsOut = new Set<string | undefined>(topologyKey ? out.map((n) => domainOf(n, topologyKey)) : []);
  let nodesOut = out.length;

  const start: string[] = [];
  const waiting: Waiting[] = [];
  const wait = (node: string, reason: WaitReason, message: string) => waiting.push({ node, reason, message });

  for (const n of order) {
    if (inFlight.has(n.name) || finished.has(n.name)) continue;
    if (stopped) {
      wait(n.name, 'stopped', 'the roll stopped: no new node starts');
      continue;
    }
    if (n.role === 'control-plane') {
      if (workersUnfinished > 0) {
        wait(n.name, 'workers-first', `control planes start after every worker: ${plural(workersUnfinished, 'worker')} not finished`);
      } else if (controlPlaneOut !== undefined) {
        wait(n.name, 'one-control-plane', `control planes go one at a time: ${controlPlaneOut} is out`);
      } else {
        start.push(n.name);
        controlPlaneOut = n.name;
        nodesOut++;
      }
      continue;
    }
    if (controlPlaneOut !== undefined) {
      // Only reachable when the caller's sets disagree with the roll order; kept so rule 2 holds anyway.
      wait(n.name, 'control-plane-out', `no worker starts while the control plane ${controlPlaneOut} is out`);
      continue;
    }
    if (workersOut >= maxUnavailable) {
      wait(n.name, 'max-unavailable', `${plural(workersOut, 'worker')} out, max-unavailable is ${maxUnavailable}`);
      continue;
    }
    if (topologyKey) {
      const d = domainOf(n, topologyKey);
      const others = [...domainsOut];
      const conflict = nodesOut > 0 && (d === undefined || others.some((o) => o !== d));
      if (conflict) {
        const shown = others.map((o) => (o === undefined ? `a node without ${topologyKey}` : `${topologyKey}=${o}`)).join(', ');
        wait(
          n.name,
          'topology',
          d === undefined
            ? `has no ${topologyKey} label, so it goes out only alone; out now: ${shown}`
            : `${topologyKey}=${d} waits while ${shown} is out`,
        );
        continue;
      }
      domainsOut.add(d);
    }
    start.push(n.name);
    workersOut++;
    nodesOut++;
  }
  return { start, waiting, complete: inFlight.size === 0 && start.length === 0 };
}
