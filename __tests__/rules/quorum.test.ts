import { describe, expect, it } from 'vitest';
import type { EtcdMember } from '../../src/adapters/types.js';
import type { NodeState } from '../../src/core/model/node.js';
import { quorumGate, type EtcdReadings } from '../../src/rules/quorum.js';
import { node } from './fixtures.js';

const cp = (name: string, ip: string, over: Partial<NodeState> = {}) => node({ name, internalIPs: [ip], role: 'control-plane', ...over });
const cp1 = cp('cp1', '10.0.0.1');
const cp2 = cp('cp2', '10.0.0.2');
const cp3 = cp('cp3', '10.0.0.3');

/** A member as Talos registers it: named after the host, URLs on its address. */
const member = (id: string, name: string, ip: string, learner = false): EtcdMember => ({
  id,
  name,
  peerUrls: [`https://${ip}:2380`],
  clientUrls: [`https://${ip}:2379`],
  learner,
});
/** etcd's member list of the three control planes */
const LIST = [member('aa01', 'cp1', '10.0.0.1'), member('aa02', 'cp2', '10.0.0.2'), member('aa03', 'cp3', '10.0.0.3')];

const healthy = (ip: string, id: string, members: EtcdMember[] = LIST): EtcdReadings => ({
  status: { ok: true, value: [{ node: ip, memberId: id, learner: false, errors: '' }] },
  alarms: { ok: true, value: [] },
  members: { ok: true, value: members },
});
const etcd = (over: Record<string, EtcdReadings> = {}) =>
  new Map<string, EtcdReadings>(
    Object.entries({ '10.0.0.2': healthy('10.0.0.2', 'aa02'), '10.0.0.3': healthy('10.0.0.3', 'aa03'), ...over }),
  );
/** the same member list in every reading */
const withList = (readings: Map<string, EtcdReadings>, members: EtcdMember[]) =>
  new Map([...readings].map(([a, r]) => [a, { ...r, members: { ok: true as const, value: members } }]));
const LIST4 = [...LIST, member('aa04', 'cp4', '10.0.0.4')];
const HINT = 'if that member is gone for good, remove it: talosctl -n 10.0.0.2 etcd remove-member';
const Q3 = '3 etcd voters: 1 would remain while cp1 is down, quorum needs 2';
const Q2 = '2 etcd voters: 1 would remain while cp1 is down, quorum needs 2';

describe('quorumGate (target cp1)', () => {
  const rows: Array<{
    name: string;
    controlPlanes: NodeState[];
    etcd: Map<string, EtcdReadings>;
    targetStatus?: EtcdReadings['status'];
    want: string[];
  }> = [
    { name: 'healthy peers: may reboot', controlPlanes: [cp1, cp2, cp3], etcd: etcd(), want: [] },
    {
      name: 'a NONE alarm row counts as no alarm',
      controlPlanes: [cp1, cp2, cp3],
      etcd: etcd({
        '10.0.0.2': {
          ...healthy('10.0.0.2', 'aa02'),
          alarms: { ok: true, value: [{ node: '10.0.0.2', memberId: 'aa02', alarm: 'NONE' }] },
        },
      }),
      want: [],
    },
    {
      name: 'a peer NotReady',
      controlPlanes: [cp1, cp2, cp('cp3', '10.0.0.3', { ready: 'False' })],
      etcd: etcd(),
      // its member is not counted as one that keeps voting
      want: ['control plane cp3 is not Ready (Ready=False)', Q3],
    },
    {
      name: 'a peer Ready=Unknown',
      controlPlanes: [cp1, cp('cp2', '10.0.0.2', { ready: 'Unknown' }), cp3],
      etcd: etcd(),
      want: ['control plane cp2 is not Ready (Ready=Unknown)', Q3],
    },
    {
      name: 'only one peer',
      controlPlanes: [cp1, cp2],
      etcd: withList(new Map([['10.0.0.2', healthy('10.0.0.2', 'aa02')]]), LIST.slice(0, 2)),
      want: ['only 1 other control-plane node (cp2): at least two healthy ones are needed to keep etcd quorum while cp1 reboots', Q2],
    },
    {
      name: 'a single control plane',
      controlPlanes: [cp1],
      etcd: etcd(),
      want: ['only 0 other control-plane nodes: at least two healthy ones are needed to keep etcd quorum while cp1 reboots'],
    },
    {
      name: 'a learner',
      controlPlanes: [cp1, cp2, cp3],
      etcd: withList(
        etcd({
          '10.0.0.3': {
            ...healthy('10.0.0.3', 'aa03'),
            status: { ok: true, value: [{ node: '10.0.0.3', memberId: 'aa03', learner: true, errors: '' }] },
          },
        }),
        [LIST[0], LIST[1], member('aa03', 'cp3', '10.0.0.3', true)],
      ),
      want: ['etcd member aa03 on cp3 (10.0.0.3) is a learner (not a voting member)', Q2],
    },
    {
      name: 'an alarm',
      controlPlanes: [cp1, cp2, cp3],
      etcd: etcd({
        '10.0.0.2': {
          ...healthy('10.0.0.2', 'aa02'),
          alarms: { ok: true, value: [{ node: '10.0.0.2', memberId: 'aa01', alarm: 'NOSPACE' }] },
        },
      }),
      want: ['etcd alarm NOSPACE on member aa01 (reported by cp2 (10.0.0.2))'],
    },
    {
      name: 'an errors cell',
      controlPlanes: [cp1, cp2, cp3],
      etcd: etcd({
        '10.0.0.2': {
          ...healthy('10.0.0.2', 'aa02'),
          status: { ok: true, value: [{ node: '10.0.0.2', memberId: 'aa02', learner: false, errors: 'etcdserver: no leader ' }] },
        },
      }),
      want: ['etcd member aa02 on cp2 (10.0.0.2) reports errors: etcdserver: no leader', Q3],
    },
    {
      name: 'an unparseable status reading',
      controlPlanes: [cp1, cp2, cp3],
      etcd: etcd({ '10.0.0.2': { ...healthy('10.0.0.2', 'aa02'), status: { ok: false, error: 'unexpected header "FOO BAR"' } } }),
      want: ['etcd status of cp2 (10.0.0.2) could not be read: unexpected header "FOO BAR"', Q3],
    },
    {
      name: 'a failed alarm reading',
      controlPlanes: [cp1, cp2, cp3],
      etcd: etcd({ '10.0.0.3': { ...healthy('10.0.0.3', 'aa03'), alarms: { ok: false, error: 'connection refused' } } }),
      want: ['etcd alarm list of cp3 (10.0.0.3) could not be read: connection refused'],
    },
    {
      name: 'no member row for the peer',
      controlPlanes: [cp1, cp2, cp3],
      etcd: etcd({ '10.0.0.3': { ...healthy('10.0.0.3', 'aa03'), status: { ok: true, value: [] } } }),
      want: ['etcd status of cp3 (10.0.0.3) has 0 member rows for 10.0.0.3, expected exactly one', Q3],
    },
    {
      name: 'a row for another address does not count',
      controlPlanes: [cp1, cp2, cp3],
      etcd: etcd({
        '10.0.0.3': {
          ...healthy('10.0.0.3', 'aa03'),
          status: { ok: true, value: [{ node: '10.0.0.2', memberId: 'aa02', learner: false, errors: '' }] },
        },
      }),
      want: ['etcd status of cp3 (10.0.0.3) has 0 member rows for 10.0.0.3, expected exactly one', Q3],
    },
    {
      name: 'no reading taken for a peer',
      controlPlanes: [cp1, cp2, cp3],
      etcd: new Map([['10.0.0.2', healthy('10.0.0.2', 'aa02')]]),
      want: ['no etcd reading for cp3 (10.0.0.3)', Q3],
    },
    {
      name: 'the target itself is not among the control planes',
      controlPlanes: [cp2, cp3, cp('cp4', '10.0.0.4')],
      etcd: withList(etcd({ '10.0.0.4': healthy('10.0.0.4', 'aa04') }), LIST4),
      want: ['cp1 is not among the control-plane nodes read for the quorum gate'],
    },
    {
      name: "the target's own etcd state does not matter (it is the one going down)",
      controlPlanes: [cp1, cp2, cp3],
      etcd: etcd({
        '10.0.0.1': { status: { ok: false, error: 'down' }, alarms: { ok: false, error: 'down' }, members: { ok: false, error: 'down' } },
      }),
      want: [],
    },
    // Peers must be distinct nodes with distinct addresses, each answering for itself.
    {
      name: 'two peers reporting the same InternalIP (one machine would be counted twice)',
      controlPlanes: [cp1, cp2, cp('cp3', '10.0.0.2')],
      etcd: etcd(),
      want: ['control planes cp2, cp3 report the same InternalIP 10.0.0.2: each peer must answer for itself'],
    },
    {
      name: "a peer reporting the target's InternalIP (its etcd is the one going down)",
      controlPlanes: [cp1, cp('cp2', '10.0.0.1'), cp3, cp('cp4', '10.0.0.4')],
      etcd: withList(etcd({ '10.0.0.1': healthy('10.0.0.1', 'aa01'), '10.0.0.4': healthy('10.0.0.4', 'aa04') }), LIST4),
      want: [
        'control planes cp1, cp2 report the same InternalIP 10.0.0.1: each peer must answer for itself',
        '4 etcd voters: 2 would remain while cp1 is down, quorum needs 3',
      ],
    },
    {
      name: "a peer sharing the target's second InternalIP",
      controlPlanes: [cp('cp1', '10.0.0.1', { internalIPs: ['10.0.0.1', '10.0.0.3'] }), cp2, cp3, cp('cp4', '10.0.0.4')],
      etcd: withList(etcd({ '10.0.0.4': healthy('10.0.0.4', 'aa04') }), LIST4),
      want: [
        'control planes cp1, cp3 report the same InternalIP 10.0.0.3: each peer must answer for itself',
        // cp3's member advertises an address of the target: it cannot be told from the target's own
        'etcd voters aa01 (name "cp1", peer URL https://10.0.0.1:2380), aa03 (name "cp3", peer URL https://10.0.0.3:2380) all map to cp1, ' +
          'the node going down: only one of them can be its member and the others cannot be told apart from it; ' +
          'remove the stale one (talosctl -n 10.0.0.2 etcd members lists them)',
        '4 etcd voters: 2 would remain while cp1 is down, quorum needs 3',
      ],
    },
    {
      name: 'the same node listed twice counts once',
      controlPlanes: [cp1, cp2, cp2],
      etcd: withList(etcd(), LIST.slice(0, 2)),
      want: [
        'control plane cp2 is listed 2 times: peers must be distinct nodes',
        'only 1 other control-plane node (cp2): at least two healthy ones are needed to keep etcd quorum while cp1 reboots',
        Q2,
      ],
    },
    {
      name: 'a peer without an InternalIP',
      controlPlanes: [cp1, cp2, cp('cp3', '', { internalIPs: [] })],
      etcd: etcd(),
      want: ['control plane cp3 has 0 InternalIP addresses, cannot ask its etcd', Q3],
    },
    {
      name: 'two addresses answered by the same etcd member (one machine behind both)',
      controlPlanes: [cp1, cp2, cp3],
      etcd: etcd({ '10.0.0.3': healthy('10.0.0.3', 'aa02') }),
      want: [
        'cp2 (10.0.0.2) and cp3 (10.0.0.3) answer as the same etcd member aa02: each peer must answer for itself',
        '3 etcd voters: 0 would remain while cp1 is down, quorum needs 2',
      ],
    },
    {
      name: "a peer address answered by the target's own etcd member (when the target was read too)",
      controlPlanes: [cp1, cp2, cp3, cp('cp4', '10.0.0.4')],
      etcd: withList(etcd({ '10.0.0.1': healthy('10.0.0.1', 'aa01'), '10.0.0.4': healthy('10.0.0.4', 'aa01') }), LIST4),
      want: [
        'etcd member aa01 on cp4 (10.0.0.4) is the member of cp1, the node going down: each peer must answer for itself',
        '4 etcd voters: 2 would remain while cp1 is down, quorum needs 3',
      ],
    },
    // etcd's member list is its own record: what counts is its voters, not the Nodes.
    {
      name: 'a voter without a Node (3 control planes + an orphan: 2 of 4 would remain, quorum lost)',
      controlPlanes: [cp1, cp2, cp3],
      etcd: withList(etcd(), [...LIST, member('aa09', 'cp0', '10.0.0.9')]),
      want: [
        'etcd voter aa09 (name "cp0", peer URL https://10.0.0.9:2380) is not accounted for: no control-plane Node has its name or ' +
          `the address of its peer URL, so nothing shows it keeps voting while the node is down; ${HINT} aa09`,
        '4 etcd voters: 2 would remain while cp1 is down, quorum needs 3',
      ],
    },
    {
      name: 'a voter without a Node is refused even when the count would hold (4 control planes + an orphan: 3 of 5 remain)',
      controlPlanes: [cp1, cp2, cp3, cp('cp4', '10.0.0.4')],
      etcd: withList(etcd({ '10.0.0.4': healthy('10.0.0.4', 'aa04') }), [...LIST4, member('aa09', 'cp0', '10.0.0.9')]),
      want: [
        'etcd voter aa09 (name "cp0", peer URL https://10.0.0.9:2380) is not accounted for: no control-plane Node has its name or ' +
          `the address of its peer URL, so nothing shows it keeps voting while the node is down; ${HINT} aa09`,
      ],
    },
    {
      name: 'a control plane whose Node was deleted still votes',
      controlPlanes: [cp1, cp2, cp('cp4', '10.0.0.4')],
      etcd: withList(
        new Map([
          ['10.0.0.2', healthy('10.0.0.2', 'aa02')],
          ['10.0.0.4', healthy('10.0.0.4', 'aa04')],
        ]),
        LIST4,
      ),
      want: [
        'etcd voter aa03 (name "cp3", peer URL https://10.0.0.3:2380) is not accounted for: no control-plane Node has its name or ' +
          `the address of its peer URL, so nothing shows it keeps voting while the node is down; ${HINT} aa03`,
        '4 etcd voters: 2 would remain while cp1 is down, quorum needs 3',
      ],
    },
    {
      name: 'a voter added by hand and never started (no name, no client URL)',
      controlPlanes: [cp1, cp2, cp3],
      etcd: withList(etcd(), [...LIST, { id: 'aa09', name: '', peerUrls: ['https://10.0.0.9:2380'], clientUrls: [], learner: false }]),
      want: [
        `etcd voter aa09 (name "", peer URL https://10.0.0.9:2380) is not accounted for: it has not started (etcd lists no name for it); ${HINT} aa09`,
        '4 etcd voters: 2 would remain while cp1 is down, quorum needs 3',
      ],
    },
    {
      name: 'a learner without a Node does not block (learners never vote)',
      controlPlanes: [cp1, cp2, cp3],
      etcd: withList(etcd(), [...LIST, member('aa09', 'cp4', '10.0.0.9', true)]),
      want: [],
    },
    {
      name: 'a stale voter named after a peer whose etcd answers as another member',
      controlPlanes: [cp1, cp2, cp3],
      etcd: withList(etcd(), [...LIST, member('aa0b', 'cp3', '10.0.0.8')]),
      want: [
        'etcd voter aa0b (name "cp3", peer URL https://10.0.0.8:2380) is not accounted for: cp3\'s etcd answers as aa03, not as it, ' +
          `so nothing shows it keeps voting while the node is down; ${HINT} aa0b`,
        '4 etcd voters: 2 would remain while cp1 is down, quorum needs 3',
      ],
    },
    {
      name: 'a stale voter with the name of the target: two voters map to it and cannot be told apart',
      controlPlanes: [cp1, cp2, cp3],
      etcd: withList(etcd(), [...LIST, member('aa0e', 'cp1', '10.0.0.7')]),
      want: [
        'etcd voters aa01 (name "cp1", peer URL https://10.0.0.1:2380), aa0e (name "cp1", peer URL https://10.0.0.7:2380) all map to cp1, ' +
          'the node going down: only one of them can be its member and the others cannot be told apart from it; ' +
          'remove the stale one (talosctl -n 10.0.0.2 etcd members lists them)',
        '4 etcd voters: 2 would remain while cp1 is down, quorum needs 3',
      ],
    },
    {
      name: 'a voter answering at a Node that neither its name nor its peer URL names (which Node runs it is not proven)',
      controlPlanes: [cp1, cp2, cp3],
      etcd: withList(etcd(), [LIST[0], LIST[1], member('aa03', 'cpx', '10.0.0.8')]),
      want: [
        'etcd voter aa03 (name "cpx", peer URL https://10.0.0.8:2380) is not accounted for: it answers at cp3 (10.0.0.3), ' +
          'but neither its name nor its peer URLs match that Node: which Node runs it cannot be proven',
        Q3,
      ],
    },
    {
      name: 'a voter whose name and peer URL point at two different Nodes',
      controlPlanes: [cp1, cp2, cp3],
      etcd: withList(etcd(), [LIST[0], LIST[1], member('aa03', 'cp3', '10.0.0.2')]),
      want: [
        'etcd voter aa03 (name "cp3", peer URL https://10.0.0.2:2380) is not accounted for: it answers at cp3 (10.0.0.3), ' +
          'but its name and peer URLs point at cp2, cp3: which Node runs it cannot be proven',
        Q3,
      ],
    },
    {
      name: "a peer answering as the member the list names after the target (the target's status not read)",
      controlPlanes: [cp1, cp2, cp3, cp('cp4', '10.0.0.4')],
      etcd: withList(etcd({ '10.0.0.4': healthy('10.0.0.4', 'aa01') }), LIST4),
      want: [
        'etcd member aa01 on cp4 (10.0.0.4) is the member of cp1, the node going down: each peer must answer for itself',
        '4 etcd voters: 2 would remain while cp1 is down, quorum needs 3',
      ],
    },
    {
      name: 'a peer answering as a member that is not in the list',
      controlPlanes: [cp1, cp2, cp3],
      etcd: etcd({ '10.0.0.3': healthy('10.0.0.3', 'aa0f') }),
      want: [
        "etcd member aa0f on cp3 (10.0.0.3) is not in etcd's member list",
        'etcd voter aa03 (name "cp3", peer URL https://10.0.0.3:2380) is not accounted for: cp3\'s etcd answers as aa0f, not as it, ' +
          `so nothing shows it keeps voting while the node is down; ${HINT} aa03`,
        Q3,
      ],
    },
    {
      name: 'a peer the list calls a learner, though its status says voter',
      controlPlanes: [cp1, cp2, cp3],
      etcd: withList(etcd(), [LIST[0], LIST[1], member('aa03', 'cp3', '10.0.0.3', true)]),
      want: ['etcd member aa03 on cp3 (10.0.0.3) is a learner (not a voting member)', Q2],
    },
    {
      name: 'peers disagree about the member list (a membership change in flight)',
      controlPlanes: [cp1, cp2, cp3],
      etcd: etcd({ '10.0.0.3': healthy('10.0.0.3', 'aa03', [...LIST, member('aa09', 'cp4', '10.0.0.9', true)]) }),
      want: [
        "peers disagree about etcd's member list (a membership change may be in flight): cp2 (10.0.0.2) lists " +
          'aa01 (name "cp1", peer URL https://10.0.0.1:2380), aa02 (name "cp2", peer URL https://10.0.0.2:2380), ' +
          'aa03 (name "cp3", peer URL https://10.0.0.3:2380) whereas cp3 (10.0.0.3) lists ' +
          'aa01 (name "cp1", peer URL https://10.0.0.1:2380), aa02 (name "cp2", peer URL https://10.0.0.2:2380), ' +
          'aa03 (name "cp3", peer URL https://10.0.0.3:2380), aa09 (name "cp4", peer URL https://10.0.0.9:2380, learner)',
      ],
    },
    {
      name: "a peer's member list that could not be read (the others' copy is used)",
      controlPlanes: [cp1, cp2, cp3],
      etcd: etcd({ '10.0.0.3': { ...healthy('10.0.0.3', 'aa03'), members: { ok: false, error: 'etcdserver: no leader' } } }),
      want: ['etcd member list of cp3 (10.0.0.3) could not be read: etcdserver: no leader'],
    },
    {
      name: "every peer's member list unreadable",
      controlPlanes: [cp1, cp2, cp3],
      etcd: new Map(
        [...etcd()].map(([a, r]) => [
          a,
          { ...r, members: { ok: false as const, error: 'error building etcd client: context deadline exceeded' } },
        ]),
      ),
      want: [
        'etcd member list of cp2 (10.0.0.2) could not be read: error building etcd client: context deadline exceeded',
        'etcd member list of cp3 (10.0.0.3) could not be read: error building etcd client: context deadline exceeded',
      ],
    },
    // How a member maps to a Node: by name (the host's name) or by a peer URL carrying its address.
    {
      name: 'peers whose Nodes are named by FQDN: the peer URL maps their members',
      controlPlanes: [cp1, cp('cp2.lan', '10.0.0.2'), cp('cp3.lan', '10.0.0.3')],
      etcd: etcd(),
      want: [],
    },
    {
      name: 'etcd advertising another subnet: the name maps each member',
      controlPlanes: [cp1, cp2, cp3],
      etcd: withList(etcd(), [
        member('aa01', 'cp1', '192.168.0.1'),
        member('aa02', 'cp2', '192.168.0.2'),
        member('aa03', 'cp3', '192.168.0.3'),
      ]),
      want: [],
    },
    {
      name: 'IPv6 peer URLs map to IPv6 InternalIPs',
      controlPlanes: [cp('cp1', 'fd00::1'), cp('cp2', 'fd00::2'), cp('cp3', 'fd00::3')],
      etcd: new Map([
        [
          'fd00::2',
          healthy('fd00::2', 'aa02', [
            member('aa01', 'h1', '[fd00::1]'),
            member('aa02', 'h2', '[fd00::2]'),
            member('aa03', 'h3', '[fd00::3]'),
          ]),
        ],
        [
          'fd00::3',
          healthy('fd00::3', 'aa03', [
            member('aa01', 'h1', '[fd00::1]'),
            member('aa02', 'h2', '[fd00::2]'),
            member('aa03', 'h3', '[fd00::3]'),
          ]),
        ],
      ]),
      want: [],
    },
    {
      name: "the target's member, mapped by neither name nor address, is known from its own etcd status",
      controlPlanes: [cp1, cp2, cp3],
      etcd: withList(etcd(), [member('aa01', 'cp1-old-name', '192.168.0.1'), LIST[1], LIST[2]]),
      targetStatus: { ok: true, value: [{ node: '10.0.0.1', memberId: 'aa01', learner: false, errors: '' }] },
      want: [],
    },
    {
      name: "…and without the target's status it is a voter no Node accounts for",
      controlPlanes: [cp1, cp2, cp3],
      etcd: withList(etcd(), [member('aa01', 'cp1-old-name', '192.168.0.1'), LIST[1], LIST[2]]),
      targetStatus: { ok: false, error: 'connection refused' },
      want: [
        'etcd voter aa01 (name "cp1-old-name", peer URL https://192.168.0.1:2380) is not accounted for: no control-plane Node has its ' +
          `name or the address of its peer URL, so nothing shows it keeps voting while the node is down; ${HINT} aa01`,
      ],
    },
  ];
  it.each(rows)('$name', ({ controlPlanes, etcd: readings, targetStatus, want }) => {
    expect(quorumGate({ target: 'cp1', controlPlanes, etcd: readings, targetStatus })).toEqual(want);
  });
});
