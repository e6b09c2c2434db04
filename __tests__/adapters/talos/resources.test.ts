// The Talos facts both read paths share (src/adapters/talos/resources.ts).
import { describe, expect, it } from 'vitest';
import { etcFileId, isMissingFile, isUnregisteredType, recordedAt } from '../../../src/adapters/talos/resources.js';
import type { Instant } from '../../../src/core/model/readings.js';

describe('etcFileId', () => {
  it('maps a file under /etc to its EtcFileStatus id', () => {
    expect(etcFileId('/etc/cri/conf.d/cri.toml')).toBe('cri/conf.d/cri.toml');
    expect(etcFileId('/etc//cri/conf.d/01-registries.part')).toBe('cri/conf.d/01-registries.part');
    expect(etcFileId('/etc')).toBeUndefined();
    expect(etcFileId('/var/etc/x')).toBeUndefined();
  });
});

describe('resource availability', () => {
  it('recognises a node that does not know the resource type', () => {
    expect(isUnregisteredType('rpc error: code = NotFound desc = resource "servicepids" is not registered')).toBe(true);
    expect(
      isUnregisteredType('rpc error: code = PermissionDenied desc = resource type "ServicePIDs.runtime.talos.dev" is not supported'),
    ).toBe(true);
    expect(
      isUnregisteredType("rpc error: code = NotFound desc = resource ServicePIDs.runtime.talos.dev(runtime/cri@undefined) doesn't exist"),
    ).toBe(false);
    expect(isUnregisteredType('rpc error: code = PermissionDenied desc = not authorized')).toBe(false);
  });

  it('recognises the server saying a path is not there', () => {
    expect(isMissingFile('rpc error: code = Unknown desc = lstat /etc/cri/conf.d/x: no such file or directory')).toBe(true);
    expect(isMissingFile('open /etc/cri/conf.d/x: permission denied')).toBe(false);
  });
});

describe('recordedAt', () => {
  const at = (earliestMs: number, latestMs: number): Instant => ({ earliestMs, latestMs, via: 'cli', text: `${earliestMs}` });

  it('is the later stamp, never beginning before either', () => {
    // a status only ever created: `updated` stamped a hair before `created`
    expect(recordedAt(at(1000, 1999), at(999, 1998))).toEqual({ ...at(1000, 1999) });
    expect(recordedAt(at(1000, 1999), at(5000, 5999))).toEqual(at(5000, 5999));
    // bounds that overlap: the later latest, and the later earliest
    expect(recordedAt(at(1000, 3000), at(2000, 2500))).toEqual({ ...at(1000, 3000), earliestMs: 2000 });
  });

  it('falls back to the one stamp present', () => {
    expect(recordedAt(undefined, at(1, 2))).toEqual(at(1, 2));
    expect(recordedAt(at(1, 2), undefined)).toEqual(at(1, 2));
    expect(recordedAt(undefined, undefined)).toBeUndefined();
  });
});
