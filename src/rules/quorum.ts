// Quorum gate: may this control-plane node go down now without risking etcd?
//
// What is counted is etcd's own member list, not the Kubernetes Nodes: a voter without a Node (a
// control plane deleted with `kubectl delete node` but never removed from etcd, a member added by
// hand) votes all the same (docs/talos-facts.md#t18-etcd-membership). With N voters, quorum is
// floor(N/2)+1. The reboot is allowed only when every voter other than the target's own is started,
// answers for itself at a Ready control-plane Node that provably runs it, and is healthy; then
// N−1 voters remain while the target is down, and the gate also checks that N−1 reaches quorum
// (N ≥ 3). A voter that cannot be accounted for that way is named (id, name, peer URL) with the
// command that removes it, and the reboot is refused: a voter that is down, or gone, is a vote the
// cluster no longer has. Learners never vote, so a learner without a Node does not block.
//
// How a voter is mapped to a Node, on evidence that can be checked: Talos names an etcd member after
// the machine's hostname and advertises the machine's address in its peer URL, so a member maps to a
// Node whose name is the member's name or whose InternalIP is the host of one of its peer URLs; the
// member must map to exactly one Node, and that Node's etcd (asked at its InternalIP) must answer as
// that member id. The target's member is the voter that maps to the target, or the id the target's
// own etcd answers with; more than one such voter means a stale entry that cannot be told apart.
//
// Which list: every peer's etcd is asked for its local copy of the list (talosctl's QueryLocal), and
// all copies must be identical. A member that lags behind a membership change holds an older list;
// peers that disagree mean a change is in flight, and nothing is rebooted until it settles.
//
// Why "distinct nodes with distinct addresses, each answering for itself": the gate asks each peer's
// etcd at the peer's InternalIP. If two peers report the same address, one machine's etcd is asked
// twice and counted as two healthy members; if a peer reports the target's address, the member asked
// is the one about to go down. Neither proves anything, so both refuse the reboot. The addresses can
// be distinct and still reach one machine (a proxy, a stale address): the etcd member id each answer
// carries is the machine's own identity, so two peers answering as the same member, or as the
// target's member, refuse too. A peer listed twice is counted once (the count is of distinct names).
import type { EtcdAlarm, EtcdMember, EtcdMemberStatus } from '../core/model/cluster.js';
import type { NodeState } from '../core/model/node.js';
import type { Reading } from '../core/model/readings.js';
import { plural } from '../core/format.js';
import { compareNames } from '../core/order.js';

export interface EtcdReadings {
  status: Reading<EtcdMemberStatus[]>;
  alarms: Reading<EtcdAlarm[]>;
  /** etcd's member list, as the etcd at this address holds it */
  members: Reading<EtcdMember[]>;
}

export interface QuorumInput {
  target: string;
  controlPlanes: NodeState[];
  /** the readings of each peer, by the address asked (the peer's InternalIP) */
  etcd: Map<string, EtcdReadings>;
  /** `etcd status` at the target's own address, when read: proves which member is the target's */
  targetStatus?: Reading<EtcdMemberStatus[]>;
}

/** A peer whose etcd answered `etcd status` with exactly one member row for its address. */
interface Answer {
  peer: NodeState;
  who: string;
  learner: boolean;
  /** Ready, with no member errors: it keeps voting while the target is down */
  healthy: boolean;
}

/** A peer's copy of the member list. */
interface PeerList {
  who: string;
  address: string;
  members: EtcdMember[];
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
 * - two peers answer as the same etcd member, or a peer answers as the target's member;
 * - its member list could not be read, or the peers' lists differ;
 * - a peer answers as a member that is not in the list, or that the list calls a learner;
 * - a voter other than the target's is not accounted for (see membershipProblems);
 * - the voters left while the target is down are fewer than floor(N/2)+1.
 */
export function quorumGate(input: QuorumInput): string[] {
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
  for (const [name, times] of [...listed].sort(([a], [b]) => compareNames(a, b))) {
    if (times > 1) problems.push(`control plane ${name} is listed ${times} times: peers must be distinct nodes`);
  }
  const others = [...byName.values()].filter((n) => n.name !== input.target);
  if (others.length < 2) {
    const names = others.map((n) => n.name).join(', ');
    problems.push(
      `only ${plural(others.length, 'other control-plane node')}${names ? ` (${names})` : ''}: ` +
        `at least two healthy ones are needed to keep etcd quorum while ${input.target} reboots`,
    );
  }

  // Which control planes report each address (every InternalIP of every node, the target's included).
  const holders = new Map<string, string[]>();
  for (const n of byName.values()) {
    for (const a of new Set(n.internalIPs)) holders.set(a, [...(holders.get(a) ?? []), n.name]);
  }
  const sharing = new Set<string>();
  for (const [address, names] of [...holders].sort(([a], [b]) => compareNames(a, b))) {
    if (names.length < 2 || !names.some((n) => n !== input.target)) continue;
    names.forEach((n) => sharing.add(n));
    problems.push(
      `control planes ${names.sort(compareNames).join(', ')} report the same InternalIP ${address}: each peer must answer for itself`,
    );
  }

  const targetNode = byName.get(input.target);
  const targetMembers = membersOf(input.etcd, input.targetStatus, targetNode?.internalIPs ?? []);
  const members = new Map<string, string[]>();
  const answered = new Map<string, Answer>();
  const lists: PeerList[] = [];
  for (const peer of [...others].sort((a, b) => compareNames(a.name, b.name))) {
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
        const healthy = peer.ready === 'True' && !row.learner && row.errors.trim() === '';
        if (!answered.has(row.memberId)) answered.set(row.memberId, { peer, who, learner: row.learner, healthy });
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

    if (!reading.members.ok) problems.push(`etcd member list of ${who} could not be read: ${reading.members.error}`);
    else lists.push({ who, address, members: reading.members.value });
  }
  for (const [id, whos] of members) {
    if (whos.length > 1) problems.push(`${whos.join(' and ')} answer as the same etcd member ${id}: each peer must answer for itself`);
  }
  const shared = new Set([...members].filter(([, whos]) => whos.length > 1).map(([id]) => id));
  problems.push(
    ...membershipProblems({ target: input.target, targetNode, nodes: [...byName.values()], targetMembers, answered, shared, lists }),
  );
  return problems;
}

/**
 * The member list against the Nodes: every voter other than the target's must be accounted for by a
 * Ready control plane that answers as it and that it provably maps to, and the voters left while the
 * target is down must reach quorum. Nothing is said when no peer's list was read (each failure is
 * already a problem of its own).
 */
function membershipProblems(input: {
  target: string;
  targetNode: NodeState | undefined;
  nodes: NodeState[];
  /** the member ids the target's own address answered with */
  targetMembers: Set<string>;
  answered: Map<string, Answer>;
  /** member ids that several peers answered as (already a problem) */
  shared: Set<string>;
  lists: PeerList[];
}): string[] {
  const { target, targetNode, nodes, answered, lists } = input;
  if (lists.length === 0) return [];
  const disagreement = listDisagreement(lists);
  if (disagreement) return [disagreement];
  const list = lists[0].members;
  // the remove-member hint goes to a peer whose etcd just answered with a leader (QueryLocal needs one)
  const hintPeer = lists[0].address;
  const problems: string[] = [];

  const voters = list.filter((m) => !m.learner).sort((a, b) => compareNames(a.id, b.id));
  const targets = voters.filter(
    (v) => input.targetMembers.has(v.id) || v.name === target || (targetNode !== undefined && nodesOf(v, [targetNode]).length > 0),
  );
  const targetIds = new Set([...input.targetMembers, ...targets.map((v) => v.id)]);

  const byId = new Map(list.map((m) => [m.id, m]));
  for (const [id, a] of [...answered].sort(([, x], [, y]) => compareNames(x.who, y.who))) {
    const m = byId.get(id);
    if (!m) problems.push(`etcd member ${id} on ${a.who} is not in etcd's member list`);
    else if (m.learner && !a.learner) problems.push(`etcd member ${id} on ${a.who} is a learner (not a voting member)`);
    // the target's status may not have been read: its member is then known from the list alone
    if (targetIds.has(id) && !input.targetMembers.has(id)) {
      problems.push(`etcd member ${id} on ${a.who} is the member of ${target}, the node going down: each peer must answer for itself`);
    }
  }
  // the answers that prove something about a Node: neither shared by two peers nor the target's member
  const clean = new Map([...answered].filter(([id]) => !input.shared.has(id) && !targetIds.has(id)));
  const answeredAt = new Map([...clean].map(([id, a]) => [a.peer.name, id]));
  if (targets.length > 1) {
    problems.push(
      `etcd voters ${targets.map(describeMember).join(', ')} all map to ${target}, the node going down: only one of them ` +
        `can be its member and the others cannot be told apart from it; remove the stale one (talosctl -n ${hintPeer} etcd members lists them)`,
    );
  }
  let remaining = 0;
  for (const v of voters.filter((x) => !targets.includes(x))) {
    const why = unaccounted(v, nodes, clean.get(v.id), answeredAt);
    if (why === undefined) {
      if (clean.get(v.id)?.healthy) remaining++;
    } else if (why === 'reported') {
      // a Node it maps to could not be asked: that Node's problem is already said, and it is not counted
    } else if (why.removable) {
      problems.push(
        `etcd voter ${describeMember(v)} is not accounted for: ${why.reason}; if that member is gone for good, remove it: ` +
          `talosctl -n ${hintPeer} etcd remove-member ${v.id}`,
      );
    } else {
      problems.push(`etcd voter ${describeMember(v)} is not accounted for: ${why.reason}`);
    }
  }

  const quorum = Math.floor(voters.length / 2) + 1;
  if (voters.length === 0) problems.push(`etcd's member list names no voting member`);
  else if (remaining < quorum) {
    problems.push(`${voters.length} etcd voters: ${remaining} would remain while ${target} is down, quorum needs ${quorum}`);
  }
  return problems;
}

/**
 * Why voter `v` (not the target's) is not accounted for, or undefined when it is: started, answering
 * at exactly the one Node it maps to. `removable`: no Node runs it (none it maps to, or each it maps
 * to answers as another member), so it may be a leftover that `etcd remove-member` clears; a member
 * that answers somewhere is alive and is never offered for removal. 'reported': a Node it maps to
 * could not be asked, which is a problem of its own already.
 */
function unaccounted(
  v: EtcdMember,
  nodes: NodeState[],
  answer: Answer | undefined,
  answeredAt: Map<string, string>,
): { reason: string; removable: boolean } | 'reported' | undefined {
  const mapped = nodesOf(v, nodes);
  if (v.name === '') return { reason: 'it has not started (etcd lists no name for it)', removable: true };
  if (!answer) {
    if (mapped.length === 0) {
      return {
        reason:
          'no control-plane Node has its name or the address of its peer URL, so nothing shows it keeps voting while the node is down',
        removable: true,
      };
    }
    if (mapped.some((n) => !answeredAt.has(n.name))) return 'reported';
    const others = mapped.map((n) => `${n.name}'s etcd answers as ${answeredAt.get(n.name)}`).join(', ');
    return { reason: `${others}, not as it, so nothing shows it keeps voting while the node is down`, removable: true };
  }
  if (mapped.length !== 1 || mapped[0] !== answer.peer) {
    const named = mapped.length
      ? `its name and peer URLs point at ${mapped.map((n) => n.name).join(', ')}`
      : 'neither its name nor its peer URLs match that Node';
    return { reason: `it answers at ${answer.who}, but ${named}: which Node runs it cannot be proven`, removable: false };
  }
  return undefined;
}

/** The Nodes a member points at: by name (Talos names the member after the host), or by a peer URL's host. */
function nodesOf(m: EtcdMember, nodes: NodeState[]): NodeState[] {
  const hosts = m.peerUrls.map(urlHost).filter((h): h is string => h !== undefined);
  return nodes.filter((n) => (m.name !== '' && m.name === n.name) || n.internalIPs.some((ip) => hosts.includes(ip)));
}

/** The host of a URL without IPv6 brackets; undefined when it is not a URL. */
function urlHost(u: string): string | undefined {
  try {
    return new URL(u).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return undefined;
  }
}

/** `peers disagree …` naming each peer's copy, or undefined when every copy is the same list. */
function listDisagreement(lists: PeerList[]): string | undefined {
  const key = (ms: EtcdMember[]) =>
    ms
      .map((m) => JSON.stringify([m.id, m.name, [...m.peerUrls].sort(), [...m.clientUrls].sort(), m.learner]))
      .sort()
      .join('\n');
  const first = key(lists[0].members);
  if (lists.every((l) => key(l.members) === first)) return undefined;
  const copies = lists.map((l) => `${l.who} lists ${l.members.map(describeMember).join(', ') || 'nothing'}`);
  return `peers disagree about etcd's member list (a membership change may be in flight): ${copies.join(' whereas ')}`;
}

/** `<id> (name "<name>", peer URL <url>[, learner])`: how a member is named in every message. */
function describeMember(m: EtcdMember): string {
  const urls = m.peerUrls.length ? `peer URL${m.peerUrls.length > 1 ? 's' : ''} ${m.peerUrls.join(',')}` : 'no peer URL';
  return `${m.id} (name ${JSON.stringify(m.name)}, ${urls}${m.learner ? ', learner' : ''})`;
}

/** The member ids the target's addresses answered for themselves with (rows naming that address). */
function membersOf(
  etcd: Map<string, EtcdReadings>,
  targetStatus: Reading<EtcdMemberStatus[]> | undefined,
  addresses: string[],
): Set<string> {
  const ids = new Set<string>();
  const readings = [...addresses.map((a) => etcd.get(a)?.status), targetStatus];
  for (const r of readings) if (r?.ok) for (const row of r.value) if (addresses.includes(row.node)) ids.add(row.memberId);
  return ids;
}
