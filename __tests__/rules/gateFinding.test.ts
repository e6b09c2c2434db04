// The description rule of a gate's value (src/rules/gateFinding.ts): what a CEL expression made of one
// object becomes a typed finding. Each case runs the real library (src/core/cel.ts) over an object
// whose fields hold a secret-looking value, and checks that the finding has the type or the classified
// cause and never the value: the error messages of @bufbuild/cel quote values, so they are dropped.
import { describe, expect, it } from 'vitest';
import { compileCel } from '../../src/core/cel.js';
import { CEL_ERROR_CAUSES, type GateFinding } from '../../src/core/model/gates.js';
import { celErrorFinding, celFinding } from '../../src/rules/gateFinding.js';

const SECRET = 'hX7qT2vN9wLp4Rz';
const object = {
  metadata: { name: 'pg', labels: { app: 'pg' } },
  spec: { replicas: 3, ratio: 0.5 },
  status: {
    dsn: `postgres://app:${SECRET}@pg/app`,
    token: SECRET,
    keyName: SECRET,
    conditions: [{ type: 'Ready', status: 'True' }],
    nothing: null,
    ready: true,
  },
};

/** The expression run over the object, described. */
const found = (expression: string): GateFinding | undefined => celFinding(compileCel(expression)(object), expression);

describe('a CEL result is described by its type', () => {
  it('the boolean true satisfies the gate; false is said as the boolean', () => {
    expect(found('self.status.ready')).toBeUndefined();
    expect(found('!self.status.ready')).toEqual({ type: 'boolean', value: false });
  });

  it('a number is said with its value (int, uint, double); one that is not finite without it', () => {
    expect(found('self.spec.replicas')).toEqual({ type: 'number', value: 3 });
    expect(found('size(self.status.conditions)')).toEqual({ type: 'number', value: 1 });
    expect(found('uint(7)')).toEqual({ type: 'number', value: 7 });
    expect(found('self.spec.ratio')).toEqual({ type: 'number', value: 0.5 });
    expect(found('double(self.status.token)')).toEqual({ type: 'number' });
  });

  it('any other result by its type alone: string, bytes, map, list, null, type, timestamp, duration', () => {
    const cases: Array<[string, GateFinding['type']]> = [
      ['self.status.dsn', 'string'],
      ['bytes(self.status.token)', 'bytes'],
      ['self.status', 'map'],
      ['self.status.conditions', 'list'],
      ['self.status.nothing', 'null'],
      ['type(self)', 'type'],
      ['timestamp("2026-11-30T12:00:00Z")', 'timestamp'],
      ['duration("90s")', 'duration'],
    ];
    for (const [expression, type] of cases) expect(found(expression), expression).toEqual({ type });
  });
});

describe('a CEL error is classified, its message dropped', () => {
  it("a missing field names the field when the expression spells it, never when the object's data chose the key", () => {
    expect(found('self.status.phase == "Ready"')).toEqual({ type: 'error', cause: 'missing-field', field: 'phase' });
    expect(found('self.metadata.labels["tier"] == "db"')).toEqual({ type: 'error', cause: 'missing-field', field: 'tier' });
    // the key is the value of a field: `field not found: <the secret>`
    expect(found('self.metadata.labels[self.status.keyName] == "x"')).toEqual({ type: 'error', cause: 'missing-field' });
    // a name the expression holds only inside a longer word is not spelt by it
    expect(celErrorFinding('field not found: tier', 'self.status.tiers == 1')).toEqual({ type: 'error', cause: 'missing-field' });
  });

  it('no matching overload: the operator and the type names the library prints', () => {
    expect(found('self.status.dsn > 1')).toEqual({ type: 'error', cause: 'no-overload', operator: '_>_', types: ['string', 'int'] });
    expect(found('self.spec.replicas + 1')).toEqual({ type: 'error', cause: 'no-overload', operator: '_+_', types: ['double', 'int'] });
    expect(found('self.status.dsn.startsWith(1)')).toEqual({
      type: 'error',
      cause: 'no-overload',
      operator: 'startsWith',
      types: ['string', 'int'],
    });
  });

  it('a type mismatch: the type expected and the type found', () => {
    expect(found('self.status.ready && self.status.dsn')).toEqual({ type: 'error', cause: 'type-mismatch', types: ['bool', 'string'] });
  });

  it('conversions, ranges, divisions, regular expressions and duplicate keys, whose messages quote values', () => {
    const cases: Array<[string, GateFinding]> = [
      ['bool(self.status.token)', { type: 'error', cause: 'conversion' }],
      ['int(self.status.token) > 0', { type: 'error', cause: 'conversion' }],
      ['timestamp(self.status.token) > timestamp("2026-01-01T00:00:00Z")', { type: 'error', cause: 'conversion' }],
      ['duration(self.status.token) > duration("1s")', { type: 'error', cause: 'conversion' }],
      ['self.status.conditions[5].type == "Ready"', { type: 'error', cause: 'index-out-of-range' }],
      ['1 / 0 == 1', { type: 'error', cause: 'division-by-zero' }],
      ['5 % 0 == 1', { type: 'error', cause: 'division-by-zero' }],
      ['9223372036854775807 + 1 > 0', { type: 'error', cause: 'overflow' }],
      [`self.status.dsn.matches("[${SECRET}")`, { type: 'error', cause: 'regex' }],
      ['size({self.status.token: 1, self.status.token: 2}) == 1', { type: 'error', cause: 'duplicate-key' }],
    ];
    for (const [expression, finding] of cases) {
      const f = found(expression);
      expect(f, expression).toEqual(finding);
      expect(JSON.stringify(f)).not.toContain(SECRET);
    }
  });

  it('a message of no known form is "other", and nothing of it is kept', () => {
    expect(celErrorFinding(`something new: ${SECRET}`, 'self.status.token')).toEqual({ type: 'error', cause: 'other' });
    expect(celErrorFinding('unsupported key type', 'x')).toEqual({ type: 'error', cause: 'other' });
  });

  it('a part of a known message that is not a type name or an operator is dropped, the cause kept', () => {
    expect(celErrorFinding(`found no matching overload for '_>_' applied to '(${SECRET} x, int)'`, '')).toEqual({
      type: 'error',
      cause: 'no-overload',
      operator: '_>_',
    });
    expect(celErrorFinding(`found no matching overload for '${SECRET} !' applied to '(string)'`, '')).toEqual({
      type: 'error',
      cause: 'no-overload',
      types: ['string'],
    });
    expect(celErrorFinding(`type mismatch: expected bool, got ${SECRET}:x`, '')).toEqual({ type: 'error', cause: 'type-mismatch' });
    expect(celErrorFinding(`field not found: ${SECRET}`, 'self.a.b')).toEqual({ type: 'error', cause: 'missing-field' });
  });

  it('every cause is one of the declared list', () => {
    const causes = [
      'field not found: a',
      "found no matching overload for '_>_' applied to '(string, int)'",
      'type mismatch: expected bool, got string',
      'Unable to convert string',
      'index 5 out of bounds [0, 1)',
      'int divide by zero',
      'int overflow during addition',
      'error parsing regexp: missing closing ]',
      'map key conflict: a',
      'anything',
    ].map((m) => (celErrorFinding(m, 'a') as { cause: string }).cause);
    expect(new Set(causes)).toEqual(new Set(CEL_ERROR_CAUSES));
  });
});
