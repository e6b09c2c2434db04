import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAuthPatch } from '../../src/action/inputs.js';
import { parseAuthPatch } from '../../src/core/authPatch.js';

const doc = (name: string, extra: string) => `apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ${name}\n${extra}`;

describe('parseAuthPatch', () => {
  it('reads a RegistryAuthConfig document', () => {
    const p = parseAuthPatch(doc('ghcr.io', 'username: bot\npassword: s3cret\n'), []);
    expect(p.desired).toEqual([
      {
        host: 'ghcr.io',
        tomlHost: 'ghcr.io',
        fields: { username: 'bot', password: 's3cret', auth: '', identitytoken: '' },
      },
    ]);
    // the value and its derived forms (see redact.test.ts); never the username alone
    expect(p.secrets).toEqual(expect.arrayContaining(['s3cret', 'bot:s3cret', Buffer.from('bot:s3cret').toString('base64')]));
    expect(p.secrets).not.toContain('bot');
  });

  it('reads the legacy machine.registries form and maps docker.io to its TOML key', () => {
    const p = parseAuthPatch('machine:\n  registries:\n    config:\n      docker.io:\n        auth:\n          auth: dXNlcjpwYXNz\n', []);
    expect(p.desired[0].host).toBe('docker.io');
    expect(p.desired[0].tomlHost).toBe('registry-1.docker.io');
    expect(p.desired[0].fields.auth).toBe('dXNlcjpwYXNz');
  });

  it('lets the RegistryAuthConfig document win over the legacy form for the same host, as Talos does', () => {
    const text = `machine:\n  registries:\n    config:\n      ghcr.io:\n        auth:\n          username: old\n          password: oldpw\n---\n${doc('ghcr.io', 'username: new\npassword: newpw\n')}`;
    expect(parseAuthPatch(text, []).desired[0].fields).toMatchObject({ username: 'new', password: 'newpw' });
  });

  it('maps identityToken to the TOML field identitytoken', () => {
    expect(parseAuthPatch(doc('r.example', 'identityToken: tok\n'), []).desired[0].fields.identitytoken).toBe('tok');
  });

  it('rolls every host of the patch by default, the registry input a list of them, each checked', () => {
    const legacy = 'machine:\n  registries:\n    config:\n      c.io:\n        auth:\n          username: u\n          password: r\n';
    const text = `${doc('b.io', 'username: u\npassword: q\n')}\n---\n${doc('a.io', 'username: u\npassword: p\n')}\n---\n${legacy}`;
    // documents and legacy entries in any mix, sorted by host
    expect(parseAuthPatch(text, []).desired.map((d) => [d.host, d.fields.password])).toEqual([
      ['a.io', 'p'],
      ['b.io', 'q'],
      ['c.io', 'r'],
    ]);
    expect(parseAuthPatch(text, ['c.io', 'b.io']).desired.map((d) => d.host)).toEqual(['b.io', 'c.io']);
    expect(() => parseAuthPatch(text, ['b.io', 'd.io'])).toThrow(/input "registry": "d.io" is not a host .*a\.io, b\.io, c\.io/);
  });

  it('rejects a patch without a credential', () => {
    expect(() => parseAuthPatch('machine:\n  network:\n    hostname: x\n', [])).toThrow(
      /input "auth-patch": carries no registry credential/,
    );
    expect(() => parseAuthPatch(doc('ghcr.io', 'username: ""\n'), [])).toThrow(/carries no registry credential/);
  });

  it('never quotes the source in a YAML error', () => {
    let msg = '';
    try {
      parseAuthPatch('password: "s3cret\n  - : [', []);
    } catch (e) {
      msg = (e as Error).message;
    }
    expect(msg).toMatch(/not valid YAML/);
    expect(msg).not.toContain('s3cret');
  });
});

describe('readAuthPatch', () => {
  it('names the missing file', () => {
    expect(() => readAuthPatch('/nonexistent/patch.yaml', [], () => undefined)).toThrow(
      /input "auth-patch": cannot read "\/nonexistent\/patch.yaml" \(ENOENT\)/,
    );
  });

  it('masks every secret value', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cred-'));
    const f = join(dir, 'p.yaml');
    writeFileSync(f, doc('ghcr.io', 'username: bot\npassword: pw-123\n'));
    chmodSync(f, 0o600);
    const masked: string[] = [];
    readAuthPatch(f, [], (s) => masked.push(s));
    expect(masked).toEqual(expect.arrayContaining(['pw-123', 'bot:pw-123', Buffer.from('bot:pw-123').toString('base64')]));
    expect(masked).not.toContain('bot');
  });
});
