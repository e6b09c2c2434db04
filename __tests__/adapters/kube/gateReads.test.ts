// The health gates' reads parsed (src/adapters/kube/parse/gateReads.ts): `kubectl api-resources` as it
// prints (tabwriter columns, a blank SHORTNAMES cell) and a List of the gate kinds' objects.
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../../src/adapters/parseError.js';
import { gateObjectsFromList, servedKindsFromTable } from '../../../src/adapters/kube/parse/gateReads.js';

// as kubectl 1.33 prints it (columns padded by text/tabwriter, padding 3); `volumes` has no short name
const TABLE = [
  'NAME                     SHORTNAMES   APIVERSION                     NAMESPACED   KIND',
  'persistentvolumes        pv           v1                             false        PersistentVolume',
  'volumeattachments                     storage.k8s.io/v1              false        VolumeAttachment',
  'volumes                               longhorn.io/v1beta2            true         Volume',
  '',
].join('\n');

describe('servedKindsFromTable', () => {
  it('reads each row by the header columns: the core group empty, a blank short name skipped', () => {
    expect(servedKindsFromTable(TABLE)).toEqual([
      { resource: 'persistentvolumes', group: '', version: 'v1', namespaced: false, kind: 'PersistentVolume' },
      { resource: 'volumeattachments', group: 'storage.k8s.io', version: 'v1', namespaced: false, kind: 'VolumeAttachment' },
      { resource: 'volumes', group: 'longhorn.io', version: 'v1beta2', namespaced: true, kind: 'Volume' },
    ]);
    expect(servedKindsFromTable('')).toEqual([]);
  });

  it('refuses a header or a row it does not know, never guessing', () => {
    expect(() => servedKindsFromTable('NAME   APIVERSION   KIND\npv   v1   PersistentVolume\n')).toThrow(ParseError);
    const shifted = TABLE.replace('false        PersistentVolume', 'maybe        PersistentVolume');
    expect(() => servedKindsFromTable(shifted)).toThrow(/a row that does not parse/);
  });
});

describe('gateObjectsFromList', () => {
  it('takes each item with its group, kind, namespace, name and labels, and keeps the object whole', () => {
    const pv = { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-1' }, status: { phase: 'Failed' } };
    const vol = {
      apiVersion: 'longhorn.io/v1beta2',
      kind: 'Volume',
      metadata: { name: 'pvc-1', namespace: 'longhorn-system', labels: { app: 'db' } },
      status: { robustness: 'degraded' },
    };
    expect(gateObjectsFromList({ kind: 'List', items: [pv, vol] })).toEqual([
      { group: '', kind: 'PersistentVolume', name: 'pv-1', labels: {}, object: pv },
      { group: 'longhorn.io', kind: 'Volume', namespace: 'longhorn-system', name: 'pvc-1', labels: { app: 'db' }, object: vol },
    ]);
  });

  it('refuses an answer that is not a List', () => {
    expect(() => gateObjectsFromList({ kind: 'Status' })).toThrow(/the answer is not a List/);
    expect(() => gateObjectsFromList(null)).toThrow(ParseError);
  });
});
