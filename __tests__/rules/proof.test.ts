import { describe, expect, it } from 'vitest';
import type { EvidenceVerdict } from '../../src/core/model/verdict.js';
import { judgeProof, readAgainBecause } from '../../src/rules/proof.js';

const undecidable = (): EvidenceVerdict => ({
  verdict: 'reboot',
  reason: 'containerd (PID 7) started +0.5 s ± 1.5 s (read via cli) after the last write of /etc/cri/conf.d/cri.toml: …',
  ordering: 'undecidable',
  contradicts: false,
  values: {
    marginMs: 10,
    criState: 'Running',
    criHealth: 'OK',
    files: [
      { path: '/etc/cri/conf.d/cri.toml', exists: true, credential: 'desired' },
      { path: '/etc/cri/conf.d/01-registries.part', exists: false },
    ],
  },
});

describe('judgeProof', () => {
  it('a skip verdict is proven', () => {
    expect(judgeProof({ ...undecidable(), verdict: 'skip', ordering: 'after' })).toEqual({ kind: 'proven' });
  });
  it('an undecidable ordering with cri healthy and every existing file desired is undecided, with the reason', () => {
    expect(judgeProof(undecidable())).toEqual({ kind: 'undecided', unproven: undecidable().reason });
  });
  it.each<[string, (v: EvidenceVerdict) => void]>([
    ['a contradiction', (v) => (v.contradicts = true)],
    ['contradicts not stated', (v) => delete v.contradicts],
    ['an ordering before', (v) => (v.ordering = 'before')],
    ['an instant not read', (v) => (v.ordering = 'unknown')],
    ['cri unhealthy', (v) => (v.values.criHealth = 'Failed')],
    ['cri not Running', (v) => (v.values.criState = 'Waiting')],
    ['a file whose credential is unknown', (v) => (v.values.files[0].credential = 'unknown')],
    ['no existing file', (v) => (v.values.files[0].exists = false)],
    // judged only at the deadline: a reading that lacked something proves nothing, not even "undecided"
    ['an incomplete reading (the time status not read)', (v) => (v.incomplete = 'the node time status could not be read: Unavailable')],
  ])('%s is a failed proof', (_what, change) => {
    const v = undecidable();
    change(v);
    expect(judgeProof(v)).toEqual({ kind: 'failed' });
  });
});

describe('readAgainBecause: is a post-reboot reading worth reading again before it is judged', () => {
  const reading = (criState: string | undefined, criHealth: string | undefined, over: Partial<EvidenceVerdict> = {}): EvidenceVerdict => {
    const v = { ...undecidable(), ordering: 'after' as const, ...over };
    v.values = { ...v.values, criState, criHealth };
    return v;
  };
  it.each<[string, string | undefined, string | undefined, boolean]>([
    ['Running, health unknown: restarted a moment ago, first check not run yet', 'Running', '?', true],
    ['Running, health failed: the next check comes 5 s later', 'Running', 'Fail', true],
    ['Starting: its run not launched yet', 'Starting', '?', true],
    ['Waiting for its conditions', 'Waiting', '?', true],
    ['Preparing (pre state, creating the runner)', 'Preparing', '?', true],
    ['Initialized', 'Initialized', '?', true],
    ['Stopping: a 1.14 restart in progress', 'Stopping', 'Fail', true],
    ['Finished: between the stop and the start of a 1.14 restart', 'Finished', 'Fail', true],
    ['Running and healthy: the reading is final', 'Running', 'OK', false],
    ['Failed: does not come up by itself', 'Failed', 'Fail', false],
    ['Skipped: does not come up by itself', 'Skipped', '?', false],
    ['the cri service could not be read (right after a reboot Talos answers before it loads cri)', undefined, undefined, true],
  ])('%s → %s', (_what, state, health, expected) => {
    expect(readAgainBecause(reading(state, health)) !== undefined).toBe(expected);
  });
  it('a skip is never waited on', () => {
    expect(readAgainBecause(reading('Running', 'OK', { verdict: 'skip' }))).toBeUndefined();
  });
  it('a reading that contradicts on other grounds is still read again while cri comes up (the final reading judges it)', () => {
    const v = reading('Running', '?', { contradicts: true });
    v.values.files[0].credential = 'old';
    expect(readAgainBecause(v)).toBe('cri is Running with health ?');
  });
  it('says why: the cri service not readable, a state on the way up', () => {
    expect(readAgainBecause(reading(undefined, undefined))).toBe('cri is not readable (Talos answers before it loads cri)');
    expect(readAgainBecause(reading('Waiting', '?'))).toBe('cri is Waiting');
  });
});

// Talos answers with the new boot id before machined has written the CRI files of
// the rebuilt /etc, so a reading can lack one even with cri up: a file listed but not read (its content
// skipped for an absence an earlier listing showed), read but not found, no EtcFileStatus yet. Such a
// reading is read again; only a complete one is judged (at the deadline an incomplete one fails).
describe('readAgainBecause: an incomplete reading is read again, even with cri up', () => {
  const incomplete = (why: string): EvidenceVerdict => ({ ...undecidable(), ordering: 'unknown', incomplete: why });
  it.each([
    '/etc/cri/conf.d/cri.toml exists but was not read, so its credential is unknown',
    '/etc/cri/conf.d/cri.toml has no EtcFileStatus reading, and its whole-second modification time cannot order the write',
    '/etc/cri/conf.d/01-registries.part was listed but not found when read',
    'none of the CRI config files exists (/etc/cri/conf.d/cri.toml, /etc/cri/conf.d/01-registries.part)',
  ])('cri Running and healthy, %s → read again', (why) => {
    expect(readAgainBecause(incomplete(why))).toBe(`the reading is incomplete (${why})`);
  });
  it('a complete reading with cri up is final, whatever it says (an old credential is judged at once)', () => {
    const v = { ...undecidable(), contradicts: true };
    v.values.files[0].credential = 'old';
    expect(readAgainBecause(v)).toBeUndefined();
  });
  it('a cri that does not come up by itself is final, however incomplete the reading', () => {
    const v = incomplete('listing /etc/cri/conf.d/cri.toml failed: Unavailable');
    v.values.criState = 'Failed';
    expect(readAgainBecause(v)).toBeUndefined();
  });
});
