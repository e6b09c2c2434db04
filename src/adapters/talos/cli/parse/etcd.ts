// `talosctl -n A etcd status`, `etcd alarm list` and `etcd members` (cmd/talosctl/cmd/talos/etcd.go).
// Cells contain spaces (`20 MB`, `9.8 MB (48.99%)`) or may be empty (an unstarted member's HOSTNAME),
// so cells are cut at the header's column offsets.
import { ParseError, excerpt } from '../../../parseError.js';
import { parseTabTable } from './table.js';

export interface EtcdStatusRow {
  /** absent only when talosctl had no hostname metadata (never with `-n` on ≤1.13) */
  node?: string;
  /** 16 lower-case hex digits */
  memberId: string;
  dbSize: string;
  inUse: string;
  leader: string;
  raftIndex: number;
  raftTerm: number;
  raftAppliedIndex: number;
  learner: boolean;
  /** v1.11+ columns; absent with an older client */
  protocol?: string;
  storage?: string;
  /** `, `-joined member errors; '' when healthy */
  errors: string;
}

export interface EtcdAlarmRow {
  node?: string;
  memberId: string;
  /** `NOSPACE`, `CORRUPT`, `NONE` */
  alarm: string;
}

const STATUS = 'etcd status';
const BASE = ['MEMBER', 'DB SIZE', 'IN USE', 'LEADER', 'RAFT INDEX', 'RAFT TERM', 'RAFT APPLIED INDEX', 'LEARNER'];
const STATUS_HEADERS = [
  ['NODE', ...BASE, 'PROTOCOL', 'STORAGE', 'ERRORS'],
  [...BASE, 'PROTOCOL', 'STORAGE', 'ERRORS'],
  ['NODE', ...BASE, 'ERRORS'],
  [...BASE, 'ERRORS'],
];
const MEMBER_ID = /^[0-9a-f]{16}$/;
const IN_USE = /^\S+ \S+ \(\d+\.\d{2}%\)$/;

export function parseEtcdStatus(text: string): EtcdStatusRow[] {
  const table = parseTabTable(STATUS, text, STATUS_HEADERS, true);
  const hasNode = table.columns[0] === 'NODE';
  const hasProtocol = table.columns.includes('PROTOCOL');
  return table.rows.map((r, i) => {
    const where = `row ${i + 1}`;
    if (!MEMBER_ID.test(r.MEMBER)) throw new ParseError(STATUS, `${where}: MEMBER ${excerpt(r.MEMBER)} is not a 16-digit hex id`);
    if (!MEMBER_ID.test(r.LEADER)) throw new ParseError(STATUS, `${where}: LEADER ${excerpt(r.LEADER)} is not a 16-digit hex id`);
    if (!IN_USE.test(r['IN USE'])) throw new ParseError(STATUS, `${where}: IN USE ${excerpt(r['IN USE'])} is not "<size> (<pct>%)"`);
    if (r.LEARNER !== 'true' && r.LEARNER !== 'false')
      throw new ParseError(STATUS, `${where}: LEARNER ${excerpt(r.LEARNER)} is not a boolean`);
    if (hasNode && !r.NODE) throw new ParseError(STATUS, `${where}: empty NODE`);
    return {
      node: hasNode ? r.NODE : undefined,
      memberId: r.MEMBER,
      dbSize: r['DB SIZE'],
      inUse: r['IN USE'],
      leader: r.LEADER,
      raftIndex: uint(r['RAFT INDEX'], where, 'RAFT INDEX'),
      raftTerm: uint(r['RAFT TERM'], where, 'RAFT TERM'),
      raftAppliedIndex: uint(r['RAFT APPLIED INDEX'], where, 'RAFT APPLIED INDEX'),
      learner: r.LEARNER === 'true',
      protocol: hasProtocol ? r.PROTOCOL : undefined,
      storage: hasProtocol ? r.STORAGE : undefined,
      errors: r.ERRORS,
    };
  });
}

const ALARMS = 'etcd alarm list';

/** No alarms: talosctl prints nothing at all (the header comes with the first alarm). */
export function parseEtcdAlarms(text: string): EtcdAlarmRow[] {
  if (text === '') return [];
  const table = parseTabTable(
    ALARMS,
    text,
    [
      ['NODE', 'MEMBER', 'ALARM'],
      ['MEMBER', 'ALARM'],
    ],
    true,
  );
  const hasNode = table.columns[0] === 'NODE';
  return table.rows.map((r, i) => {
    if (!MEMBER_ID.test(r.MEMBER)) throw new ParseError(ALARMS, `row ${i + 1}: MEMBER ${excerpt(r.MEMBER)} is not a 16-digit hex id`);
    if (!/^[A-Z]+$/.test(r.ALARM)) throw new ParseError(ALARMS, `row ${i + 1}: ALARM ${excerpt(r.ALARM)} is not an alarm name`);
    return { node: hasNode ? r.NODE : undefined, memberId: r.MEMBER, alarm: r.ALARM };
  });
}

export interface EtcdMemberRow {
  /** absent only when talosctl had no hostname metadata (never with `-n` on ≤1.13) */
  node?: string;
  /** 16 lower-case hex digits */
  id: string;
  /** '' while the member has not started (etcd learns the name when the member publishes it) */
  hostname: string;
  peerUrls: string[];
  clientUrls: string[];
  learner: boolean;
}

const MEMBERS = 'etcd members';

/**
 * v1.13.8 prints the header with the first member of the first answering node (`NODE` when that
 * message carries hostname metadata, always with `-n`); v1.14 always prints `NODE …`. URLs are joined
 * with `,`; LEARNER is Go's `%v` of a bool and ends the line (no padding).
 */
export function parseEtcdMembers(text: string): EtcdMemberRow[] {
  const table = parseTabTable(
    MEMBERS,
    text,
    [
      ['NODE', 'ID', 'HOSTNAME', 'PEER URLS', 'CLIENT URLS', 'LEARNER'],
      ['ID', 'HOSTNAME', 'PEER URLS', 'CLIENT URLS', 'LEARNER'],
    ],
    true,
  );
  const hasNode = table.columns[0] === 'NODE';
  return table.rows.map((r, i) => {
    const where = `row ${i + 1}`;
    if (!MEMBER_ID.test(r.ID)) throw new ParseError(MEMBERS, `${where}: ID ${excerpt(r.ID)} is not a 16-digit hex id`);
    if (r.LEARNER !== 'true' && r.LEARNER !== 'false')
      throw new ParseError(MEMBERS, `${where}: LEARNER ${excerpt(r.LEARNER)} is not a boolean`);
    if (hasNode && !r.NODE) throw new ParseError(MEMBERS, `${where}: empty NODE`);
    return {
      node: hasNode ? r.NODE : undefined,
      id: r.ID,
      hostname: r.HOSTNAME,
      peerUrls: urls(r['PEER URLS'], where, 'PEER URLS'),
      clientUrls: urls(r['CLIENT URLS'], where, 'CLIENT URLS'),
      learner: r.LEARNER === 'true',
    };
  });
}

function urls(cell: string, where: string, col: string): string[] {
  if (cell === '') return [];
  const list = cell.split(',');
  if (list.some((u) => !/^[a-z][a-z0-9+.-]*:\/\/\S+$/i.test(u)))
    throw new ParseError(MEMBERS, `${where}: ${col} ${excerpt(cell)} is not a list of URLs`);
  return list;
}

function uint(v: string, where: string, col: string): number {
  if (!/^\d+$/.test(v)) throw new ParseError(STATUS, `${where}: ${col} ${excerpt(v)} is not a number`);
  return Number(v);
}
