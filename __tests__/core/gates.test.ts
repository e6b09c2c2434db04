// The health gates' inputs (src/core/gates.ts through readConfig): defaults, each refusal naming the input.
import { describe, expect, it } from 'vitest';
import { readConfig } from '../../src/core/config.js';
import { checkGateExpressions } from '../../src/core/gates.js';

const read = (inputs: Record<string, string>) => readConfig((n) => ({ 'auth-patch': '/tmp/p.yaml', revision: 'r1', ...inputs })[n] ?? '');
const refused = (inputs: Record<string, string>) => {
  try {
    read(inputs);
  } catch (e) {
    return e as Error & { input?: string };
  }
  throw new Error('accepted');
};

describe('health-gates, storage-gate, gate-timeout', () => {
  it('defaults: the storage gate on, no user gate, 15 minutes', () => {
    expect(read({})).toMatchObject({ storageGate: true, healthGates: [], gateTimeoutMs: 900_000 });
    expect(read({ 'storage-gate': 'false', 'gate-timeout': '90s' })).toMatchObject({ storageGate: false, gateTimeoutMs: 90_000 });
  });
  it('a list of gates, each field kept', () => {
    const c = read({
      'health-gates': `
- name: pg
  kind: Cluster
  group: postgresql.cnpg.io
  version: v1
  namespace: db
  selector: app=pg
  expression: self.status.readyInstances == self.spec.instances
- name: nodes-ready
  kind: Node
  group: ""
  expression: "self.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')"
`,
    });
    expect(c.healthGates).toEqual([
      {
        name: 'pg',
        kind: 'Cluster',
        group: 'postgresql.cnpg.io',
        version: 'v1',
        namespace: 'db',
        selector: 'app=pg',
        expression: 'self.status.readyInstances == self.spec.instances',
      },
      {
        name: 'nodes-ready',
        kind: 'Node',
        group: '',
        expression: "self.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')",
      },
    ]);
  });
  it('a malformed expression names the input, the gate and the compiler message', async () => {
    const { healthGates } = read({ 'health-gates': '- {name: pg, kind: Cluster, group: x.io, expression: "self.status.ready =="}' });
    const e = (await checkGateExpressions(healthGates).catch((x: Error) => x)) as Error;
    expect(e).toMatchObject({ name: 'InputError', input: 'health-gates' });
    expect(e.message).toMatch(/^input "health-gates": gate "pg": expression does not compile: .*expecting/);
    await expect(
      checkGateExpressions(read({ 'health-gates': '- {name: ok, kind: Pod, group: "", expression: "has(self.status)"}' }).healthGates),
    ).resolves.toBeUndefined();
  });
  it.each([
    ['not YAML', '- [', /is not YAML/],
    ['not a list', 'name: x', /must be a YAML list/],
    ['no kind', '- {name: a, group: "", expression: "true"}', /gate 1 has no "kind"/],
    ['no group', '- {name: a, kind: Pod, expression: "true"}', /gate 1 has no "group"/],
    ['an unknown field', '- {name: a, kind: Pod, group: "", expression: "true", labelSelector: x}', /unknown field "labelSelector"/],
    [
      'a bad selector',
      '- {name: a, kind: Pod, group: "", selector: "a in (", expression: "true"}',
      /selector "a in \(" is not a label selector/,
    ],
    ['a lower-case kind', '- {name: a, kind: pods, group: "", expression: "true"}', /kind "pods" is not a Kind/],
    ['a built-in name', '- {name: storage/x, kind: Pod, group: "", expression: "true"}', /must be non-empty and not start with storage\//],
    [
      'two gates of one name',
      '- {name: a, kind: Pod, group: "", expression: "true"}\n- {name: a, kind: Pod, group: "", expression: "true"}',
      /two gates are named "a"/,
    ],
  ])('%s is refused, naming health-gates', (_what, text, message) => {
    const e = refused({ 'health-gates': text });
    expect(e).toMatchObject({ name: 'InputError', input: 'health-gates' });
    expect(e.message).toMatch(message);
  });
  it('a bad timeout or storage-gate names its input', () => {
    expect(refused({ 'gate-timeout': 'soon' })).toMatchObject({ input: 'gate-timeout' });
    expect(refused({ 'gate-timeout': '0s' })).toMatchObject({ input: 'gate-timeout' });
    expect(refused({ 'storage-gate': 'yes' })).toMatchObject({ input: 'storage-gate' });
  });
});
