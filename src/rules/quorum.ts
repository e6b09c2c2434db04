// Quorum gate: may this control-plane node go down now without risking etcd?
//
// Why "every other member healthy and at least two of them": with N etcd members a reboot leaves
// N−1 running, and quorum needs floor(N/2)+1. Requiring ALL other members to be healthy voters and
// N−1 ≥ 2 keeps quorum for every N ≥ 3 (for N = 3 exactly two remain, which is the quorum). A
// two-member control plane loses quorum on any reboot, so it is refused.
//
// Why "distinct nodes with distinct addresses, each answering for itself": the gate counts healthy
// peers by asking each peer's etcd at the peer's InternalIP. If two peers report the same address,
// one machine's etcd is asked twice and counted as two healthy members; if a peer reports the
// target's address, the member asked is the one about to go down. Neither proves anything, so both
// refuse the reboot. The addresses can be distinct and still reach one machine (a proxy, a stale
// address): the etcd member id each answer carries is the machine's own identity, so two peers
// answering as the same member, or as the target's member when the target's reading is given, refuse
// too. A peer listed twice is counted once (the count is of distinct node names).
import type { EtcdAlarm, EtcdMemberStatus } from '../adapters/types.js';
import type { NodeState, Reading } from '../model.js';

export interface EtcdReadings {
  status: Reading<EtcdMemberStatus[]>;
  alarms: Reading<EtcdAlarm[]>;
}

/**
 * Problems (empty = `target` may reboot). Refuses, saying why, when:
 * - `target` is not among `controlPlanes` (the caller's inventory and the gate disagree);
 * - fewer than two OTHER control-plane nodes exist;
 * - another control plane is not Ready=True;
 * - a node name is listed more than once;
 * - a peer shares an InternalIP with another control plane (another peer or the target);
 * - another control plane has no single InternalIP, or no etcd reading was taken for it;
 * - its `etcd status` reading failed or was unparseable, has no row or several rows for it, reports
 *   it as a learner (a learner does not vote, so it does not count towards quorum), or has a
 *   non-empty ERRORS cell;
 * - its `etcd alarm list` reading failed or was unparseable, or lists any alarm other than NONE
 *   (NOSPACE/CORRUPT on any member: the cluster is already in trouble);
 * - two peers answer as the same etcd member, or a peer answers as the target's member (known only
 *   when `etcd` also holds a reading for the target's address).
 */
export function quorumGate(input: { target: string; controlPlanes: NodeState[]; etcd: Map<string, EtcdReadings> }): string[] {
  const problems: string[] = [];
  if (!input.controlPlanes.some((n) => n.name === input.target)) {
    problems.push(`${input.target} is not among the control-plane nodes read for the quorum gate`);
  }
  const byName = new Map<string, NodeState>();
  const listed = new Map<string, number>();
  for (const n of input.controlPlanes) {
    listed.set(n.name, (listed.get(n.name) ?? 0) + 1);
    if (!byName.has(n.name)) byName.set(n.name, n);
  }
  for (const [name, times] of [...listed].sort(([a], [b]) => compare(a, b))) {
    if (times > 1) problems.push(`control plane ${name} is listed ${times} times: peers must be distinct nodes`);
  }
  const others = [...byName.values()].filter((n) => n.name !== input.target);
  if (others.length < 2) {
    const names = others.map((n) => n.name).join(', ');
    problems.push(
      `only ${others.length} other control-plane node${others.length === 1 ? '' : 's'}${names ? ` (${names})` : ''}: ` +
        `at least two healthy ones are needed to keep etcd quorum while ${input.target} reboots`,
    );
  }

  // Which control planes report each address (every InternalIP of every node, the target's included).
  const holders = new Map<string, string[]>();
  for (const n of byName.values()) {
    for (const a of new Set(n.internalIPs)) holders.set(a, [...(holders.get(a) ?? []), n.name]);
  }
  const sharing = new Set<string>();
  for (const [address, names] of [...holders].sort(([a], [b]) => compare(a, b))) {
    if (names.length < 2 || !names.some((n) => n !== input.target)) continue;
    names.forEach((n) => sharing.add(n));
    problems.push(
      `control planes ${names.sort(compare).join(', ')} report the same InternalIP ${address}: each peer must answer for itself`,
    );
  }

  const targetMembers = membersOf(input.etcd, byName.get(input.target)?.internalIPs ?? []);
  const members = new Map<string, string[]>();
  for (const peer of [...others].sort((a, b) => compare(a.name, b.name))) {
    if (peer.ready !== 'True') problems.push(`control plane ${peer.name} is not Ready (Ready=${peer.ready})`);
    if (sharing.has(peer.name)) continue;
    if (peer.internalIPs.length !== 1) {
      problems.push(`control plane ${peer.name} has ${peer.internalIPs.length} InternalIP addresses, cannot ask its etcd`);
      continue;
    }
    const address = peer.internalIPs[0];
    const who = `${peer.name} (${address})`;
    const reading = input.etcd.get(address);
    if (!reading) {
      problems.push(`no etcd reading for ${who}`);
      continue;
    }

    if (!reading.status.ok) {
      problems.push(`etcd status of ${who} could not be read: ${reading.status.error}`);
    } else {
      const rows = reading.status.value.filter((r) => r.node === address);
      if (rows.length !== 1) {
        problems.push(`etcd status of ${who} has ${rows.length} member rows for ${address}, expected exactly one`);
      } else {
        const row = rows[0];
        members.set(row.memberId, [...(members.get(row.memberId) ?? []), who]);
        if (targetMembers.has(row.memberId)) {
          problems.push(
            `etcd member ${row.memberId} on ${who} is the member of ${input.target}, the node going down: each peer must answer for itself`,
          );
        }
        if (row.learner) problems.push(`etcd member ${row.memberId} on ${who} is a learner (not a voting member)`);
        if (row.errors.trim() !== '') problems.push(`etcd member ${row.memberId} on ${who} reports errors: ${row.errors.trim()}`);
      }
    }

    if (!reading.alarms.ok) {
      problems.push(`etcd alarm list of ${who} could not be read: ${reading.alarms.error}`);
    } else {
      for (const a of reading.alarms.value) {
        const alarm = a.alarm.trim();
        if (alarm.toUpperCase() !== 'NONE') {
          problems.push(`etcd alarm ${alarm || '(empty)'} on member ${a.memberId} (reported by ${who})`);
        }
      }
    }
  }
  for (const [id, whos] of members) {
    if (whos.length > 1) problems.push(`${whos.join(' and ')} answer as the same etcd member ${id}: each peer must answer for itself`);
  }
  return problems;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The member ids an address answered for itself with (rows naming that address), over `addresses`. */
function membersOf(etcd: Map<string, EtcdReadings>, addresses: string[]): Set<string> {
  const ids = new Set<string>();
  for (const a of addresses) {
    const r = etcd.get(a);
    if (r?.status.ok) for (const row of r.status.value) if (row.node === a) ids.add(row.memberId);
  }
  return ids;
}
