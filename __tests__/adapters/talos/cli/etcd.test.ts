import { describe, expect, it } from 'vitest';
import { parseEtcdAlarms, parseEtcdMembers, parseEtcdStatus } from '../../../../src/adapters/talos/cli/parse/etcd.js';
import { ParseError } from '../../../../src/adapters/parseError.js';
import { goTabwriter } from './talosOutput.js';

// etcd.go v1.11–v1.13: header with the first message, NODE because -n always brings hostname metadata
const HEADER = 'NODE\tMEMBER\tDB SIZE\tIN USE\tLEADER\tRAFT INDEX\tRAFT TERM\tRAFT APPLIED INDEX\tLEARNER\tPROTOCOL\tSTORAGE\tERRORS\n';
const row = (node: string, member: string, learner: boolean, errors = ''): string =>
  `${node}\t${member}\t20 MB\t9.8 MB (48.99%)\t8a3c7f2e1b4d9c60\t123456\t7\t123456\t${learner}\t3.6.0\t3.6.0\t${errors}\n`;

describe('parseEtcdStatus', () => {
  it('a healthy member: cells with spaces, trailing spaces for the empty ERRORS cell', () => {
    const text = goTabwriter(HEADER + row('10.0.0.11', '8a3c7f2e1b4d9c60', false));
    expect(text).toBe(
      'NODE        MEMBER             DB SIZE   IN USE            LEADER             RAFT INDEX   RAFT TERM   RAFT APPLIED INDEX   LEARNER   PROTOCOL   STORAGE   ERRORS\n' +
        '10.0.0.11   8a3c7f2e1b4d9c60   20 MB     9.8 MB (48.99%)   8a3c7f2e1b4d9c60   123456       7           123456               false     3.6.0      3.6.0     \n',
    );
    expect(parseEtcdStatus(text)).toEqual([
      {
        node: '10.0.0.11',
        memberId: '8a3c7f2e1b4d9c60',
        dbSize: '20 MB',
        inUse: '9.8 MB (48.99%)',
        leader: '8a3c7f2e1b4d9c60',
        raftIndex: 123456,
        raftTerm: 7,
        raftAppliedIndex: 123456,
        learner: false,
        protocol: '3.6.0',
        storage: '3.6.0',
        errors: '',
      },
    ]);
  });

  it('a learner with member errors', () => {
    const text = goTabwriter(
      HEADER + row('10.0.0.12', '00000000000000ff', true, 'etcdserver: mvcc: database space exceeded, etcdserver: no leader'),
    );
    expect(parseEtcdStatus(text)[0]).toMatchObject({
      memberId: '00000000000000ff',
      learner: true,
      errors: 'etcdserver: mvcc: database space exceeded, etcdserver: no leader',
    });
  });

  it('the compact (≤1.10) header without PROTOCOL and STORAGE', () => {
    const text = goTabwriter(
      'NODE\tMEMBER\tDB SIZE\tIN USE\tLEADER\tRAFT INDEX\tRAFT TERM\tRAFT APPLIED INDEX\tLEARNER\tERRORS\n' +
        '10.0.0.11\t8a3c7f2e1b4d9c60\t1.2 GB\t1.0 GB (83.33%)\t8a3c7f2e1b4d9c60\t1\t2\t3\tfalse\t\n',
    );
    expect(parseEtcdStatus(text)[0]).toMatchObject({ dbSize: '1.2 GB', inUse: '1.0 GB (83.33%)', protocol: undefined, errors: '' });
  });

  it.each([
    ['empty stdout', ''],
    ['an unknown header', 'NODE   MEMBER   STATUS\n'],
    ['a member id that is not 16 hex digits', goTabwriter(HEADER + row('10.0.0.11', '8a3c7f2e', false))],
    ['a LEARNER that is not a boolean', goTabwriter(HEADER + row('10.0.0.11', '8a3c7f2e1b4d9c60', false).replace('false', 'no'))],
    ['an IN USE without a percentage', goTabwriter(HEADER + row('10.0.0.11', '8a3c7f2e1b4d9c60', false).replace(' (48.99%)', ''))],
  ])('rejects %s', (_what, text) => {
    expect(() => parseEtcdStatus(text)).toThrow(ParseError);
  });
});

describe('parseEtcdAlarms', () => {
  it('no alarms: empty stdout', () => {
    expect(parseEtcdAlarms('')).toEqual([]);
  });

  it('alarms for one or more members', () => {
    const text = goTabwriter('NODE\tMEMBER\tALARM\n10.0.0.11\t8a3c7f2e1b4d9c60\tNOSPACE\n10.0.0.11\t00000000000000ff\tCORRUPT\n');
    expect(text.split('\n')[0]).toBe('NODE        MEMBER             ALARM');
    expect(parseEtcdAlarms(text)).toEqual([
      { node: '10.0.0.11', memberId: '8a3c7f2e1b4d9c60', alarm: 'NOSPACE' },
      { node: '10.0.0.11', memberId: '00000000000000ff', alarm: 'CORRUPT' },
    ]);
  });

  it('rejects a table it does not know', () => {
    expect(() => parseEtcdAlarms('MEMBER   ALARM   EXTRA\n')).toThrow(ParseError);
    expect(() => parseEtcdAlarms(goTabwriter('NODE\tMEMBER\tALARM\nn\tnot-hex\tNOSPACE\n'))).toThrow(ParseError);
  });
});

// etcd.go v1.13.8 `etcd members`: the header with the first member of the first answering node
const MEMBERS = 'NODE\tID\tHOSTNAME\tPEER URLS\tCLIENT URLS\tLEARNER\n';

describe('parseEtcdMembers', () => {
  it('voters, an unstarted member (empty HOSTNAME and CLIENT URLS), several URLs, a learner, IPv6', () => {
    const text = goTabwriter(
      MEMBERS +
        '10.0.0.11\t8a3c7f2e1b4d9c60\tcp-1\thttps://10.0.0.11:2380\thttps://10.0.0.11:2379\tfalse\n' +
        '10.0.0.11\t00000000000000a2\t\thttps://10.0.0.8:2380\t\tfalse\n' +
        '10.0.0.11\t5e1f00d0c0ffee01\tcp-2\thttps://10.0.0.12:2380,https://[fd00::12]:2380\thttps://10.0.0.12:2379\tfalse\n' +
        '10.0.0.11\t00000000000000a3\tcp-new\thttps://[fd00::3]:2380\thttps://[fd00::3]:2379\ttrue\n',
    );
    expect(text.split('\n')[2]).toBe(
      '10.0.0.11   00000000000000a2              https://10.0.0.8:2380                                                     false',
    );
    expect(parseEtcdMembers(text)).toEqual([
      {
        node: '10.0.0.11',
        id: '8a3c7f2e1b4d9c60',
        hostname: 'cp-1',
        peerUrls: ['https://10.0.0.11:2380'],
        clientUrls: ['https://10.0.0.11:2379'],
        learner: false,
      },
      { node: '10.0.0.11', id: '00000000000000a2', hostname: '', peerUrls: ['https://10.0.0.8:2380'], clientUrls: [], learner: false },
      {
        node: '10.0.0.11',
        id: '5e1f00d0c0ffee01',
        hostname: 'cp-2',
        peerUrls: ['https://10.0.0.12:2380', 'https://[fd00::12]:2380'],
        clientUrls: ['https://10.0.0.12:2379'],
        learner: false,
      },
      {
        node: '10.0.0.11',
        id: '00000000000000a3',
        hostname: 'cp-new',
        peerUrls: ['https://[fd00::3]:2380'],
        clientUrls: ['https://[fd00::3]:2379'],
        learner: true,
      },
    ]);
  });

  it('the header without NODE (no hostname metadata)', () => {
    const text = goTabwriter(
      'ID\tHOSTNAME\tPEER URLS\tCLIENT URLS\tLEARNER\n8a3c7f2e1b4d9c60\tcp-1\thttps://10.0.0.11:2380\thttps://10.0.0.11:2379\tfalse\n',
    );
    expect(parseEtcdMembers(text)).toEqual([
      {
        node: undefined,
        id: '8a3c7f2e1b4d9c60',
        hostname: 'cp-1',
        peerUrls: ['https://10.0.0.11:2380'],
        clientUrls: ['https://10.0.0.11:2379'],
        learner: false,
      },
    ]);
  });

  it.each([
    ['empty stdout (no member at all)', ''],
    ['an unknown header', 'NODE   ID   NAME\n'],
    [
      'an id that is not 16 hex digits',
      goTabwriter(MEMBERS + '10.0.0.11\tcp-1\tcp-1\thttps://10.0.0.11:2380\thttps://10.0.0.11:2379\tfalse\n'),
    ],
    [
      'a LEARNER that is not a boolean',
      goTabwriter(MEMBERS + '10.0.0.11\t8a3c7f2e1b4d9c60\tcp-1\thttps://10.0.0.11:2380\thttps://10.0.0.11:2379\tno\n'),
    ],
    [
      'a PEER URLS cell that is not URLs',
      goTabwriter(MEMBERS + '10.0.0.11\t8a3c7f2e1b4d9c60\tcp-1\t10.0.0.11:2380\thttps://10.0.0.11:2379\tfalse\n'),
    ],
  ])('rejects %s', (_what, text) => {
    expect(() => parseEtcdMembers(text)).toThrow(ParseError);
  });
});
