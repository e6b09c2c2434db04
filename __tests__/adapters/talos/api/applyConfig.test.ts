// The credential through ApplyConfiguration against the twin's gRPC server over real mutual TLS:
// both body forms of the MachineConfig resource, whole-document replacement, the no-op that sends
// nothing, NO_REBOOT, warnings, the in-progress retry (bounded), InvalidArgument naming the
// document, and the cluster's secrets from the config read back registered for masking (and nothing else).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Runner } from '../../../../src/adapters/exec.js';
import { classifyCredentialPatch } from '../../../../src/core/authPatch.js';
import { TalosApi } from '../../../../src/adapters/talos/api/apiClient.js';
import { machineConfigBody } from '../../../../src/adapters/talos/api/applyConfig.js';
import { openTalosClient, type OpenedTalos } from '../../../../src/adapters/talos/open.js';
import { ToolError } from '../../../../src/core/errors.js';
import { Redactor } from '../../../../src/core/redact.js';
import { TalosSim } from '../../../../sim/talos/index.js';
import {
  SIM_BOOTSTRAP_TOKEN,
  SIM_CLUSTER_CA_CRT,
  SIM_CLUSTER_CA_KEY,
  SIM_CLUSTER_SECRET,
  SIM_MACHINE_CA_CRT,
  SIM_MACHINE_CA_KEY,
  SIM_MACHINE_TOKEN,
} from '../../../../sim/talos/machineconfig.js';
import { recordingHooks } from '../../../sim-talos/helpers.js';

const OLD_CRED = { username: 'ci-bot', password: 'old-token-1' };
const W13 = '10.0.2.1';
const W14 = '10.0.2.2';
const IN_PROGRESS = 'rpc error: code = FailedPrecondition desc = another apply configuration is already in progress\n';

let sim: TalosSim;
let work: string;
const opened: OpenedTalos[] = [];

const rac = (fields: string) => `apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\n${fields}`;

async function open(patch: string, runner = new Runner()): Promise<{ o: OpenedTalos; lines: string[]; runner: Runner; secrets: string[] }> {
  const file = join(work, `patch-${opened.length}.yaml`);
  writeFileSync(file, patch);
  const lines: string[] = [];
  const secrets: string[] = [];
  const o = await openTalosClient({
    runner,
    path: sim.talosconfigPath,
    authPatch: { path: file, form: classifyCredentialPatch(patch) },
    log: (l) => lines.push(l),
    secret: (s) => secrets.push(s),
  });
  opened.push(o);
  return { o, lines, runner, secrets };
}

beforeAll(async () => {
  sim = await TalosSim.start({ kube: recordingHooks() });
  sim.addNode({ name: 'w-13', ip: W13, role: 'worker', version: '1.13', credential: { 'ghcr.io': OLD_CRED } });
  sim.addNode({ name: 'w-14', ip: W14, role: 'worker', version: '1.14', credential: { 'ghcr.io': OLD_CRED } });
  work = mkdtempSync(join(tmpdir(), 'talos-apply-test-'));
});

afterAll(async () => {
  for (const o of opened) o.close();
  await sim?.stop();
  rmSync(work, { recursive: true, force: true });
});

const calls = (node: string) => sim.applyCalls().filter((c) => c.node === node);
const talosctlPatches = () => sim.mutatingCommands().filter((c) => c.argv[0] !== '(api)');

describe('ApplyConfiguration', () => {
  it('a RegistryAuthConfig document is applied over the API in NO_REBOOT; then the same patch sends nothing', async () => {
    const { o, lines } = await open(rac('username: ci-bot\npassword: new-token-2\n'));
    expect(o.describe).toContain('the credential patch through ApplyConfiguration (NO_REBOOT)');
    await o.client.patchMachineConfig(W13);
    expect(sim.node('w-13').machineConfig.registryAuth['ghcr.io']).toEqual({ username: 'ci-bot', password: 'new-token-2' });
    expect(calls(W13)).toHaveLength(1);
    // the node carries the legacy map for ghcr.io too: it gets the new credential as well, so no old one stays behind
    expect(lines).toContainEqual(
      `${W13}: ApplyConfiguration (NO_REBOOT) changed RegistryAuthConfig/ghcr.io, v1alpha1 machine.registries.config.ghcr.io.auth: Applied configuration without a reboot`,
    );
    expect(((sim.node('w-13').machineConfig.v1alpha1.machine as any).registries.config['ghcr.io'] as any).auth).toEqual({
      username: 'ci-bot',
      password: 'new-token-2',
    });
    expect(talosctlPatches()).toEqual([]);
    // the other documents of the node's config are still there (v1alpha1 with its token)
    expect((sim.node('w-13').machineConfig.v1alpha1.machine as Record<string, unknown>).token).toBe(SIM_MACHINE_TOKEN);

    await o.client.patchMachineConfig(W13);
    expect(calls(W13)).toHaveLength(1);
    expect(lines.at(-1)).toBe(`${W13}: the machine config already carries the credential: ApplyConfiguration not sent`);
  });

  it('replaces the document whole: auth after username/password leaves no password (a merge would keep it)', async () => {
    const { o } = await open(rac('auth: Y2ktYm90OnRoaXJkLTM=\n'));
    await o.client.patchMachineConfig(W13);
    expect(sim.node('w-13').machineConfig.registryAuth['ghcr.io']).toEqual({ auth: 'Y2ktYm90OnRoaXJkLTM=' });
  });

  it('the legacy form replaces machine.registries.config.<host>.auth; the older body form (no annotations) is read too', async () => {
    sim.setConfigBodyForm(W14, 'document');
    const before = sim.node('w-14').machineConfig.text;
    const { o } = await open('machine:\n  registries:\n    config:\n      ghcr.io:\n        auth:\n          identityToken: idt-4\n');
    // a re-rendered v1alpha1 document would write the file's `permissions: 0644` as 644, another mode
    // to Talos, which refuses it in NO_REBOOT (CanApplyImmediate): only the auth lines may change
    await o.client.patchMachineConfig(W14);
    const mc = sim.node('w-14').machineConfig;
    const authLines = /^ {8}auth:\n(?: {10}.*\n)+/m;
    expect(mc.text.replace(authLines, '')).toBe(before.replace(authLines, ''));
    expect(mc.text).toMatch(/^ {8}auth:\n {10}identityToken: idt-4\n {6}# the pull-through mirror/m);
    expect(mc.text).toContain('      permissions: 0644\n');
    expect(((mc.v1alpha1.machine as any).registries.config['ghcr.io'] as any).auth).toEqual({ identityToken: 'idt-4' });
    expect((mc.v1alpha1.cluster as Record<string, unknown>).secret).toBe(SIM_CLUSTER_SECRET);
    sim.setConfigBodyForm(W14, 'string');
  });

  it('surfaces the warnings the node returns', async () => {
    sim.warnOnApply(W14, ['.machine.registries.config: this field is deprecated, use RegistryAuthConfig']);
    const { o, lines } = await open(rac('username: u5\npassword: p5-secret\n'));
    await o.client.patchMachineConfig(W14);
    expect(lines).toContainEqual(
      `${W14}: ApplyConfiguration warning: .machine.registries.config: this field is deprecated, use RegistryAuthConfig`,
    );
    sim.warnOnApply(W14, []);
  });

  it('retries "another apply configuration is already in progress", a bounded number of times', async () => {
    const { o, lines } = await open(rac('username: u6\npassword: p6-secret\n'));
    const before = calls(W14).length;
    sim.failNext({ command: 'patch', node: W14, count: 2 }, { stderr: IN_PROGRESS, exitCode: 1 });
    await o.client.patchMachineConfig(W14);
    expect(calls(W14).length - before).toBe(3);
    expect(lines.filter((l) => l.includes('retrying'))).toHaveLength(2);
    expect(sim.node('w-14').machineConfig.registryAuth['ghcr.io']).toEqual({ username: 'u6', password: 'p6-secret' });

    const { o: o2 } = await open(rac('username: u7\npassword: p7-secret\n'));
    sim.failNext({ command: 'patch', node: W14, count: 10 }, { stderr: IN_PROGRESS, exitCode: 1 });
    const err = await o2.client.patchMachineConfig(W14).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).kind).toBe('conflict');
    expect((err as Error).message).toContain('another apply configuration is already in progress');
    expect(calls(W14).length - before).toBe(3 + 5);
  });

  it('an apply another writer overwrote at once is a conflict: the re-read must carry the change', async () => {
    const { o } = await open(rac('username: u9\npassword: p9-overwritten\n'));
    const before = sim.node('w-13').machineConfig.registryAuth['ghcr.io'];
    sim.overwriteNextApply(W13);
    const err = await o.client.patchMachineConfig(W13).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).kind).toBe('conflict');
    expect((err as Error).message).toContain('ApplyConfiguration answered OK but the machine config read back does not carry');
    expect((err as Error).message).not.toContain('p9-overwritten');
    expect(sim.node('w-13').machineConfig.registryAuth['ghcr.io']).toEqual(before);
  });

  it('a config read back with another document changed since the apply is a conflict naming the node and the documents', async () => {
    const { o } = await open(rac('username: u10\npassword: p10-secret\n'));
    // another writer edits the extension's environment right after the apply answered
    sim.overwriteNextApply(W13, (text) => text.replace('TS_ROUTES=10.5.0.0/24', 'TS_ROUTES=10.6.0.0/24'));
    const err = await o.client.patchMachineConfig(W13).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).kind).toBe('conflict');
    expect((err as ToolError).node).toBe(W13);
    expect((err as Error).message).toBe(
      `applying the credential to the machine config of ${W13}: the machine config read back after ApplyConfiguration differs from the one sent in ExtensionServiceConfig/tailscale; the apply changed only RegistryAuthConfig/ghcr.io, v1alpha1 machine.registries.config.ghcr.io.auth (another writer, e.g. Omni, changed the rest?)`,
    );
  });

  it("InvalidArgument is a config error naming the document; a node's echo of the config keeps its words, and every secret of it is registered", async () => {
    const { o, runner } = await open(rac('username: u8\nauth: dTg6cDgtc2VjcmV0\n'));
    const err = await o.client.patchMachineConfig(W13).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).kind).toBe('invalid');
    expect((err as Error).message).toMatch(
      /changing RegistryAuthConfig\/ghcr\.io, v1alpha1 machine\.registries\.config\.ghcr\.io\.auth \(InvalidArgument\): .*RegistryAuthConfig\/ghcr\.io: only one of auth, username\/password or identityToken/s,
    );
    // a node error echoing the whole config it was sent: every credential of the cluster is masked
    sim.failNext(
      { command: 'patch', node: W13 },
      { stderrFrom: ({ patches }) => `rpc error: code = InvalidArgument desc = failed to decode: ${patches.join('')}`, exitCode: 1 },
    );
    const { o: o2, secrets } = await open(rac('username: u9\npassword: p9-secret\n'), runner);
    const echoed = await o2.client.patchMachineConfig(W13).catch((e: unknown) => e);
    const text = `${(echoed as Error).message}\n${(echoed as ToolError).stderr}`;
    expect(text).toContain('failed to decode');
    const cluster = [SIM_MACHINE_TOKEN, SIM_CLUSTER_SECRET, SIM_BOOTSTRAP_TOKEN, SIM_MACHINE_CA_KEY, SIM_CLUSTER_CA_KEY];
    // the error is the node's words as it sent them; the sinks mask it with what was registered
    for (const secret of [...cluster, 'p9-secret']) expect(text).toContain(secret);
    const masked = new Redactor(secrets).redact(text);
    expect(masked).toContain('failed to decode');
    for (const secret of [...cluster, 'p9-secret', 'Y2ktYm90OnRoaXJkLTM=']) expect(masked).not.toContain(secret);
    // and nothing that only looks like a secret: the node's name and address (certSANs), the kubelet
    // flag's "true", a username, the CAs' certificates
    for (const plain of ['w-13', W13, 'true', 'u9', 'ci-bot', SIM_MACHINE_CA_CRT, SIM_CLUSTER_CA_CRT]) expect(secrets).not.toContain(plain);
  });

  it('a patch carrying anything else stays with talosctl, and the describe line says why', async () => {
    const { o } = await open(
      'machine:\n  kubelet:\n    image: x\n  registries:\n    config:\n      ghcr.io:\n        auth: {auth: eA==}\n',
    );
    expect(o.client).toBeInstanceOf(TalosApi);
    expect(o.describe).toMatch(
      /the credential patch through talosctl \(patch document 1 sets more than machine\.registries\.config\.<host>\.auth\)/,
    );
  });
});

describe('machineConfigBody (talosctl extractMachineConfigBody)', () => {
  const body = 'version: v1alpha1\nmachine:\n  token: t\n---\napiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: x\n';
  it('annotated: the YAML spec is one string scalar holding the body', () => {
    const yaml = `|\n${body.replace(/^/gm, '  ').replace(/ +$/, '')}`;
    expect(machineConfigBody({ metadata: { annotations: { 'talos.dev/yaml-spec': '1' } }, spec: { yaml_spec: yaml } })).toBe(body);
  });
  it('not annotated (older Talos): the YAML spec is the body', () => {
    expect(machineConfigBody({ metadata: { annotations: {} }, spec: { yaml_spec: body } })).toBe(body);
  });
  it('annotated but not a string: refused without quoting it', () => {
    expect(() =>
      machineConfigBody({ metadata: { annotations: { a: '1' } }, spec: { yaml_spec: 'machine:\n  token: t0psecret\n' } }),
    ).toThrow(/^the MachineConfig spec is not one YAML string holding the config$/);
  });
});
