// End to end: a tool error that echoes the credential. `talosctl patch machineconfig` fails and its
// error text carries the patch file and forms derived from the credential in it; none of them may
// reach the log, the job summary, the outputs, the annotations or the saved state, in any form.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AuthFields } from '../../src/core/model/credential.js';
import { NEW_CREDENTIAL, OLD_CREDENTIAL, type SimCluster } from '../../sim/cluster.js';
import type { ActionRun } from '../../runner/runAction.js';
import {
  SIM_BOOTSTRAP_TOKEN,
  SIM_CLUSTER_CA_KEY,
  SIM_CLUSTER_SECRET,
  SIM_MACHINE_CA_KEY,
  SIM_MACHINE_TOKEN,
} from '../../sim/talos/machineconfig.js';
import { A, act, ann, byName, decisions, node, REVISION, requireKubectl, startCluster, verifiedRev } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const { username, password } = NEW_CREDENTIAL;
const FORMS: Record<string, string> = {
  password,
  'base64(password)': b64(password),
  'user:password': `${username}:${password}`,
  'base64(user:password)': b64(`${username}:${password}`),
  // over the API the failing call was sent the node's whole config, and its error echoes it: the
  // cluster's other credentials, read back from the node, must not leak either
  'the machine token': SIM_MACHINE_TOKEN,
  'the cluster secret': SIM_CLUSTER_SECRET,
};

describe('e2e: tool error text never carries the credential', () => {
  it('a failing patch whose error echoes the patch file and the derived forms: everything the run writes is redacted', async () => {
    const cluster = (c = await startCluster());
    const ip = cluster.talos.node('worker-1').ip;
    cluster.talos.failNext(
      { command: 'patch' },
      {
        exitCode: 1,
        // A validation error quoting the document it could not apply, and the auth it derived from it.
        stderrFrom: ({ patches }) =>
          `error patching machine config: 1 error occurred:\n\t* ${ip}: rpc error: code = InvalidArgument desc = ` +
          `failed to decode patch: yaml: unmarshal errors:\n${patches.join('\n')}\n` +
          `derived auth ${FORMS['base64(user:password)']} (${FORMS['user:password']}), token ${FORMS['base64(password)']}\n\n`,
      },
    );
    const run = await act(cluster, { nodes: 'worker-1' });

    // The failure itself is reported, with the tool's text (redacted) where a user looks for it.
    expect(run.exitCode, run.stdout).toBe(1);
    const d = byName(run)['worker-1'];
    expect(d.outcome).toBe('failed');
    expect(d.reason).toContain('failed to decode patch');
    expect(d.reason).toContain('***');
    expect(run.summary).toContain('failed to decode patch');
    expect(run.annotations.some((a) => a.title.startsWith('worker-1') && a.message.includes('failed to decode patch'))).toBe(true);
    expect(node(cluster, 'worker-1').spec.unschedulable).toBeFalsy();

    // `::add-mask::` is how core.setSecret registers a value with the runner (which swallows the line).
    const stdout = run.stdout
      .split('\n')
      .filter((l) => !l.startsWith('::add-mask::'))
      .join('\n');
    const sinks: Record<string, string> = {
      stdout,
      stderr: run.stderr,
      summary: run.summary,
      outputs: JSON.stringify(run.outputs),
      annotations: JSON.stringify(run.annotations),
      state: JSON.stringify(run.state),
    };
    const leaks = Object.entries(sinks).flatMap(([sink, text]) =>
      Object.entries(FORMS)
        .filter(([, value]) => text.includes(value))
        .map(([form]) => `${form} in ${sink}`),
    );
    expect(leaks).toEqual([]);
  });
});

// What merely looks like a secret. The action used to register every string under a key matching
// key|token|secret|password|auth|crt|cert|identity and to rewrite kubectl's output with them before
// parsing it: a GHCR username that is also the repository's owner, a certSAN naming the node, a quoted
// "true" under rotate-server-certificates. Now only Talos's own secret fields are registered
// (src/adapters/talos/machineConfig/secrets.ts), and masking happens where text leaves the action, never in what it
// parses. Each run below has a second node whose ApplyConfiguration fails with an error echoing the
// whole config it was sent (every credential of the cluster), so the check that no secret reaches a
// sink is not vacuous.
describe('e2e: what looks like a secret changes nothing the action reads', () => {
  const GHCR_OWNER: AuthFields = { username: 'acme', password: 'ghp_0ldT0ken4cmePlatf0rm', auth: '', identitytoken: '' };
  const GHCR_NEW: AuthFields = { username: 'acme', password: 'ghp_n3wT0ken4cmePlatf0rm', auth: '', identitytoken: '' };

  /** The node's next ApplyConfiguration fails, its error quoting the config it was sent. */
  function failEchoingConfig(cluster: SimCluster, name: string): void {
    cluster.talos.failNext(
      { command: 'patch', node: cluster.talos.node(name).ip },
      {
        exitCode: 1,
        stderrFrom: ({ patches }) => `rpc error: code = InvalidArgument desc = failed to decode config: ${patches.join('\n')}`,
      },
    );
  }

  /** Every form of every secret these runs know, by name. */
  function secrets(...creds: AuthFields[]): Record<string, string> {
    const out: Record<string, string> = {
      'the machine token': SIM_MACHINE_TOKEN,
      'the cluster secret': SIM_CLUSTER_SECRET,
      'the bootstrap token': SIM_BOOTSTRAP_TOKEN,
      'the machine CA key': SIM_MACHINE_CA_KEY,
      'the cluster CA key': SIM_CLUSTER_CA_KEY,
    };
    for (const [i, cr] of creds.entries()) {
      out[`password ${i}`] = cr.password;
      out[`base64(password) ${i}`] = b64(cr.password);
      out[`user:password ${i}`] = `${cr.username}:${cr.password}`;
      out[`base64(user:password) ${i}`] = b64(`${cr.username}:${cr.password}`);
    }
    return out;
  }

  function leaks(run: ActionRun, forms: Record<string, string>): string[] {
    const stdout = run.stdout
      .split('\n')
      .filter((l) => !l.startsWith('::add-mask::'))
      .join('\n');
    const sinks: Record<string, string> = {
      stdout,
      stderr: run.stderr,
      summary: run.summary,
      outputs: JSON.stringify(run.outputs),
      annotations: JSON.stringify(run.annotations),
      state: JSON.stringify(run.state),
    };
    return Object.entries(sinks).flatMap(([sink, text]) =>
      Object.entries(forms)
        .filter(([, value]) => text.includes(value))
        .map(([form]) => `${form} in ${sink}`),
    );
  }

  /** worker-1 was claimed, rolled and released as any node is: its claim gone, its cordon state restored, its revision verified. */
  function rolledAndReleased(cluster: SimCluster, run: ActionRun, name: string, cordoned = false): void {
    const d = byName(run)[name];
    expect(d, `${name} in the decisions`).toBeDefined();
    expect(d.outcome, d.reason).toBe('rebooted');
    expect(d.claim?.conflicts ?? []).toEqual([]);
    const a = ann(cluster, name);
    expect(a[A.owner]).toBeUndefined();
    expect(a[A.phase]).toBeUndefined();
    expect(verifiedRev(a)).toBe(REVISION);
    expect(node(cluster, name).spec.unschedulable ?? false).toBe(cordoned);
    expect(run.stdout).not.toContain('another actor');
    expect(run.summary).toContain(name);
    // the node's log group, titled with its name and outcome; nothing the node's tools printed was masked
    const group = new RegExp(`::group::${name} \\(worker\\): rebooted[^\\n]*\\n([^]*?)::endgroup::`).exec(run.stdout);
    expect(group, `the log group of ${name}`).not.toBeNull();
    expect(group![1]).not.toContain('***');
  }

  it('a GHCR user whose legacy auth map is named like the repository owner: the node is claimed, rolled and released, never "taken by another actor"', async () => {
    const cluster = (c = await startCluster({ defaultNodes: false }));
    // GITHUB_REPOSITORY is acme/platform (runner/runAction.ts): the owner token starts with the username
    for (const name of ['worker-1', 'worker-2']) cluster.addNode({ name, role: 'worker', oldCredential: GHCR_OWNER });
    const patch = join(cluster.dir, 'legacy-auth.yaml');
    writeFileSync(
      patch,
      `machine:\n  registries:\n    config:\n      ghcr.io:\n        auth:\n          username: ${GHCR_NEW.username}\n          password: ${GHCR_NEW.password}\n`,
      { mode: 0o600 },
    );
    failEchoingConfig(cluster, 'worker-2');
    const run = await act(cluster, { nodes: 'worker-1,worker-2', 'auth-patch': patch });

    rolledAndReleased(cluster, run, 'worker-1');
    expect(run.stdout).toContain('claim token for this run: acme/platform/runs/');
    expect(byName(run)['worker-2'].outcome).toBe('failed');
    expect(byName(run)['worker-2'].reason).toMatch(/failed to decode config: .*\*\*\*/s);
    expect(leaks(run, secrets(GHCR_OWNER, GHCR_NEW))).toEqual([]);
  });

  it("a config whose certSANs list the node's own hostname and address: every read and every report names the node", async () => {
    const cluster = (c = await startCluster({ defaultNodes: false }));
    for (const name of ['worker-1', 'worker-2']) cluster.addNode({ name, role: 'worker' });
    const sans = (name: string) => (cluster.talos.node(name).machineConfig.v1alpha1.machine as { certSANs: string[] }).certSANs;
    expect(sans('worker-1')).toEqual(['worker-1', cluster.talos.node('worker-1').ip]);
    failEchoingConfig(cluster, 'worker-2');
    const run = await act(cluster, { nodes: 'worker-1,worker-2' });

    rolledAndReleased(cluster, run, 'worker-1');
    expect(decisions(run).map((d) => [d.name, (d as unknown as { internalIP: string }).internalIP])).toEqual([
      ['worker-1', cluster.talos.node('worker-1').ip],
      ['worker-2', cluster.talos.node('worker-2').ip],
    ]);
    // the failing node's error quotes its config, certSANs included: its name and address are shown as they are
    expect(byName(run)['worker-2'].reason).toMatch(new RegExp(`certSANs:\\n +- worker-2\\n +- ${cluster.talos.node('worker-2').ip}\\n`));
    expect(byName(run)['worker-2'].reason).toMatch(/\*\*\*/);
    expect(run.stdout).not.toMatch(/no Node/);
    expect(leaks(run, secrets(OLD_CREDENTIAL, NEW_CREDENTIAL))).toEqual([]);
  });

  it('a quoted "true" under rotate-server-certificates: nothing in any JSON the action reads is masked', async () => {
    const cluster = (c = await startCluster({ defaultNodes: false }));
    // a cordoned node: its Node JSON carries `"unschedulable": true`, read again after the config was
    cluster.addNode({ name: 'worker-1', role: 'worker', cordoned: true });
    cluster.addNode({ name: 'worker-2', role: 'worker' });
    const extraArgs = (cluster.talos.node('worker-1').machineConfig.v1alpha1.machine as { kubelet: { extraArgs: object } }).kubelet
      .extraArgs;
    expect(extraArgs).toEqual({ 'rotate-server-certificates': 'true' });
    failEchoingConfig(cluster, 'worker-2');
    const run = await act(cluster, { nodes: 'worker-1,worker-2' });

    // was-cordoned=true was read from the Node and restored: the node stays cordoned after its release
    rolledAndReleased(cluster, run, 'worker-1', true);
    expect(byName(run)['worker-1'].steps.every((s) => s.ok)).toBe(true);
    expect(byName(run)['worker-2'].reason).toMatch(
      /rotate-server-certificates: "true".*\*\*\*|\*\*\*.*rotate-server-certificates: "true"/s,
    );
    expect(leaks(run, secrets(OLD_CREDENTIAL, NEW_CREDENTIAL))).toEqual([]);
  });
});
