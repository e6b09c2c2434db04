// End to end: `mode: plan` on the API path shows, per node, what the credential patch would change in
// its machine config (ApplyConfiguration's dry run, machined's own diff), beside the predicted
// decision, with every credential value masked; nothing is mutated and no machine config changes.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { NEW_CREDENTIAL, OLD_CREDENTIAL } from '../../sim/cluster.js';
import { SIM_CLUSTER_SECRET, SIM_MACHINE_TOKEN } from '../../sim/talos/machineconfig.js';
import { act, byName, requireKubectl, startCluster } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

const TITLE = '<b>Machine config change (ApplyConfiguration dry run):</b>';

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

describe('e2e: plan mode shows each node’s machine-config diff', () => {
  it('the API path: a masked diff per node beside the decision, nothing mutated, no config changed', async () => {
    c = await startCluster();
    const names = c.kube.nodes().map((n: { metadata: { name: string } }) => n.metadata.name);
    const configs = () => Object.fromEntries(names.map((n) => [n, JSON.stringify(c!.talos.node(n).machineConfig)]));
    const before = configs();
    const run = await act(c, { mode: 'plan' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result).toBe('planned');
    expect(Object.keys(byName(run)).sort()).toEqual([...names].sort());
    let diffs = 0;
    for (const name of names) {
      const d = detailsOf(run.summary, name);
      expect(d, name).toContain(TITLE);
      // after the predicted decision's reason
      expect(d.indexOf(TITLE), name).toBeGreaterThan(d.indexOf('</summary>'));
      if (d.includes(`${TITLE}</p>\n<pre>`)) {
        diffs++;
        expect(d, name).toMatch(
          /<pre>Dry run summary:\nApplied configuration without a reboot \(skipped in dry-run\)\.\nConfig diff:\n\n--- a\n\+\+\+ b\n@@ /,
        );
        expect(d, name).toContain('+password: ***');
      } else expect(d, name).toContain(`${TITLE} no change`);
    }
    expect(diffs).toBeGreaterThan(0);
    for (const secret of [NEW_CREDENTIAL.password, OLD_CREDENTIAL.password, SIM_MACHINE_TOKEN, SIM_CLUSTER_SECRET]) {
      for (const [sink, text] of Object.entries({
        stdout: withoutMasks(run.stdout),
        summary: run.summary,
        outputs: JSON.stringify(run.outputs),
      }))
        expect(text.includes(secret), `${secret} in ${sink}`).toBe(false);
    }
    // one dry run per node, none of them a mutation; every machine config as it was
    expect(c.talos.applyCalls().every((x) => x.dryRun)).toBe(true);
    expect(c.talos.applyCalls().length).toBe(diffs);
    expect(c.talos.mutatingCommands()).toEqual([]);
    expect(c.kube.mutatingRequests()).toEqual([]);
    expect(configs()).toEqual(before);
  });

  it('the CLI path says why no diff is shown, on every node', async () => {
    c = await startCluster({ cliPath: true });
    const run = await act(c, { mode: 'plan' });
    expect(run.exitCode, run.stdout).toBe(0);
    for (const name of Object.keys(byName(run)))
      expect(detailsOf(run.summary, name), name).toContain(
        `${TITLE} not shown — Talos is reached through talosctl (no client certificate in the talosconfig)`,
      );
    expect(c.talos.applyCalls()).toEqual([]);
    expect(c.talos.mutatingCommands()).toEqual([]);
  });

  it('a patch that is not a credential form says talosctl would apply it, with no dry run', async () => {
    c = await startCluster();
    const patch = join(mkdtempSync(join(tmpdir(), 'plan-diff-')), 'patch.yaml');
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
