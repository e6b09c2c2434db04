import { describe, expect, it } from 'vitest';
import {
  etcFileStatusFrom,
  parseCosiYaml,
  rfc3339Instant,
  servicePidFrom,
  timeStatusFrom,
} from '../../../../src/adapters/talos/cli/parse/cosiYaml.js';
import { ParseError } from '../../../../src/adapters/parseError.js';
import { cosiDoc, cosiStream } from './talosOutput.js';

const pidDoc = (node: string, pid: number, created: string): string =>
  cosiDoc({
    node,
    namespace: 'runtime',
    type: 'ServicePIDs.runtime.talos.dev',
    id: 'cri',
    created,
    updated: created,
    spec: [`pid: ${pid}`, 'mountNamespace: mnt:[4026531841]'],
  });

describe('parseCosiYaml', () => {
  it('reads a servicepids document', () => {
    const text = pidDoc('10.0.0.11', 1893, '2026-08-20T10:11:12Z');
    expect(text).toBe(
      'node: 10.0.0.11\nmetadata:\n    namespace: runtime\n    type: ServicePIDs.runtime.talos.dev\n    id: cri\n    version: 1\n    owner:\n    phase: running\n' +
        '    created: 2026-08-20T10:11:12Z\n    updated: 2026-08-20T10:11:12Z\nspec:\n    pid: 1893\n    mountNamespace: mnt:[4026531841]\n',
    );
    const [r] = parseCosiYaml(text);
    expect(r.node).toBe('10.0.0.11');
    expect(r.metadata).toMatchObject({
      namespace: 'runtime',
      id: 'cri',
      version: '1',
      owner: '',
      phase: 'running',
      createdMs: Date.parse('2026-08-20T10:11:12Z'),
    });
    // printed in whole seconds: the launch was recorded somewhere in that second
    const t = Date.parse('2026-08-20T10:11:12Z');
    expect(servicePidFrom(r)).toEqual({
      pid: 1893,
      created: { earliestMs: t, latestMs: t + 999, via: 'cli', text: '2026-08-20T10:11:12Z' },
    });
  });

  it('reads a stream of documents from several nodes', () => {
    const text = cosiStream([pidDoc('10.0.0.11', 1893, '2026-08-20T10:11:12Z'), pidDoc('10.0.0.12', 2001, '2026-08-19T00:00:01Z')]);
    expect(text).toContain('\n---\nnode: 10.0.0.12\n');
    expect(parseCosiYaml(text).map((r) => [r.node, servicePidFrom(r).pid])).toEqual([
      ['10.0.0.11', 1893],
      ['10.0.0.12', 2001],
    ]);
  });

  it('reads an etcfilestatus: updated is the last write, specVersion stays a string', () => {
    const text = cosiDoc({
      node: '10.0.0.11',
      namespace: 'files',
      type: 'EtcFileStatuses.files.talos.dev',
      id: 'cri/conf.d/cri.toml',
      version: 3,
      owner: 'files.EtcFileController',
      created: '2026-08-04T09:03:20Z',
      updated: '2026-08-20T10:11:12Z',
      spec: ['specVersion: "3"'],
    });
    const t = Date.parse('2026-08-20T10:11:12Z');
    expect(etcFileStatusFrom(parseCosiYaml(text)[0])).toEqual({
      id: 'cri/conf.d/cri.toml',
      updated: { earliestMs: t, latestMs: t + 999, via: 'cli', text: '2026-08-20T10:11:12Z' },
      specVersion: '3',
    });
  });

  it('an etcfilestatus only ever created is recorded at the later of created and updated', () => {
    const text = cosiDoc({
      node: '10.0.0.11',
      namespace: 'files',
      type: 'EtcFileStatuses.files.talos.dev',
      id: 'cri/conf.d/cri.toml',
      version: 1,
      owner: 'files.EtcFileController',
      created: '2026-08-20T10:11:13Z',
      updated: '2026-08-20T10:11:12Z',
      spec: ['specVersion: "1"'],
    });
    const t = Date.parse('2026-08-20T10:11:13Z');
    expect(etcFileStatusFrom(parseCosiYaml(text)[0]).updated).toEqual({
      earliestMs: t,
      latestMs: t + 999,
      via: 'cli',
      text: '2026-08-20T10:11:13Z',
    });
  });

  it('fractional digits narrow the bounds to their last digit', () => {
    const t = Date.parse('2026-08-20T10:11:12Z');
    expect(rfc3339Instant('2026-08-20T10:11:12.25Z')).toMatchObject({ earliestMs: t + 250, latestMs: t + 259 });
    const ns = rfc3339Instant('2026-08-20T10:11:12.123456789Z');
    expect(ns.earliestMs - t).toBeCloseTo(123.456789, 4);
    // a nanosecond unit is below what a double holds at today's epoch (~0.25 µs): the bounds coincide
    expect(ns.latestMs - ns.earliestMs).toBeGreaterThanOrEqual(0);
    expect(ns.latestMs - ns.earliestMs).toBeLessThan(0.001);
  });

  it('reads a timestatus, including a pre-sync timestamp near the epoch', () => {
    const text = cosiDoc({
      node: 'cp-1',
      namespace: 'runtime',
      type: 'TimeStatuses.v1alpha1.talos.dev',
      id: 'node',
      owner: 'time.SyncController',
      created: '2025-11-02T08:00:00Z',
      updated: '1970-01-01T00:00:09Z',
      spec: ['synced: true', 'epoch: 1', 'syncDisabled: false'],
    });
    const [r] = parseCosiYaml(text);
    expect(r.metadata.updatedMs).toBe(9000);
    expect(timeStatusFrom(r)).toEqual({ synced: true, epoch: 1 });
  });

  it('a node name that looks like a number stays a string', () => {
    const text = pidDoc('1.5', 7, '2026-08-20T10:11:12Z');
    expect(parseCosiYaml(text)[0].node).toBe('1.5');
  });

  it('empty stdout: no documents', () => {
    expect(parseCosiYaml('')).toEqual([]);
  });

  it.each([
    ['a document without node', pidDoc('n', 1, '2026-08-20T10:11:12Z').replace('node: n\n', '')],
    ['a non-RFC3339 created', pidDoc('n', 1, '2026-08-20 10:11:12 +0000 UTC')],
    ['an impossible date', pidDoc('n', 1, '2026-02-30T10:11:12Z')],
    ['broken YAML', 'node: n\nmetadata: [\n'],
    ['a table instead of YAML', 'NODE   NAMESPACE   TYPE\n'],
  ])('rejects %s', (_what, text) => {
    expect(() => parseCosiYaml(text)).toThrow(ParseError);
  });

  it('typed readers reject the wrong type or a bad field', () => {
    const [pid] = parseCosiYaml(pidDoc('n', 1, '2026-08-20T10:11:12Z'));
    expect(() => timeStatusFrom(pid)).toThrow(ParseError);
    const [bad] = parseCosiYaml(pidDoc('n', 1, '2026-08-20T10:11:12Z').replace('pid: 1', 'pid: one'));
    expect(() => servicePidFrom(bad)).toThrow(ParseError);
  });
});
