import { describe, expect, it } from 'vitest';
import { parseEtcdAlarms, parseEtcdStatus } from '../../src/adapters/parse/etcd.js';
import { ParseError } from '../../src/adapters/parse/parseError.js';
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
