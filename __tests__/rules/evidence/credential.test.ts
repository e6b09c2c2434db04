// The rows of src/rules/evidence/credential.ts, judged through the verdict (src/rules/evidence.ts).
import { describe } from 'vitest';
import { apiNode, base, cliNode, CRI, expectRows, ghcr, NEW, type Row, W, withPart } from './fixtures.js';

const rows: Row[] = [
  {
    name: 'an old credential contradicts, whatever the order says',
    build: () => apiNode(base),
    desired: { ...ghcr, fields: { ...NEW, password: 'newer' } },
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
    desired: { host: 'docker.io', tomlHost: 'registry-1.docker.io', fields: NEW },
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
];

describe('rebootEvidence: the credential the config carries (rule 4), one condition per row', () => {
  expectRows(rows);
});
