// `talosctl get machineconfig v1alpha1 -o yaml` → the config's body and the credential forms it
// carries, as the talosctl path reads them before a patch Talos's merge applies. The output is the
// twin's (sim/talos/commands/get.ts), written as talosctl v1.13.9 prints the resource: the spec ONE
// literal-block string holding the whole multi-document config.
import { describe, expect, it } from 'vitest';
import { machineConfigBodyOfGet } from '../../../../src/adapters/talos/cli/parse/machineConfigGet.js';
import { credentialFormsOf } from '../../../../src/adapters/talos/machineConfig/documents.js';
import { ParseError } from '../../../../src/adapters/parseError.js';

const BODY = `version: v1alpha1
machine:
    registries:
        config:
            ghcr.io:
                auth:
                    username: old
                    password: stale-pass
---
apiVersion: v1alpha1
kind: RegistryAuthConfig
name: ghcr.io
username: u
password: secret-pass
`;
const indented = BODY.split('\n')
  .map((l) => (l ? `    ${l}` : l))
  .join('\n');
const OUTPUT = `node: 10.5.0.2
metadata:
    namespace: config
    type: MachineConfigs.config.talos.dev
    id: v1alpha1
    version: 2
    owner:
    phase: running
    created: 2026-12-06T07:00:00Z
    updated: 2026-12-06T07:00:00Z
    annotations:
        talos.dev/yaml-spec: "1"
spec: |
${indented}`;

describe('machineConfigBodyOfGet', () => {
  it('the spec string is the body, byte for byte; the forms it carries by host', () => {
    const body = machineConfigBodyOfGet(OUTPUT);
    expect(body).toBe(BODY);
    expect(credentialFormsOf(body)).toEqual({ documents: ['ghcr.io'], legacy: ['ghcr.io'] });
  });

  it('an output that is not one resource with a string spec is unparseable, naming a position, never the text', () => {
    expect(() => machineConfigBodyOfGet(`${OUTPUT}---\n${OUTPUT}`)).toThrow(/expected one resource, got 2/);
    expect(() => machineConfigBodyOfGet('node: a\nspec:\n    version: v1alpha1\n')).toThrow(/not one string/);
    try {
      machineConfigBodyOfGet('node: a\nspec: "secret-pass\n  : [\n');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ParseError);
      expect((e as Error).message).toMatch(/line \d+, column \d+/);
      expect((e as Error).message).not.toContain('secret-pass');
    }
  });
});
