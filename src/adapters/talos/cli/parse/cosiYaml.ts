// `talosctl get <type> [<id>] -o yaml` (cmd/talosctl/cmd/talos/output/yaml.go): per resource
// `node: <n>`, `metadata:` and `spec:`, documents separated by `---`. The failsafe schema reads every
// scalar as a string, so a node name or a specVersion can never turn into a number or a date behind
// our back; the conversions below are explicit and checked.
import { parseAllDocuments } from 'yaml';
import { parseRfc3339, rfc3339Ms } from '../../../../core/instants.js';
import type { EtcFileStatusReading, Instant, ServicePidReading, TimeStatusReading } from '../../../../core/model/readings.js';
import { COSI, recordedAt } from '../../resources.js';
import { ParseError, excerpt } from '../../../parseError.js';

export interface CosiMetadata {
  namespace: string;
  type: string;
  id: string;
  version: string;
  owner: string;
  phase: string;
  /** RFC3339 text as printed (node clock, second precision) */
  created: string;
  updated: string;
  createdMs: number;
  updatedMs: number;
}

export interface CosiResource {
  /** the `node:` line: the address as passed to `-n` */
  node: string;
  metadata: CosiMetadata;
  spec: Record<string, unknown>;
}

const FORMAT = 'get -o yaml';

export function parseCosiYaml(text: string): CosiResource[] {
  if (text.trim() === '') return [];
  const docs = parseAllDocuments(text, { schema: 'failsafe' });
  if (!Array.isArray(docs)) return [];
  return docs.map((doc, i) => {
    const where = `document ${i + 1}`;
    if (doc.errors.length > 0) throw new ParseError(FORMAT, `${where} is not valid YAML: ${doc.errors[0].message.split('\n')[0]}`);
    const o = doc.toJS() as unknown;
    if (!isMap(o)) throw new ParseError(FORMAT, `${where} is not a mapping`);
    const node = o.node;
    if (typeof node !== 'string' || node === '') throw new ParseError(FORMAT, `${where} has no node`);
    const md = o.metadata;
    if (!isMap(md)) throw new ParseError(FORMAT, `${where} has no metadata mapping`);
    const field = (k: string, required: boolean): string => {
      const v = md[k];
      if (v === undefined || v === null) {
        if (required) throw new ParseError(FORMAT, `${where}: metadata.${k} is missing`);
        return '';
      }
      if (typeof v !== 'string') throw new ParseError(FORMAT, `${where}: metadata.${k} is not a scalar`);
      return v;
    };
    const created = field('created', true);
    const updated = field('updated', true);
    const spec = o.spec;
    if (!isMap(spec)) throw new ParseError(FORMAT, `${where}: spec is not a mapping`);
    return {
      node,
      metadata: {
        namespace: field('namespace', true),
        type: field('type', true),
        id: field('id', true),
        version: field('version', false),
        owner: field('owner', false),
        phase: field('phase', false),
        created,
        updated,
        createdMs: timestampMs(created, `${where}: metadata.created`),
        updatedMs: timestampMs(updated, `${where}: metadata.updated`),
      },
      spec,
    };
  });
}

/** The epoch ms of a printed RFC 3339 timestamp (sub-millisecond digits truncated); a ParseError naming `what` otherwise. */
function timestampMs(text: string, what: string): number {
  const ms = rfc3339Ms(text);
  if (ms === undefined) throw notRfc3339(text, what);
  return ms;
}

function notRfc3339(text: string, what: string): ParseError {
  return new ParseError(FORMAT, `${what} ${excerpt(text)} is not an RFC 3339 instant`);
}

/**
 * A printed RFC 3339 timestamp as the bounds of the instant it was truncated from: talosctl prints
 * whole seconds, so `12:00:07Z` stands for [12:00:07.000, 12:00:07.999]; fractional digits, when
 * present, narrow the bounds to their last digit.
 */
export function rfc3339Instant(text: string, what = 'timestamp'): Instant {
  const t = parseRfc3339(text);
  if (!t) throw notRfc3339(text, what);
  const digits = t.fraction;
  const unitMs = 1000 / 10 ** digits.length;
  const earliestMs = t.secondMs + (digits ? Number(`0.${digits}`) * 1000 : 0);
  // the last whole millisecond inside the unit, or the unit itself when it is finer than a millisecond
  const latestMs = earliestMs + (unitMs >= 1 ? unitMs - 1 : unitMs);
  return { earliestMs, latestMs, via: 'cli', text };
}

/** ServicePIDs.runtime.talos.dev (v1.13+): `spec.pid` is the host PID, `created` is recorded right after the launch. */
export function servicePidFrom(r: CosiResource): ServicePidReading {
  expectType(r, COSI.servicePid.type);
  return { pid: int(r, 'pid', 1), created: rfc3339Instant(r.metadata.created, 'metadata.created') };
}

/** EtcFileStatuses.files.talos.dev: recorded after the controller wrote the file (recordedAt: the later stamp). */
export function etcFileStatusFrom(r: CosiResource): EtcFileStatusReading {
  expectType(r, COSI.etcFileStatus.type);
  const v = r.spec.specVersion;
  if (v !== undefined && typeof v !== 'string') throw new ParseError(FORMAT, `spec.specVersion of ${r.metadata.id} is not a scalar`);
  const created = rfc3339Instant(r.metadata.created, 'metadata.created');
  const updated = rfc3339Instant(r.metadata.updated, 'metadata.updated');
  return {
    id: r.metadata.id,
    updated: recordedAt(created, updated)!,
    specVersion: v === undefined || v === '' ? undefined : v,
  };
}

/** TimeStatuses.v1alpha1.talos.dev `node`: `epoch` counts clock jumps > 15 min since boot. */
export function timeStatusFrom(r: CosiResource): TimeStatusReading {
  expectType(r, COSI.timeStatus.type);
  const synced = r.spec.synced;
  if (synced !== 'true' && synced !== 'false') throw new ParseError(FORMAT, `spec.synced ${excerpt(String(synced))} is not a boolean`);
  return { synced: synced === 'true', epoch: int(r, 'epoch', 0) };
}

function expectType(r: CosiResource, type: string): void {
  if (r.metadata.type !== type) throw new ParseError(FORMAT, `expected a ${type} resource, got ${excerpt(r.metadata.type)}`);
}

function int(r: CosiResource, key: string, min: number): number {
  const v = r.spec[key];
  if (typeof v !== 'string' || !/^-?\d+$/.test(v)) throw new ParseError(FORMAT, `spec.${key} of ${r.metadata.type} is not an integer`);
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min) throw new ParseError(FORMAT, `spec.${key} ${excerpt(v)} is out of range`);
  return n;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
