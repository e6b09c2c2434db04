// The rows of src/rules/evidence/credential.ts, judged through the verdict (src/rules/evidence.ts).
import { describe, expect, it } from 'vitest';
import { rebootEvidence } from '../../../src/rules/evidence.js';
import { apiNode, base, cliNode, CRI, expectRows, ghcr, NEW, OLD, type Row, W, withPart } from './fixtures.js';

const MIRROR = 'mirror.local:5000';
const mirror = { host: MIRROR, tomlHost: MIRROR, fields: NEW };
/** the reading of `base` whose cri.toml also carries the mirror's entry as given */
function withMirror(fields: typeof NEW) {
  const r = apiNode(base);
  if (r.files[0].content?.ok) r.files[0].content.value.auth[MIRROR] = { ...fields };
  return r;
}

const rows: Row[] = [
  {
    name: 'an old credential contradicts, whatever the order says',
    build: () => apiNode(base),
    desired: [{ ...ghcr, fields: { ...NEW, password: 'newer' } }],
    verdict: 'reboot',
    ordering: 'after',
    contradicts: true,
    reason: `${CRI} holds an old credential for ghcr.io`,
  },
  {
    name: 'no entry for the host contradicts (a part file agreeing is not enough)',
    build: () => {
      const r = cliNode({ ...base, L: W + 5000 });
      withPart(r, W);
      return r;
    },
    desired: [{ host: 'docker.io', tomlHost: 'registry-1.docker.io', fields: NEW }],
    verdict: 'reboot',
    ordering: 'after',
    contradicts: true,
    reason: `${CRI} has no auth entry for registry-1.docker.io`,
  },
  {
    name: 'a file that could not be read is unproven, not contradicted',
    build: () => apiNode(base),
    mutate: (r) => (r.files[0].content = { ok: false, error: 'PermissionDenied' }),
    verdict: 'reboot',
    ordering: 'after',
    contradicts: false,
    reason: `reading ${CRI} failed: PermissionDenied`,
  },
  {
    name: 'several hosts: an old credential for any one contradicts (a node stale for two hosts skips only when both hold)',
    build: () => withMirror(OLD),
    desired: [ghcr, mirror],
    verdict: 'reboot',
    ordering: 'after',
    contradicts: true,
    reason: `${CRI} holds an old credential for ${MIRROR}`,
  },
  {
    name: 'several hosts: a host the roll is not for is not judged (the node is verified for it)',
    build: () => withMirror(OLD),
    desired: [ghcr],
    verdict: 'skip',
    ordering: 'after',
    contradicts: false,
    reason: /^containerd PID 1893 started .* for ghcr\.io$/,
  },
];

describe('rebootEvidence: the credential the config carries (rule 4), one condition per row', () => {
  expectRows(rows);
});

describe('rebootEvidence: several hosts', () => {
  it('skips when the config carries every host the roll is for, and names them all', () => {
    const v = rebootEvidence(withMirror(NEW), [ghcr, mirror], { marginMs: 0 });
    expect(v.verdict).toBe('skip');
    expect(v.reason).toMatch(/carries the desired credential for ghcr\.io, mirror\.local:5000$/);
    expect(v.values.files[0]).toMatchObject({ credential: 'desired', byHost: { 'ghcr.io': 'desired', [MIRROR]: 'desired' } });
  });

  it("records each host's state per file and the worst of them as the file's", () => {
    const v = rebootEvidence(withMirror(OLD), [ghcr, mirror], { marginMs: 0 });
    expect(v.values.files[0]).toMatchObject({ credential: 'old', byHost: { 'ghcr.io': 'desired', [MIRROR]: 'old' } });
    const absent = rebootEvidence(apiNode(base), [ghcr, mirror], { marginMs: 0 });
    expect(absent.values.files[0]).toMatchObject({ credential: 'absent', byHost: { 'ghcr.io': 'desired', [MIRROR]: 'absent' } });
    expect(absent.reason).toBe(`${CRI} has no auth entry for ${MIRROR}`);
    // one host: no per-host map, as before
    expect(rebootEvidence(apiNode(base), [ghcr], { marginMs: 0 }).values.files[0].byHost).toBeUndefined();
  });
});
