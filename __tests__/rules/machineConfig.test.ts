// The credential patch applied to a machine config's text: whole-document replacement, the legacy
// auth map, other documents untouched, no-op detection, and no config text in any error.
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import {
  MachineConfigError,
  applyCredentialChanges,
  classifyCredentialPatch,
  pendingChanges,
  type CredentialChange,
} from '../../src/rules/machineConfig.js';

const V1 = `version: v1alpha1 # the main document
debug: false
machine:
  type: worker
  token: node-token-secret
  registries:
    config:
      ghcr.io:
        auth:
          username: old
          password: old-pass
cluster:
  clusterName: c
`;
const OTHER = `---
apiVersion: v1alpha1
kind: NetworkRuleConfig   # keep me
name: rule
portSelector:
  ports: [ 53 ]
`;
const RAC_AUTH = `---
apiVersion: v1alpha1
kind: RegistryAuthConfig
name: ghcr.io
auth: b2xkOm9sZA==
`;
const CONFIG = V1 + RAC_AUTH + OTHER;

function changes(patch: string): CredentialChange[] {
  const c = classifyCredentialPatch(patch);
  if (!c.ours) throw new Error(c.why);
  return c.changes;
}
const docsOf = (text: string) => parseAllDocuments(text).map((d) => d.toJS() as Record<string, unknown>);

describe('classifyCredentialPatch', () => {
  it('takes RegistryAuthConfig documents and legacy auth maps', () => {
    const c = changes(`apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\nusername: u\npassword: p\n`);
    expect(c).toMatchObject([{ form: 'document', name: 'ghcr.io', value: { username: 'u', password: 'p' } }]);
    expect(changes(`machine:\n  registries:\n    config:\n      ghcr.io:\n        auth:\n          auth: eA==\n`)).toEqual([
      { form: 'legacy', host: 'ghcr.io', auth: { auth: 'eA==' } },
    ]);
  });

  it.each([
    ['a JSON 6902 list', `- op: add\n  path: /machine/x\n  value: 1\n`, /not a mapping/],
    [
      'another field beside the auth',
      `machine:\n  registries:\n    config:\n      ghcr.io:\n        auth: {auth: eA==}\n        tls: {insecureSkipVerify: true}\n`,
      /more than the auth of ghcr.io/,
    ],
    [
      'another machine field',
      `machine:\n  kubelet: {}\n  registries:\n    config:\n      ghcr.io:\n        auth: {auth: eA==}\n`,
      /more than machine.registries/,
    ],
    ['a $patch: delete document', `apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\n$patch: delete\n`, /also sets \$patch/],
    ['another kind', `apiVersion: v1alpha1\nkind: NetworkRuleConfig\nname: x\n`, /is a NetworkRuleConfig document/],
  ])('leaves %s to talosctl, saying why', (_what, patch, why) => {
    const c = classifyCredentialPatch(patch);
    expect(c.ours).toBe(false);
    expect(!c.ours && c.why).toMatch(why);
  });
});

describe('applyCredentialChanges', () => {
  it('replaces a RegistryAuthConfig document whole: username/password after auth keeps no auth', () => {
    const patch = `apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\nusername: new\npassword: new-pass\n`;
    const out = applyCredentialChanges(CONFIG, changes(patch));
    expect(out.changed).toEqual(['RegistryAuthConfig/ghcr.io']);
    const docs = docsOf(out.text!);
    expect(docs[1]).toEqual({ apiVersion: 'v1alpha1', kind: 'RegistryAuthConfig', name: 'ghcr.io', username: 'new', password: 'new-pass' });
    // every other document keeps its text (comments included) and its place
    expect(out.text!.startsWith(V1)).toBe(true);
    expect(out.text!.endsWith(OTHER)).toBe(true);
    expect(docs).toHaveLength(3);
  });

  it('appends a RegistryAuthConfig document the config lacks', () => {
    const patch = `apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: quay.io\nidentityToken: tok\n`;
    const out = applyCredentialChanges(CONFIG, changes(patch));
    expect(out.text!.startsWith(CONFIG)).toBe(true);
    expect(docsOf(out.text!)[3]).toMatchObject({ kind: 'RegistryAuthConfig', name: 'quay.io', identityToken: 'tok' });
  });

  it('replaces the legacy auth map whole and keeps the rest of the v1alpha1 document', () => {
    const patch = `machine:\n  registries:\n    config:\n      ghcr.io:\n        auth:\n          auth: bmV3Om5ldw==\n`;
    const out = applyCredentialChanges(CONFIG, changes(patch));
    const docs = docsOf(out.text!);
    const auth = (((docs[0].machine as any).registries.config as any)['ghcr.io'] as any).auth;
    expect(auth).toEqual({ auth: 'bmV3Om5ldw==' });
    expect((docs[0].machine as any).token).toBe('node-token-secret');
    expect(out.text).toContain('# the main document');
    expect(out.text!.endsWith(RAC_AUTH + OTHER)).toBe(true);
  });

  it('a config already carrying the change sends nothing', () => {
    const patch = `apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\nauth: b2xkOm9sZA==\n`;
    expect(applyCredentialChanges(CONFIG, changes(patch))).toEqual({ changed: [] });
    expect(pendingChanges(CONFIG, changes(patch))).toEqual([]);
  });

  it('a RegistryAuthConfig with a field more than the patch is not the same: it is replaced', () => {
    const patch = `apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\n`;
    expect(pendingChanges(CONFIG, [{ form: 'document', name: 'ghcr.io', text: patch, value: docsOf(patch)[0] }])).toEqual([
      'RegistryAuthConfig/ghcr.io',
    ]);
  });

  it('an unparseable config is refused with a position, never its text', () => {
    const bad = `machine:\n  token: node-token-secret\n  x: [unclosed\n`;
    let err: unknown;
    try {
      applyCredentialChanges(bad, changes(RAC_AUTH));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MachineConfigError);
    expect((err as Error).message).toMatch(/document 1 is not valid YAML \(line \d+, column \d+\)/);
    expect((err as Error).message).not.toContain('node-token-secret');
    expect((err as Error).message).not.toContain('unclosed');
  });

  it('a legacy change on a config without a v1alpha1 document names the document', () => {
    const patch = `machine:\n  registries:\n    config:\n      ghcr.io:\n        auth: {auth: eA==}\n`;
    expect(() => applyCredentialChanges(RAC_AUTH, changes(patch))).toThrow(/no v1alpha1 document/);
  });
});
