import { describe, expect, it } from 'vitest';
import type { EvidenceVerdict } from '../../src/core/model.js';
import { criStillComingUp, judgeProof } from '../../src/rules/proof.js';

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
  ])('%s is a failed proof', (_what, change) => {
    const v = undecidable();
    change(v);
    expect(judgeProof(v)).toEqual({ kind: 'failed' });
  });
});

describe('criStillComingUp: is a post-reboot reading worth reading again before it is judged', () => {
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
    expect(criStillComingUp(reading(state, health))).toBe(expected);
  });
  it('a skip is never waited on', () => {
    expect(criStillComingUp(reading('Running', 'OK', { verdict: 'skip' }))).toBe(false);
  });
  it('a reading that contradicts on other grounds is still read again while cri comes up (the final reading judges it)', () => {
    const v = reading('Running', '?', { contradicts: true });
    v.values.files[0].credential = 'old';
    expect(criStillComingUp(v)).toBe(true);
  });
});
