// The verified marker per registry host: one JSON annotation mapping host → proof, the old
// single-key marker read for the upgrade, a changed verify-image re-proving, and a write that keeps
// every other host's entry behind a `test` of the text it read.
import { describe, expect, it } from 'vitest';
import { applyJsonPatch, PatchRejected } from '../fakes/jsonPatch.js';
import {
  carriesMarker,
  hostsToRoll,
  imageHost,
  markerWrite,
  notVerifiedWhy,
  hostsToProve,
  proofHowOf,
  proveBy,
  readMarkers,
  staleHosts,
  unprovenWhy,
} from '../../src/rules/marker.js';
import { judgeLostWrite } from '../../src/rules/lostWrite.js';
import { keys } from './fixtures.js';

const AT = '2026-12-06T07:00:00.000Z';
const map = (o: Record<string, { revision: string; image?: string; at?: string; proof?: string }>) => JSON.stringify(o);
const GHCR = { hosts: ['ghcr.io'], revision: 'r2' };

describe('the annotation key', () => {
  it('is one key for every host, valid whatever the host (a port, a long name): the host is in the value', () => {
    expect(keys.verified).toBe('registry-auth-rollout/verified');
    const name = keys.verified.split('/')[1];
    // apimachinery IsQualifiedName: the name part at most 63 characters of [A-Za-z0-9-_.], alphanumeric at both ends
    expect(name).toMatch(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/);
  });
});

describe('staleHosts / carriesMarker', () => {
  it('a host verified at the revision is not stale; another host entry neither helps nor hurts', () => {
    const a = { [keys.verified]: map({ 'ghcr.io': { revision: 'r2', at: AT }, 'mirror.local:5000': { revision: 'm9', at: AT } }) };
    expect(staleHosts(a, keys, GHCR)).toEqual([]);
    expect(carriesMarker(a, keys, GHCR)).toBe(true);
    expect(staleHosts(a, keys, { hosts: ['mirror.local:5000'], revision: 'r2' })).toEqual([
      { host: 'mirror.local:5000', why: 'mirror.local:5000 verified for revision m9, not r2' },
    ]);
  });

  it('a node verified for one host only is stale for the other, and only for it', () => {
    const a = { [keys.verified]: map({ 'ghcr.io': { revision: 'r2', at: AT } }) };
    expect(staleHosts(a, keys, { hosts: ['ghcr.io', 'mirror.local:5000'], revision: 'r2' })).toEqual([
      { host: 'mirror.local:5000', why: 'no verified marker for mirror.local:5000' },
    ]);
  });

  it('an unreadable marker proves no host, and says why', () => {
    const a = { [keys.verified]: 'ghcr.io=r2' };
    expect(readMarkers(a, keys)).toMatchObject({ byHost: {}, raw: 'ghcr.io=r2', unreadable: 'not JSON' });
    expect(staleHosts(a, keys, GHCR)).toEqual([{ host: 'ghcr.io', why: 'registry-auth-rollout/verified is not JSON' }]);
    expect(readMarkers({ [keys.verified]: '["ghcr.io"]' }, keys).unreadable).toBe('not a JSON object');
    // an entry without a revision proves nothing; the others are read
    expect(readMarkers({ [keys.verified]: '{"a":{},"b":{"revision":"r1"}}' }, keys).byHost).toEqual({ b: { revision: 'r1' } });
  });
});

describe('the old single-key marker (before the per-host markers): the upgrade re-rolls nothing for one registry', () => {
  it('counts for the one host a run rolls when the node carries no map yet', () => {
    expect(carriesMarker({ [keys.verifiedRevision]: 'r2' }, keys, GHCR)).toBe(true);
    expect(staleHosts({ [keys.verifiedRevision]: 'r1' }, keys, GHCR)).toEqual([
      { host: 'ghcr.io', why: 'ghcr.io verified for revision r1, not r2' },
    ]);
  });

  it('counts for no host of a run rolling several (it does not say which one it was written for)', () => {
    const hosts = ['ghcr.io', 'mirror.local:5000'];
    expect(staleHosts({ [keys.verifiedRevision]: 'r2' }, keys, { hosts, revision: 'r2' }).map((s) => s.host)).toEqual(hosts);
  });

  it('is ignored once the node carries the map (a run of this version verified it)', () => {
    const a = { [keys.verifiedRevision]: 'r2', [keys.verified]: map({ 'mirror.local:5000': { revision: 'm1', at: AT } }) };
    expect(carriesMarker(a, keys, GHCR)).toBe(false);
  });

  it('records no image: a verify-image does not re-prove the node it proves', () => {
    expect(carriesMarker({ [keys.verifiedRevision]: 'r2' }, keys, { ...GHCR, verifyImage: 'ghcr.io/org/probe:1' })).toBe(true);
  });
});

describe('a changed verify-image re-proves', () => {
  const proved = (image?: string) => ({
    [keys.verified]: map({
      'ghcr.io': { revision: 'r2', ...(image ? { image } : {}), at: AT, proof: image ? 'verify-image' : 'evidence' },
    }),
  });

  it('the same image: verified; another image or none recorded on a proven entry: stale with reprove', () => {
    const want = { ...GHCR, verifyImage: 'ghcr.io/org/probe:2' };
    expect(staleHosts(proved('ghcr.io/org/probe:2'), keys, want)).toEqual([]);
    expect(staleHosts(proved('ghcr.io/org/probe:1'), keys, want)).toEqual([
      { host: 'ghcr.io', why: 'ghcr.io proven with ghcr.io/org/probe:1, not verify-image ghcr.io/org/probe:2', reprove: true },
    ]);
    expect(staleHosts(proved(), keys, want)).toEqual([
      { host: 'ghcr.io', why: 'ghcr.io proven with no image, not verify-image ghcr.io/org/probe:2', reprove: true },
    ]);
    // no verify-image: the image recorded does not matter
    expect(staleHosts(proved('ghcr.io/org/probe:1'), keys, GHCR)).toEqual([]);
  });

  it('an entry not proven yet (undecided, or not saying how) is to prove, not stale: a pull proves it without a roll', () => {
    const want = { ...GHCR, verifyImage: 'ghcr.io/org/probe:2' };
    for (const proof of ['undecided', undefined]) {
      const a = { [keys.verified]: map({ 'ghcr.io': { revision: 'r2', at: AT, ...(proof ? { proof } : {}) } }) };
      expect(staleHosts(a, keys, want)).toEqual([]);
      expect(hostsToProve(a, keys, want).map((h) => h.host)).toEqual(['ghcr.io']);
    }
  });

  it('the old-credential verdict asks only for the revision: a re-proof holds the same credential', () => {
    expect(notVerifiedWhy(proved('ghcr.io/org/probe:1'), keys, GHCR)).toBeUndefined();
    expect(notVerifiedWhy({}, keys, GHCR)).toBe('no verified marker for ghcr.io');
  });

  it('the image proves the one host rolled; of several, the host it is on (docker.io being registry-1.docker.io)', () => {
    expect(imageHost({ hosts: ['mirror.local:5000'], verifyImage: 'docker.io/library/probe:1' })).toBe('mirror.local:5000');
    const hosts = ['docker.io', 'ghcr.io'];
    expect(imageHost({ hosts, verifyImage: 'ghcr.io/org/probe:1' })).toBe('ghcr.io');
    expect(imageHost({ hosts, verifyImage: 'probe' })).toBe('docker.io');
    expect(imageHost({ hosts, verifyImage: 'quay.io/org/probe:1' })).toBeUndefined();
    expect(imageHost({ hosts })).toBeUndefined();
    // only the host it proves is re-proven by a changed image
    const a = {
      [keys.verified]: map({
        'docker.io': { revision: 'r2', at: AT },
        'ghcr.io': { revision: 'r2', image: 'ghcr.io/org/probe:1', at: AT },
      }),
    };
    expect(staleHosts(a, keys, { hosts, revision: 'r2', verifyImage: 'ghcr.io/org/probe:2' }).map((s) => s.host)).toEqual(['ghcr.io']);
  });
});

describe('hostsToRoll', () => {
  it('the stale hosts; a node verified for all of them (quarantined, or verified since the listing) is rolled for all', () => {
    const hosts = ['ghcr.io', 'mirror.local:5000'];
    const verified = { [keys.verified]: map({ 'ghcr.io': { revision: 'r2' }, 'mirror.local:5000': { revision: 'r2' } }) };
    expect(hostsToRoll({ [keys.verified]: map({ 'ghcr.io': { revision: 'r2' } }) }, keys, { hosts, revision: 'r2' })).toEqual([
      { host: 'mirror.local:5000', why: 'no verified marker for mirror.local:5000' },
    ]);
    expect(hostsToRoll({ ...verified, [keys.quarantined]: '{}' }, keys, { hosts, revision: 'r2' }).map((h) => h.why)).toEqual([
      'ghcr.io: the node is quarantined: its containerd may still hold the old credential',
      'mirror.local:5000: the node is quarantined: its containerd may still hold the old credential',
    ]);
    expect(hostsToRoll(verified, keys, { hosts, revision: 'r2' })[0].why).toBe(
      'ghcr.io: verified after the listing selected the node: proven again',
    );
  });
});

describe('markerWrite', () => {
  const node = (annotations: Record<string, string>) => ({ metadata: { name: 'w1', uid: 'u', annotations }, spec: {} });

  it('keeps every other host entry and records the image for the host it proves', () => {
    const before = { [keys.verified]: map({ 'mirror.local:5000': { revision: 'm1', at: '2026-12-01T00:00:00.000Z' } }) };
    const w = markerWrite(before, keys, { ...GHCR, verifyImage: 'ghcr.io/org/probe:1' }, AT, 'verify-image');
    expect(w.ops).toEqual([
      { op: 'test', path: '/metadata/annotations/registry-auth-rollout~1verified', value: before[keys.verified] },
      { op: 'add', path: '/metadata/annotations/registry-auth-rollout~1verified', value: w.value },
    ]);
    expect(JSON.parse(w.value)).toEqual({
      'ghcr.io': { revision: 'r2', image: 'ghcr.io/org/probe:1', at: AT, proof: 'verify-image' },
      'mirror.local:5000': { revision: 'm1', at: '2026-12-01T00:00:00.000Z' },
    });
    const after = applyJsonPatch(node(before), w.ops) as { metadata: { annotations: Record<string, string> } };
    // what a re-read after a lost answer accepts as the marker written (src/rules/lostWrite.ts)
    expect(judgeLostWrite(w.ops, after).kind).toBe('applied');
  });

  it('another step entry landing after the read fails the test: nothing of it is lost', () => {
    const before = { [keys.verified]: map({ 'mirror.local:5000': { revision: 'm1', at: AT } }) };
    const w = markerWrite(before, keys, GHCR, AT, 'evidence');
    const moved = { [keys.verified]: map({ 'mirror.local:5000': { revision: 'm2', at: AT } }) };
    expect(() => applyJsonPatch(node(moved), w.ops)).toThrow(PatchRejected);
    // rebuilt over the new read, it keeps the other step's entry
    expect(JSON.parse(markerWrite(moved, keys, GHCR, AT, 'evidence').value)['mirror.local:5000'].revision).toBe('m2');
  });

  it('absent: an add alone (the claim excludes other writers); the old single-key marker removed behind a test', () => {
    const w = markerWrite(
      { [keys.verifiedRevision]: 'r1' },
      keys,
      { hosts: ['registry.local:5000', 'ghcr.io'], revision: 'r2' },
      AT,
      'evidence',
    );
    expect(w.ops).toEqual([
      { op: 'add', path: '/metadata/annotations/registry-auth-rollout~1verified', value: w.value },
      { op: 'test', path: '/metadata/annotations/registry-auth-rollout~1verified-revision', value: 'r1' },
      { op: 'remove', path: '/metadata/annotations/registry-auth-rollout~1verified-revision' },
    ]);
    // sorted by host, each host's own entry
    expect(w.value).toBe(
      `{"ghcr.io":{"revision":"r2","at":"${AT}","proof":"evidence"},"registry.local:5000":{"revision":"r2","at":"${AT}","proof":"evidence"}}`,
    );
    const after = applyJsonPatch(node({ [keys.verifiedRevision]: 'r1' }), w.ops) as { metadata: { annotations: Record<string, string> } };
    expect(after.metadata.annotations).toEqual({ [keys.verified]: w.value });
    // the old single-key marker still there: the write (which removes it) did not land
    expect(judgeLostWrite(w.ops, { metadata: { annotations: { [keys.verified]: w.value, [keys.verifiedRevision]: 'r1' } } }).kind).not.toBe(
      'applied',
    );
  });

  it('an unreadable marker is replaced (it proved no host), behind a test of its text', () => {
    const w = markerWrite({ [keys.verified]: 'garbage' }, keys, GHCR, AT, 'evidence');
    expect(w.ops[0]).toEqual({ op: 'test', path: '/metadata/annotations/registry-auth-rollout~1verified', value: 'garbage' });
    expect(JSON.parse(w.value)).toEqual({ 'ghcr.io': { revision: 'r2', at: AT, proof: 'evidence' } });
  });

  it('records how each host was proven, and an undecided proof as such', () => {
    const w = markerWrite({}, keys, GHCR, AT, 'undecided');
    expect(JSON.parse(w.value)).toEqual({ 'ghcr.io': { revision: 'r2', at: AT, proof: 'undecided' } });
    expect(hostsToProve({ [keys.verified]: w.value }, keys, GHCR)).toEqual([
      { host: 'ghcr.io', why: 'ghcr.io: its post-reboot proof was undecided when it was released (released with a warning)' },
    ]);
    // proving it later rewrites the entry, still behind a test of the text it read
    const proven = markerWrite({ [keys.verified]: w.value }, keys, GHCR, AT, 'evidence');
    expect(proven.ops[0]).toEqual({ op: 'test', path: '/metadata/annotations/registry-auth-rollout~1verified', value: w.value });
    expect(hostsToProve({ [keys.verified]: proven.value }, keys, GHCR)).toEqual([]);
  });
});

describe('how a host was proven: to roll or to prove', () => {
  const entry = (e: Record<string, unknown>) => ({ [keys.verified]: JSON.stringify({ 'ghcr.io': { revision: 'r2', at: AT, ...e } }) });

  it('reads `proof`; an entry without it is not proven (the safest reading), unless it records an image (only a pull that worked wrote one)', () => {
    expect(readMarkers(entry({ proof: 'evidence' }), keys).byHost['ghcr.io'].proof).toBe('evidence');
    expect(readMarkers(entry({ proof: 'undecided' }), keys).byHost['ghcr.io'].proof).toBe('undecided');
    expect(readMarkers(entry({}), keys).byHost['ghcr.io'].proof).toBeUndefined();
    expect(readMarkers(entry({ image: 'ghcr.io/org/probe:1' }), keys).byHost['ghcr.io'].proof).toBe('verify-image');
    // a value this version does not know proves nothing, an image beside it notwithstanding
    expect(readMarkers(entry({ proof: 'hunch', image: 'ghcr.io/org/probe:1' }), keys).byHost['ghcr.io'].proof).toBeUndefined();
  });

  it('to prove: an entry at the revision that proves nothing yet; a stale entry is to roll, not to prove', () => {
    expect(hostsToProve(entry({ proof: 'evidence' }), keys, GHCR)).toEqual([]);
    expect(hostsToProve(entry({ proof: 'verify-image', image: 'x' }), keys, GHCR)).toEqual([]);
    expect(hostsToProve(entry({}), keys, GHCR)).toEqual([
      { host: 'ghcr.io', why: 'ghcr.io: its verified marker does not record how it was proven (written before the marker said so)' },
    ]);
    expect(hostsToProve(entry({ proof: 'undecided' }), keys, { hosts: ['ghcr.io'], revision: 'r3' })).toEqual([]);
    expect(staleHosts(entry({ proof: 'undecided' }), keys, { hosts: ['ghcr.io'], revision: 'r3' })).toHaveLength(1);
    // the old single-key marker does not say how either
    expect(hostsToProve({ [keys.verifiedRevision]: 'r2' }, keys, GHCR)).toEqual([
      { host: 'ghcr.io', why: 'ghcr.io: verified by the old single-key marker, which does not record how it was proven' },
    ]);
    expect(unprovenWhy({ revision: 'r2', proof: 'evidence' }, 'ghcr.io')).toBeUndefined();
  });

  it('a release writes how the proof was reached: the evidence, a pull that settled an undecided proof, or undecided', () => {
    expect(proofHowOf(undefined)).toBe('evidence');
    expect(proofHowOf({ settledBy: 'verify-image' })).toBe('verify-image');
    expect(proofHowOf({ settledBy: 'warning' })).toBe('undecided');
  });

  it('a node to prove is proven by a pull when verify-image proves a host of the run, else by the evidence', () => {
    expect(proveBy({ hosts: ['ghcr.io'] })).toBe('evidence');
    expect(proveBy({ hosts: ['ghcr.io'], verifyImage: 'ghcr.io/org/probe:1' })).toBe('verify-image');
    expect(proveBy({ hosts: ['ghcr.io', 'docker.io'], verifyImage: 'quay.io/org/probe:1' })).toBe('evidence');
  });
});
