import { describe, expect, it } from 'vitest';
import type { EvidenceVerdict } from '../../src/model.js';
import { judgeProof } from '../../src/rules/proof.js';

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
