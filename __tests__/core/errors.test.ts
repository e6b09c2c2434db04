// The typed errors' helpers (src/core/errors.ts): which failure of a guarded write means "the CAS was lost",
// and which means its outcome is unknown (it may have landed).
import { describe, expect, it } from 'vitest';
import { casLost, outcomeUnknown, ToolError, type FailureCause } from '../../src/core/errors.js';

describe('casLost', () => {
  const err = (kind: FailureCause) => new ToolError({ tool: 'kubectl', command: 'kubectl patch', kind, exitCode: 1, stderr: '' });
  it('is a refused test op (422) or a gone object (404), nothing else', () => {
    expect(casLost(err('invalid'))).toBe(true);
    expect(casLost(err('not-found'))).toBe(true);
    for (const k of ['conflict', 'forbidden', 'transport', 'timeout', 'server', 'unknown'] as const) expect(casLost(err(k))).toBe(false);
    expect(casLost(new Error('invalid'))).toBe(false);
  });
});

describe('outcomeUnknown: a failed write that may have landed', () => {
  const e = (kind: FailureCause) => new ToolError({ tool: 'kubectl', command: 'kubectl patch', kind, exitCode: 1, stderr: '' });
  it.each(['transport', 'timeout', 'cancelled', 'server', 'unparseable', 'unknown'] as const)('%s: unknown', (k) =>
    expect(outcomeUnknown(e(k))).toBe(true),
  );
  it.each(['invalid', 'conflict', 'not-found', 'forbidden', 'too-many-requests', 'usage'] as const)('%s: refused, not sent', (k) =>
    expect(outcomeUnknown(e(k))).toBe(false),
  );
});
