// End to end: `mode: plan` on the API path shows, per node, what the credential patch would change in
// its machine config, built from the action's own change list (the documents and keys it writes,
// every value masked), beside the predicted decision; it never sends ApplyConfiguration (a dry run
// takes the node's apply lock and cancels a pending `--mode=try` rollback: docs/plan.md), so nothing
// on the node changes, and no text of machined's, nor any neighbour of the credential in the config
// (an extension's auth key, a mirror's TLS key), reaches a sink.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { NEW_CREDENTIAL, OLD_CREDENTIAL } from '../../sim/cluster.js';
import { SIM_CLUSTER_SECRET, SIM_MACHINE_TOKEN, SIM_MIRROR_TLS_KEY, SIM_TS_AUTHKEY } from '../../sim/talos/machineconfig.js';
import { act, byName, requireKubectl, startCluster } from './helpers.js';
import { scratchDir } from '../scratch.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

const TITLE = "<b>Machine config change (the action's own change list, every value masked):</b>";

/** stdout without the `::add-mask::` commands that hand the secrets to the runner's masking */
const withoutMasks = (stdout: string) =>
  stdout
    .split('\n')
    .filter((l) => !l.startsWith('::add-mask::'))
    .join('\n');

function detailsOf(summary: string, node: string): string {
  const start = summary.indexOf(`<details><summary>${node} — `);
  if (start < 0) throw new Error(`no details for ${node} in the summary`);
  return summary.slice(start, summary.indexOf('</details>', start));
}

describe('e2e: plan mode shows each node’s machine-config change from the change list', () => {
  it('the API path: the change list per node, values masked, no ApplyConfiguration at all, a pending try rollback left alone', async () => {
    c = await startCluster({ defaultNodes: false });
    // worker-1 has no credential document for the registry yet; its config ends with an extension's
    // ExtensionServiceConfig whose environment holds an auth key (every twin config does)
    c.addNode({ name: 'worker-1', role: 'worker', version: '1.14' });
    // worker-2 carries both forms (the document wins) and an operator's try-mode change still pending
    c.addNode({ name: 'worker-2', role: 'worker', credentialForm: 'both' });
    c.talos.applyInTryMode('worker-2', 'machine:\n  sysctls:\n    vm.max_map_count: "262144"\n', 600_000);
    // worker-3 already carries the credential in the only form it has
    c.addNode({ name: 'worker-3', role: 'worker', current: true, credentialForm: 'document' });
    const names = ['worker-1', 'worker-2', 'worker-3'];
    const texts = () => Object.fromEntries(names.map((n) => [n, c!.talos.node(n).machineConfig.text]));
    const before = texts();
    expect(before['worker-1']).toMatch(/kind: ExtensionServiceConfig\n[^]*TS_AUTHKEY=[^]*$/);

    const run = await act(c, { mode: 'plan' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result).toBe('planned');
    expect(Object.keys(byName(run)).sort()).toEqual(names);

    const w1 = detailsOf(run.summary, 'worker-1');
    expect(w1.indexOf(TITLE), 'after the predicted decision').toBeGreaterThan(w1.indexOf('</summary>'));
    expect(w1).toContain(
      `${TITLE}</p>\n<pre>RegistryAuthConfig/ghcr.io: added (username: ***, password: ***)\n  the patch gives this document\n` +
        'v1alpha1 machine.registries.config.ghcr.io.auth: replaced (username: *** unchanged, password: *** changed)\n' +
        '  the node carries this form for ghcr.io too: written with the new credential, so the old one is not left behind\n</pre>',
    );
    expect(w1).toContain('ghcr.io: Talos will read the new credential from RegistryAuthConfig/ghcr.io');
    const w2 = detailsOf(run.summary, 'worker-2');
    expect(w2).toContain('RegistryAuthConfig/ghcr.io: replaced (username: *** unchanged, password: *** changed)');
    expect(w2).toContain('v1alpha1 machine.registries.config.ghcr.io.auth: replaced (username: *** unchanged, password: *** changed)');
    expect(detailsOf(run.summary, 'worker-3')).toContain(`${TITLE} no change (the config already carries the credential`);

    // no text of machined's, and no neighbour of the credential, in any sink
    expect(run.summary).not.toMatch(/Dry run summary|Config diff|^[-+@]{3}/m);
    const secrets = {
      'the new password': NEW_CREDENTIAL.password,
      'the old password': OLD_CREDENTIAL.password,
      'the extension auth key': SIM_TS_AUTHKEY,
      'the mirror TLS key': SIM_MIRROR_TLS_KEY,
      'the machine token': SIM_MACHINE_TOKEN,
      'the cluster secret': SIM_CLUSTER_SECRET,
    };
    for (const [what, secret] of Object.entries(secrets)) {
      for (const [sink, text] of Object.entries({
        stdout: withoutMasks(run.stdout),
        stderr: run.stderr,
        summary: run.summary,
        outputs: JSON.stringify(run.outputs),
        state: JSON.stringify(run.state),
      }))
        expect(text.includes(secret), `${what} in ${sink}`).toBe(false);
    }
    // nothing sent to any node: no ApplyConfiguration, dry run or not; the try rollback still pending
    expect(c.talos.applyCalls()).toEqual([]);
    expect(c.talos.mutatingCommands()).toEqual([]);
    expect(c.kube.mutatingRequests()).toEqual([]);
    expect(c.talos.tryRollbackPending('worker-2')).toBe(true);
    expect(texts()).toEqual(before);
  });

  it('the CLI path says why no change list is shown, on every node', async () => {
    c = await startCluster({ cliPath: true });
    const run = await act(c, { mode: 'plan' });
    expect(run.exitCode, run.stdout).toBe(0);
    for (const name of Object.keys(byName(run)))
      expect(detailsOf(run.summary, name), name).toContain(
        `${TITLE} not shown — Talos is reached through talosctl (no client certificate in the talosconfig), which applies the patch with Talos&#39;s own merge`,
      );
    expect(c.talos.applyCalls()).toEqual([]);
    expect(c.talos.mutatingCommands()).toEqual([]);
  });

  it('a patch that is not a credential form says talosctl would apply it, with nothing sent', async () => {
    c = await startCluster();
    const patch = join(scratchDir('plan-diff-'), 'patch.yaml');
    writeFileSync(patch, readFileSync(c.writeAuthPatch(), 'utf8') + '---\nmachine:\n  sysctls:\n    vm.max_map_count: "262144"\n', {
      mode: 0o600,
    });
    const run = await act(c, { mode: 'plan', 'auth-patch': patch });
    expect(run.exitCode, run.stdout).toBe(0);
    for (const name of Object.keys(byName(run)))
      expect(detailsOf(run.summary, name), name).toContain(`${TITLE} not shown — talosctl would apply the patch (`);
    expect(c.talos.applyCalls()).toEqual([]);
    expect(c.talos.mutatingCommands()).toEqual([]);
  });
});
