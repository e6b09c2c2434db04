// The shell's input reader: every input through readConfig, the auth-patch file read here, and the
// runner's environment (GITHUB_SERVER_URL, GITHUB_API_URL, the test knobs) read here and nowhere else.
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readInputSecrets, readInputs } from '../../src/action/inputs.js';
import { scratchDir } from '../scratch.js';

function patchFile(): string {
  const f = join(scratchDir('rar-inputs-'), 'patch.yaml');
  writeFileSync(f, 'apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\nusername: bot\npassword: s3cret-inputs\n');
  chmodSync(f, 0o600);
  return f;
}

const env = { GITHUB_REPOSITORY: 'acme/infra', GITHUB_RUN_ID: '40', GITHUB_RUN_ATTEMPT: '2' };

describe('readInputs', () => {
  const get = (patch: string) => (name: string) => ({ 'auth-patch': patch, revision: 'r1' })[name] ?? '';

  it("takes the runner's GitHub server and API from GITHUB_SERVER_URL and GITHUB_API_URL", () => {
    const secrets: string[] = [];
    const inputs = readInputs(
      get(patchFile()),
      { ...env, GITHUB_SERVER_URL: 'https://github.corp', GITHUB_API_URL: 'https://api.corp' },
      (s) => secrets.push(s),
    );
    expect(inputs.github).toEqual({ serverUrl: 'https://github.corp', apiUrl: 'https://api.corp' });
    expect(secrets).toContain('s3cret-inputs');
  });

  it("defaults to github.com's when the runner sets neither", () => {
    const inputs = readInputs(get(patchFile()), env, () => undefined);
    expect(inputs.github).toEqual({ serverUrl: 'https://github.com', apiUrl: undefined });
  });

  it('a missing auth-patch file is an input error naming the input', () => {
    expect(() => readInputs(get('/nonexistent/patch.yaml'), env, () => undefined)).toThrow(/input "auth-patch": cannot read/);
  });

  it('alertmanager-token is registered as it is read, before any input is refused, in the main and the post step', () => {
    const inputs = (patch: string, over: Record<string, string>) => (name: string) =>
      ({ 'auth-patch': patch, revision: 'r1', 'alertmanager-token': ' am-t0k ', ...over })[name] ?? '';
    const main: string[] = [];
    // plain http with a token: refused, naming the input and never the token, which is masked already
    expect(() => readInputs(inputs(patchFile(), { 'alertmanager-url': 'http://am:9093' }), env, (s) => main.push(s))).toThrow(
      /input "alertmanager-url": is plain http, and alertmanager-token is set/,
    );
    expect(main).toEqual(['am-t0k']);
    const post: string[] = [];
    readInputSecrets(inputs(patchFile(), { mode: 'nonsense' }), (s) => post.push(s));
    expect(post).toEqual(['am-t0k']);
  });
});
