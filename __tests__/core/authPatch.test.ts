import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAuthPatch } from '../../src/action/inputs.js';
import { parseAuthPatch } from '../../src/core/authPatch.js';
import { scratchDir } from '../scratch.js';

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
    expect(parseAuthPatch(text, ['c.io', 'b.io', 'a.io']).desired.map((d) => d.host)).toEqual(['a.io', 'b.io', 'c.io']);
    // a list of some of them is refused: the patch would write the others too (the describe below)
    expect(() => parseAuthPatch(text, ['c.io', 'b.io'])).toThrow(/input "registry": registry: c\.io, b\.io does not roll a\.io/);
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

// Only the rolled registries are written: a patch that touches the credential of a host the run does
// not roll (outside `registry`, or given no new credential) is refused before anything runs, whatever
// its form; a patch whose registry hosts cannot be known from it is refused too. The rule and its
// reasons: docs/registries.md ("Only the rolled hosts are written").
describe('parseAuthPatch: the patch writes no registry host the run does not roll', () => {
  const legacy = (host: string, entry: string) => `machine:\n  registries:\n    config:\n      ${host}:\n${entry}`;
  const mirror = doc('mirror.local:5000', 'username: m\npassword: mirror-pw\n');
  const both = `${mirror}---\n${doc('ghcr.io', 'username: g\npassword: ghcr-pw\n')}`;
  const refusal = (text: string, registry: string[]) => {
    try {
      parseAuthPatch(text, registry);
    } catch (e) {
      return (e as Error).message;
    }
    throw new Error('not refused');
  };

  it('a credential for a host outside registry, in either form: refused, naming the hosts, the input and the fix', () => {
    const msg = refusal(both, ['mirror.local:5000']);
    expect(msg).toMatch(/^input "registry": /);
    expect(msg).toContain('ghcr.io');
    expect(msg).toContain('registry: mirror.local:5000');
    expect(msg).toMatch(/Add ghcr\.io to registry, or remove it from the auth patch/);
    // never a secret
    expect(msg).not.toMatch(/ghcr-pw|mirror-pw/);
    const legacyBoth = `${mirror}---\n${legacy('ghcr.io', '        auth:\n          username: g\n          password: ghcr-pw\n')}`;
    expect(refusal(legacyBoth, ['mirror.local:5000'])).toMatch(/input "registry": .*ghcr\.io/);
    // several extra hosts: each named once, sorted
    const three = `${both}---\n${doc('a.io', 'auth: YTpi\n')}`;
    expect(refusal(three, ['mirror.local:5000'])).toMatch(/Add a\.io, ghcr\.io to registry, or remove them from the auth patch/);
  });

  it('in the form left to talosctl too: a document or an entry that also sets other fields still writes its host', () => {
    const tls = legacy(
      'ghcr.io',
      '        auth:\n          username: g\n          password: ghcr-pw\n        tls:\n          insecureSkipVerify: true\n',
    );
    const text = `${mirror}---\n${tls}`;
    expect(parseAuthPatch(text, []).form.ours).toBe(false);
    expect(refusal(text, ['mirror.local:5000'])).toMatch(/input "registry": .*ghcr\.io/);
    const extraKey = `${mirror}---\n${doc('ghcr.io', 'username: g\npassword: ghcr-pw\nfoo: bar\n')}`;
    expect(parseAuthPatch(extraKey, []).form.ours).toBe(false);
    expect(refusal(extraKey, ['mirror.local:5000'])).toMatch(/input "registry": .*ghcr\.io/);
  });

  it('a host whose credential the patch removes or empties without giving one: refused, registry given or not', () => {
    const removals: Array<[string, string]> = [
      ['a deleted document', 'apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\n$patch: delete\n'],
      ['an empty document', 'apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\n'],
      ['a deleted legacy auth map', legacy('ghcr.io', '        auth:\n          $patch: delete\n')],
      ['a deleted legacy entry', legacy('ghcr.io', '        $patch: delete\n')],
      ['an empty legacy auth map', legacy('ghcr.io', '        auth: {}\n')],
      ['a legacy auth that is no mapping', legacy('ghcr.io', '        auth: null\n')],
    ];
    for (const [what, removal] of removals) {
      for (const registry of [[], ['mirror.local:5000']]) {
        const msg = refusal(`${mirror}---\n${removal}`, registry);
        expect(msg, `${what}, registry [${registry.join()}]`).toMatch(/^input "auth-patch": /);
        expect(msg, what).toMatch(/ghcr\.io/);
        expect(msg, what).toMatch(/remove it from the auth patch/);
      }
    }
  });

  it('hosts that cannot be known from the patch: a deleted registries section or a CRI customization is refused', () => {
    const unknowable: Array<[string, string, RegExp]> = [
      ['config deleted', 'machine:\n  registries:\n    config:\n      $patch: delete\n', /machine\.registries\.config/],
      ['registries deleted', 'machine:\n  registries:\n    $patch: delete\n', /machine\.registries/],
      ['machine deleted', 'machine:\n  $patch: delete\n', /machine/],
      ['config not a mapping', 'machine:\n  registries:\n    config: []\n', /machine\.registries\.config/],
      [
        'a CRICustomizationConfig',
        'apiVersion: v1alpha1\nkind: CRICustomizationConfig\nname: extra\ncontent: |\n  [plugins]\n',
        /CRICustomizationConfig/,
      ],
      [
        'a machine file for the CRI customization part',
        'machine:\n  files:\n    - path: /etc/cri/conf.d/20-customization.part\n      op: create\n      content: x\n',
        /\/etc\/cri\/conf\.d\/20-customization\.part/,
      ],
    ];
    for (const [what, text, names] of unknowable) {
      const msg = refusal(`${mirror}---\n${text}`, []);
      expect(msg, what).toMatch(/^input "auth-patch": document 2 /);
      expect(msg, what).toMatch(names);
      expect(msg, what).toMatch(/cannot be known/);
    }
  });

  it('every secret is handed to the mask before a refusal', () => {
    const masked: string[] = [];
    expect(() => parseAuthPatch(both, ['mirror.local:5000'], (x) => masked.push(x))).toThrow(/input "registry"/);
    expect(masked).toEqual(expect.arrayContaining(['ghcr-pw', 'mirror-pw']));
    masked.length = 0;
    const cri = `${both}---\napiVersion: v1alpha1\nkind: CRICustomizationConfig\nname: x\ncontent: ""\n`;
    expect(() => parseAuthPatch(cri, [], (x) => masked.push(x))).toThrow(/cannot be known/);
    expect(masked).toEqual(expect.arrayContaining(['ghcr-pw', 'mirror-pw']));
  });

  it('what stays allowed: every host rolled, the default rolling every host with a credential, the rolled host’s own form switch, other settings', () => {
    expect(parseAuthPatch(both, []).desired.map((d) => d.host)).toEqual(['ghcr.io', 'mirror.local:5000']);
    expect(parseAuthPatch(both, ['ghcr.io', 'mirror.local:5000']).desired.map((d) => d.host)).toEqual(['ghcr.io', 'mirror.local:5000']);
    // deleting the rolled host's document while giving its legacy map (src/rules/credentialForms.ts)
    const migrate = `apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\n$patch: delete\n---\n${legacy('ghcr.io', '        auth:\n          username: g\n          password: p\n')}`;
    expect(parseAuthPatch(migrate, ['ghcr.io']).desired.map((d) => d.host)).toEqual(['ghcr.io']);
    // another host's TLS or mirror settings are not a credential: left to talosctl, as any other setting
    const settings = `${mirror}---\n${legacy('ghcr.io', '        tls:\n          insecureSkipVerify: true\n')}---\nmachine:\n  registries:\n    mirrors:\n      docker.io:\n        endpoints: [https://mirror.local:5000]\n`;
    expect(parseAuthPatch(settings, ['mirror.local:5000']).desired.map((d) => d.host)).toEqual(['mirror.local:5000']);
    // a machine file elsewhere is no CRI customization
    const file = `${mirror}---\nmachine:\n  files:\n    - path: /var/etc/motd\n      op: create\n      content: hi\n`;
    expect(parseAuthPatch(file, []).desired.map((d) => d.host)).toEqual(['mirror.local:5000']);
  });
});

describe('readAuthPatch', () => {
  it('names the missing file', () => {
    expect(() => readAuthPatch('/nonexistent/patch.yaml', [], () => undefined)).toThrow(
      /input "auth-patch": cannot read "\/nonexistent\/patch.yaml" \(ENOENT\)/,
    );
  });

  it('masks every secret value', () => {
    const dir = scratchDir('cred-');
    const f = join(dir, 'p.yaml');
    writeFileSync(f, doc('ghcr.io', 'username: bot\npassword: pw-123\n'));
    chmodSync(f, 0o600);
    const masked: string[] = [];
    readAuthPatch(f, [], (s) => masked.push(s));
    expect(masked).toEqual(expect.arrayContaining(['pw-123', 'bot:pw-123', Buffer.from('bot:pw-123').toString('base64')]));
    expect(masked).not.toContain('bot');
  });
});
