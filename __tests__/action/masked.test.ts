// The masking port: every text the action writes to the runner — log lines, log group titles,
// annotations and their titles, step outputs, the job summary, failure messages — is masked on its
// way out; the saved state, which the runner never shows and the post step parses, and what the
// action reads (inputs, saved state) pass as they are.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readInputSecrets } from '../../src/action/inputs.js';
import { MaskedCore, type CorePort } from '../../src/action/masked.js';
import { postStep } from '../../src/action/post.js';
import { secretForms } from '../../src/core/redact.js';

type Call = [string, ...unknown[]];

function recorder(inputs: Record<string, string> = {}, state: Record<string, string> = {}) {
  const calls: Call[] = [];
  const port: CorePort = {
    getInput: (n) => inputs[n] ?? '',
    getState: (n) => state[n] ?? '',
    setSecret: (s) => calls.push(['setSecret', s]),
    info: (m) => calls.push(['info', m]),
    notice: (m, p) => calls.push(['notice', m, p]),
    warning: (m, p) => calls.push(['warning', m, p]),
    error: (m, p) => calls.push(['error', m, p]),
    startGroup: (t) => calls.push(['startGroup', t]),
    endGroup: () => calls.push(['endGroup']),
    setOutput: (n, v) => calls.push(['setOutput', n, v]),
    setFailed: (m) => calls.push(['setFailed', m]),
    saveState: (n, v) => calls.push(['saveState', n, v]),
    summary: { addRaw: (t) => ({ write: async () => calls.push(['summary', t]) }) },
  };
  return { port, calls };
}

const SECRET = 'tok"en\\with-quote';

describe('MaskedCore', () => {
  it('masks every sink: log, groups, annotations and their titles, outputs, summary, failure; the saved state passes as it is', async () => {
    const rec = recorder();
    const core = new MaskedCore(rec.port);
    core.addSecret(SECRET);
    const t = `a ${SECRET} b`;
    core.info(t);
    core.startGroup(t);
    core.endGroup();
    core.notice(t, { title: t });
    core.warning(t, { title: t });
    core.warning(t);
    core.error(t, { title: t });
    core.setOutput('decisions', JSON.stringify([{ reason: t }]));
    core.saveState('held', JSON.stringify({ reason: t }));
    core.setFailed(t);
    await core.summary.addRaw(`<td>${t}</td>`).write();
    const written = rec.calls.filter((c) => c[0] !== 'setSecret' && c[0] !== 'saveState');
    expect(written).toHaveLength(10);
    // the value itself, and its spelling inside a JSON string (the outputs are JSON)
    expect(JSON.stringify(written)).not.toContain('with-quote');
    expect(rec.calls).toContainEqual(['setOutput', 'decisions', '[{"reason":"a *** b"}]']);
    // never shown, parsed by the post step: a masked byte there would be a wrong reading (state.test.ts)
    expect(rec.calls).toContainEqual(['saveState', 'held', JSON.stringify({ reason: t })]);
    expect(rec.calls).toContainEqual(['notice', 'a *** b', { title: 'a *** b' }]);
    expect(rec.calls).toContainEqual(['warning', 'a *** b', undefined]);
    expect(rec.calls).toContainEqual(['summary', '<td>a *** b</td>']);
  });

  it("registers each secret with the runner's own log masking too (core.setSecret), once, and never an empty one", () => {
    const rec = recorder();
    const core = new MaskedCore(rec.port);
    core.addSecret(SECRET);
    core.addSecret(SECRET);
    core.addSecret('');
    expect(rec.calls).toEqual([['setSecret', SECRET]]);
  });

  it('what the action reads passes as it is: inputs and saved state are never masked', () => {
    const rec = recorder({ nodes: `w1 ${SECRET}` }, { held: `[${SECRET}]` });
    const core = new MaskedCore(rec.port);
    core.addSecret(SECRET);
    expect(core.getInput('nodes')).toBe(`w1 ${SECRET}`);
    expect(core.getState('held')).toBe(`[${SECRET}]`);
  });

  it('a secret registered later masks every later text, not what was already written', () => {
    const rec = recorder();
    const core = new MaskedCore(rec.port);
    core.info('hunter2 early');
    core.addSecret('hunter2');
    core.info('hunter2 late');
    expect(rec.calls.filter((c) => c[0] === 'info')).toEqual([
      ['info', 'hunter2 early'],
      ['info', '*** late'],
    ]);
  });
});

describe('readInputSecrets: the post step knows the secrets of the inputs again', () => {
  const dir = mkdtempSync(join(tmpdir(), 'masked-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const patch = join(dir, 'auth.yaml');
  writeFileSync(patch, 'apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\nusername: acme\npassword: ghp_p0stStep\n');
  const inputs =
    (over: Record<string, string> = {}) =>
    (n: string) =>
      ({ 'auth-patch': patch, revision: 'r1', 'github-token': 'ghs_t0ken', ...over })[n] ?? '';

  it('the GitHub token and every form of the auth patch credential, as the main step registered them', () => {
    const got: string[] = [];
    readInputSecrets(inputs(), (s) => got.push(s));
    expect(got).toContain('ghs_t0ken');
    expect(got).toEqual(expect.arrayContaining(secretForms([{ username: 'acme', password: 'ghp_p0stStep', auth: '', identitytoken: '' }])));
    expect(got).not.toContain('acme');
  });

  it('a patch file a later step removed, or inputs the main step refused: nothing more, and no failure', () => {
    const got: string[] = [];
    readInputSecrets(inputs({ 'auth-patch': join(dir, 'gone.yaml') }), (s) => got.push(s));
    expect(got).toEqual(['ghs_t0ken']);
    const none: string[] = [];
    readInputSecrets(
      () => '',
      (s) => none.push(s),
    );
    expect(none).toEqual([]);
  });
});

describe('the post step writes through the masking port, with the secrets of the inputs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'masked-post-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a saved entry it cannot read is quoted in its error, every form of the credential masked', async () => {
    const patch = join(dir, 'auth.yaml');
    writeFileSync(patch, 'apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\nusername: acme\npassword: ghp_p0stStep\n');
    // not a held node: the post step names the entry (src/action/state.ts loadHeld) and does nothing for it
    const held = JSON.stringify([{ node: 'w1', note: 'ghp_p0stStep', auth: Buffer.from('acme:ghp_p0stStep').toString('base64') }]);
    const rec = recorder({ 'auth-patch': patch, revision: 'r1' }, { held });
    await postStep(new MaskedCore(rec.port));
    const written = rec.calls.filter((c) => c[0] !== 'setSecret');
    expect(written.map((c) => c[0])).toEqual(['error', 'setFailed']);
    expect(written[0][1]).toContain('has an entry that is not a held node: {"node":"w1","note":"***","auth":"***"}');
    expect(JSON.stringify(written)).not.toMatch(/ghp_p0stStep|YWNtZTpnaHBfcDBzdFN0ZXA/);
    expect(rec.calls).toContainEqual(['setSecret', 'ghp_p0stStep']);
  });
});
