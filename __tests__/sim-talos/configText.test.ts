// The twin's machine configs as Talos keeps them: the bytes an apply sent, served back as they were,
// read with Go's YAML (a `0644` is 420, a `644` is 644: another mode, which NO_REBOOT refuses as
// machined's CanApplyImmediate does), the neighbours real configs carry, both credential forms with
// the document winning, and machined's ApplyConfiguration cancelling a pending try-mode rollback on
// every call but TRY, a dry run included (v1alpha1_server.go, docs/plan.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TalosConnection } from '../../src/adapters/talos/api/connection.js';
import { loadTalosContext } from '../../src/adapters/talos/api/talosconfig.js';
import { ToolError } from '../../src/core/errors.js';
import { TalosSim } from '../../sim/talos/index.js';
import { parseGoYaml } from '../../sim/talos/goYaml.js';
import {
  SIM_MIRROR,
  SIM_MIRROR_TLS_KEY,
  SIM_STALE_LEGACY,
  SIM_TS_AUTHKEY,
  effectiveAuth,
  initialMachineConfig,
} from '../../sim/talos/machineconfig.js';
import { recordingHooks, talosctl } from './helpers.js';

const CRED = { username: 'ci-bot', password: 'token-1' };
const W1 = '10.0.4.1';
const W2 = '10.0.4.2';
let sim: TalosSim;
let conn: TalosConnection;

beforeAll(async () => {
  sim = await TalosSim.start({ kube: recordingHooks() });
  sim.addNode({ name: 'w-1', ip: W1, role: 'worker', version: '1.14', credential: { 'ghcr.io': CRED } });
  sim.addNode({ name: 'w-2', ip: W2, role: 'worker', version: '1.13', credential: { 'ghcr.io': CRED }, credentialForm: 'both' });
  const ctx = loadTalosContext({ path: sim.talosconfigPath });
  conn = new TalosConnection({ endpoint: ctx.endpoints[0], credentials: ctx.credentials! });
});

afterAll(async () => {
  conn?.close();
  await sim?.stop();
});

const apply = (node: string, text: string, mode = 'NO_REBOOT', dryRun = false) =>
  conn.unary('applyConfiguration', node, { data: Buffer.from(text), mode, dry_run: dryRun });

describe('the twin’s machine config text', () => {
  it('carries realistic neighbours: an extension’s secret environment, an octal file mode, a mirror’s TLS key', () => {
    const mc = sim.node('w-1').machineConfig;
    expect(mc.text).toMatch(/^ {6}permissions: 0644$/m);
    expect((mc.v1alpha1.machine as any).files[0].permissions).toBe(0o644);
    expect((mc.v1alpha1.machine as any).registries.config[SIM_MIRROR].tls.clientIdentity.key).toBe(SIM_MIRROR_TLS_KEY);
    // the config ends with the extension's document
    expect(mc.text).toMatch(
      new RegExp(`kind: ExtensionServiceConfig\\nname: tailscale\\nenvironment:\\n  - TS_AUTHKEY=${SIM_TS_AUTHKEY}\\n[^]*$`),
    );
  });

  // initialMachineConfig makes a spec's config once per worker (its text and Go's reading of it) and
  // hands each node a copy: a node's patch must never show in another node, nor in a later cluster's.
  it('nodes of one spec get the same config, each its own copy: a change to one shows in no other', () => {
    const self = { name: 'w-9', ip: '10.0.4.9' };
    const a = initialMachineConfig('worker', { 'ghcr.io': CRED }, { self });
    const auth = (mc: typeof a) => (mc.v1alpha1 as any).machine.registries.config['ghcr.io'].auth;
    auth(a).password = 'changed-by-a-patch';
    a.registryAuth.other = { username: 'x' };
    const b = initialMachineConfig('worker', { 'ghcr.io': CRED }, { self });
    expect(b.text).toBe(a.text);
    expect(auth(b)).toEqual(CRED);
    expect(b.registryAuth).toEqual({});
    // another spec is another config
    expect(initialMachineConfig('worker', { 'ghcr.io': CRED }, { self: { ...self, ip: '10.0.4.10' } }).text).not.toBe(a.text);
  });

  it('both forms for a host: the document wins (container.RegistryAuthConfigs), the legacy map holds a stale credential', () => {
    const mc = sim.node('w-2').machineConfig;
    expect((mc.v1alpha1.machine as any).registries.config['ghcr.io'].auth).toEqual(SIM_STALE_LEGACY);
    expect(effectiveAuth(mc)['ghcr.io']).toEqual(CRED);
    expect(sim.node('w-2').auth['ghcr.io']).toEqual(CRED);
  });

  it('reads octals as Go’s YAML does: 0644 and 0o644 are 420, 644 is 644, a quoted "0644" a string', () => {
    expect(parseGoYaml('a: 0644\nb: 0o644\nc: 644\nd: "0644"\n')[0].value).toEqual({ a: 420, b: 420, c: 644, d: '0644' });
  });

  it('keeps the bytes an apply sent and serves them back as they were', async () => {
    const text = `${sim.node('w-1').machineConfig.text}# a comment the operator wrote\n`;
    await apply(W1, text);
    expect(sim.node('w-1').machineConfig.text).toBe(text);
    const res = await conn.unary('cosiGet', W1, { namespace: 'config', type: 'MachineConfigs.config.talos.dev', id: 'v1alpha1' });
    const yaml = String(((res.resource as any).spec as any).yaml_spec);
    expect(yaml).toContain('# a comment the operator wrote');
  });

  it('refuses in NO_REBOOT a file mode rewritten from 0644 to 644, as CanApplyImmediate does; AUTO would reboot', async () => {
    const before = sim.node('w-1').machineConfig.text;
    const rewritten = before.replace('permissions: 0644', 'permissions: 644');
    const err = await apply(W1, rewritten).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).stderr).toContain(
      "code = InvalidArgument desc = this config change can't be applied in immediate mode\ndiff:\n",
    );
    expect((err as ToolError).stderr).toContain('-          permissions: 0o644\n+          permissions: 0o1204');
    expect(sim.node('w-1').machineConfig.text).toBe(before);
    const dry = await apply(W1, rewritten, 'AUTO', true);
    expect((dry.messages as any[])[0].mode).toBe('REBOOT');
    // the same mode written another way is no change to Talos
    await apply(W1, before.replace('permissions: 0644', 'permissions: 0o644'));
  });

  it('a dry run cancels a pending try-mode rollback, as every ApplyConfiguration but TRY does', async () => {
    sim.applyInTryMode(W2, 'machine:\n  sysctls:\n    vm.max_map_count: "262144"\n', 600_000);
    expect(sim.tryRollbackPending(W2)).toBe(true);
    await apply(W2, sim.node('w-2').machineConfig.text, 'TRY', true);
    expect(sim.tryRollbackPending(W2)).toBe(true);
    const text = sim.node('w-2').machineConfig.text;
    await apply(W2, text, 'NO_REBOOT', true);
    expect(sim.tryRollbackPending(W2)).toBe(false);
    expect(sim.node('w-2').machineConfig.text).toBe(text);
  });

  it('talosctl patch re-encodes the config as Talos does (comments gone, 4-space indentation, 0o644) and keeps the mode', async () => {
    const r = await talosctl(sim, [
      '-n',
      W2,
      'patch',
      'machineconfig',
      '--mode=no-reboot',
      '--patch',
      '[{"op":"add","path":"/machine/sysctls","value":{"a":"1"}}]',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const text = sim.node('w-2').machineConfig.text;
    expect(text).not.toContain('# ');
    expect(text).toMatch(/^ {10}permissions: 0o644$/m);
    expect((sim.node('w-2').machineConfig.v1alpha1.machine as any).files[0].permissions).toBe(0o644);
  });
});
