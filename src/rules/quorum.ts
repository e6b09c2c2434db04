// Quorum gate: may this control-plane node go down now without risking etcd?
//
// Why "every other member healthy and at least two of them": with N etcd members a reboot leaves
// N−1 running, and quorum needs floor(N/2)+1. Requiring ALL other members to be healthy voters and
// N−1 ≥ 2 keeps quorum for every N ≥ 3 (for N = 3 exactly two remain, which is the quorum). A
// two-member control plane loses quorum on any reboot, so it is refused.
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
 * - another control plane has no single InternalIP, or no etcd reading was taken for it;
 * - its `etcd status` reading failed or was unparseable, has no row or several rows for it, reports
 *   it as a learner (a learner does not vote, so it does not count towards quorum), or has a
 *   non-empty ERRORS cell;
 * - its `etcd alarm list` reading failed or was unparseable, or lists any alarm other than NONE
 *   (NOSPACE/CORRUPT on any member: the cluster is already in trouble).
 */
export function quorumGate(input: { target: string; controlPlanes: NodeState[]; etcd: Map<string, EtcdReadings> }): string[] {
  const problems: string[] = [];
  if (!input.controlPlanes.some((n) => n.name === input.target)) {
    problems.push(`${input.target} is not among the control-plane nodes read for the quorum gate`);
  }
  const others = input.controlPlanes.filter((n) => n.name !== input.target);
  if (others.length < 2) {
    const names = others.map((n) => n.name).join(', ');
    problems.push(
      `only ${others.length} other control-plane node${others.length === 1 ? '' : 's'}${names ? ` (${names})` : ''}: ` +
        `at least two healthy ones are needed to keep etcd quorum while ${input.target} reboots`,
    );
  }

  for (const peer of [...others].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (peer.ready !== 'True') problems.push(`control plane ${peer.name} is not Ready (Ready=${peer.ready})`);
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
  return problems;
}
