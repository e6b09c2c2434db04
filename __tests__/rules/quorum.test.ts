import { describe, expect, it } from 'vitest';
import type { NodeState } from '../../src/model.js';
import { quorumGate, type EtcdReadings } from '../../src/rules/quorum.js';
import { node } from './fixtures.js';

const cp = (name: string, ip: string, over: Partial<NodeState> = {}) => node({ name, internalIPs: [ip], role: 'control-plane', ...over });
const cp1 = cp('cp1', '10.0.0.1');
const cp2 = cp('cp2', '10.0.0.2');
const cp3 = cp('cp3', '10.0.0.3');

const healthy = (ip: string, id: string): EtcdReadings => ({
  status: { ok: true, value: [{ node: ip, memberId: id, learner: false, errors: '' }] },
  alarms: { ok: true, value: [] },
});
const etcd = (over: Record<string, EtcdReadings> = {}) =>
  new Map<string, EtcdReadings>(
    Object.entries({ '10.0.0.2': healthy('10.0.0.2', 'aa02'), '10.0.0.3': healthy('10.0.0.3', 'aa03'), ...over }),
  );

describe('quorumGate (target cp1)', () => {
  const rows: Array<{ name: string; controlPlanes: NodeState[]; etcd: Map<string, EtcdReadings>; want: string[] }> = [
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
      want: ['control plane cp3 is not Ready (Ready=False)'],
    },
    {
      name: 'a peer Ready=Unknown',
      controlPlanes: [cp1, cp('cp2', '10.0.0.2', { ready: 'Unknown' }), cp3],
      etcd: etcd(),
      want: ['control plane cp2 is not Ready (Ready=Unknown)'],
    },
    {
      name: 'only one peer',
      controlPlanes: [cp1, cp2],
      etcd: etcd(),
      want: ['only 1 other control-plane node (cp2): at least two healthy ones are needed to keep etcd quorum while cp1 reboots'],
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
      etcd: etcd({
        '10.0.0.3': {
          ...healthy('10.0.0.3', 'aa03'),
          status: { ok: true, value: [{ node: '10.0.0.3', memberId: 'aa03', learner: true, errors: '' }] },
        },
      }),
      want: ['etcd member aa03 on cp3 (10.0.0.3) is a learner (not a voting member)'],
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
      want: ['etcd member aa02 on cp2 (10.0.0.2) reports errors: etcdserver: no leader'],
    },
    {
      name: 'an unparseable status reading',
      controlPlanes: [cp1, cp2, cp3],
      etcd: etcd({ '10.0.0.2': { ...healthy('10.0.0.2', 'aa02'), status: { ok: false, error: 'unexpected header "FOO BAR"' } } }),
      want: ['etcd status of cp2 (10.0.0.2) could not be read: unexpected header "FOO BAR"'],
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
      want: ['etcd status of cp3 (10.0.0.3) has 0 member rows for 10.0.0.3, expected exactly one'],
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
      want: ['etcd status of cp3 (10.0.0.3) has 0 member rows for 10.0.0.3, expected exactly one'],
    },
    {
      name: 'no reading taken for a peer',
      controlPlanes: [cp1, cp2, cp3],
      etcd: new Map([['10.0.0.2', healthy('10.0.0.2', 'aa02')]]),
      want: ['no etcd reading for cp3 (10.0.0.3)'],
    },
    {
      name: 'the target itself is not among the control planes',
      controlPlanes: [cp2, cp3, cp('cp4', '10.0.0.4')],
      etcd: etcd({ '10.0.0.4': healthy('10.0.0.4', 'aa04') }),
      want: ['cp1 is not among the control-plane nodes read for the quorum gate'],
    },
    {
      name: "the target's own etcd state does not matter (it is the one going down)",
      controlPlanes: [cp1, cp2, cp3],
      etcd: etcd({ '10.0.0.1': { status: { ok: false, error: 'down' }, alarms: { ok: false, error: 'down' } } }),
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
      etcd: etcd({ '10.0.0.1': healthy('10.0.0.1', 'aa01'), '10.0.0.4': healthy('10.0.0.4', 'aa04') }),
      want: ['control planes cp1, cp2 report the same InternalIP 10.0.0.1: each peer must answer for itself'],
    },
    {
      name: "a peer sharing the target's second InternalIP",
      controlPlanes: [cp('cp1', '10.0.0.1', { internalIPs: ['10.0.0.1', '10.0.0.3'] }), cp2, cp3, cp('cp4', '10.0.0.4')],
      etcd: etcd({ '10.0.0.4': healthy('10.0.0.4', 'aa04') }),
      want: ['control planes cp1, cp3 report the same InternalIP 10.0.0.3: each peer must answer for itself'],
    },
    {
      name: 'the same node listed twice counts once',
      controlPlanes: [cp1, cp2, cp2],
      etcd: etcd(),
      want: [
        'control plane cp2 is listed 2 times: peers must be distinct nodes',
        'only 1 other control-plane node (cp2): at least two healthy ones are needed to keep etcd quorum while cp1 reboots',
      ],
    },
    {
      name: 'a peer without an InternalIP',
      controlPlanes: [cp1, cp2, cp('cp3', '', { internalIPs: [] })],
      etcd: etcd(),
      want: ['control plane cp3 has 0 InternalIP addresses, cannot ask its etcd'],
    },
    {
      name: 'two addresses answered by the same etcd member (one machine behind both)',
      controlPlanes: [cp1, cp2, cp3],
      etcd: etcd({ '10.0.0.3': healthy('10.0.0.3', 'aa02') }),
      want: ['cp2 (10.0.0.2) and cp3 (10.0.0.3) answer as the same etcd member aa02: each peer must answer for itself'],
    },
    {
      name: "a peer address answered by the target's own etcd member (when the target was read too)",
      controlPlanes: [cp1, cp2, cp3, cp('cp4', '10.0.0.4')],
      etcd: etcd({ '10.0.0.1': healthy('10.0.0.1', 'aa01'), '10.0.0.4': healthy('10.0.0.4', 'aa01') }),
      want: ['etcd member aa01 on cp4 (10.0.0.4) is the member of cp1, the node going down: each peer must answer for itself'],
    },
  ];
  it.each(rows)('$name', ({ controlPlanes, etcd: readings, want }) => {
    expect(quorumGate({ target: 'cp1', controlPlanes, etcd: readings })).toEqual(want);
  });
});
