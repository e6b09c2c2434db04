// End to end: `mode: plan` forecasts each planned reboot's drain through the bundle, the real kubectl
// and the twin: kubectl drain's own filters (a bare pod refused: the action never passes --force) and
// one dry-run eviction (`dryRun=All`) per pod it would evict, which a PDB allowing nothing refuses.
// A plan never changes anything: no pod evicted or deleted, no PDB status written.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { kubectl } from '../sim-kube/helpers.js';
import { act, byName, requireKubectl, startCluster } from './helpers.js';
import { scratchDir } from '../scratch.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

function detailsOf(summary: string, node: string): string {
  const start = summary.indexOf(`<details><summary>${node} — `);
  if (start < 0) throw new Error(`no details for ${node} in the summary`);
  return summary.slice(start, summary.indexOf('</details>', start));
}

describe('e2e: plan mode forecasts each drain with dry-run evictions', () => {
  it('a PDB allowing nothing and a bare pod are named per node; a healthy node would drain; nothing is mutated', async () => {
    c = await startCluster({ defaultNodes: false });
    for (const n of ['worker-1', 'worker-2', 'worker-3']) c.addNode({ name: n, role: 'worker' });
    // worker-1: a pod a PDB protects that allows no disruption
    c.kube.addPod({
      namespace: 'shop',
      name: 'db-0',
      nodeName: 'worker-1',
      owner: { kind: 'StatefulSet', name: 'db' },
      labels: { app: 'db' },
    });
    c.kube.addPdb({ namespace: 'shop', name: 'db', selector: { app: 'db' }, disruptionsAllowed: 0 });
    // worker-2: a bare pod (no controller), and an emptyDir pod (fine with --delete-emptydir-data)
    c.kube.addPod({ namespace: 'default', name: 'debug-shell', nodeName: 'worker-2' });
    c.kube.addPod({
      namespace: 'default',
      name: 'cache-1',
      nodeName: 'worker-2',
      owner: { kind: 'ReplicaSet', name: 'cache-7d4' },
      emptyDir: true,
    });
    // worker-3: healthy (a PDB that allows one, a DaemonSet pod drain leaves alone)
    c.kube.addPod({
      namespace: 'shop',
      name: 'web-1',
      nodeName: 'worker-3',
      owner: { kind: 'ReplicaSet', name: 'web-5f6' },
      labels: { app: 'web' },
    });
    c.kube.addPdb({ namespace: 'shop', name: 'web', selector: { app: 'web' }, disruptionsAllowed: 1 });
    for (const n of ['worker-1', 'worker-2', 'worker-3']) {
      c.kube.addPod({ namespace: 'kube-system', name: `cilium-${n}`, nodeName: n, owner: { kind: 'DaemonSet', name: 'cilium' } });
    }
    const pdbsBefore = JSON.stringify([c.kube.pdb('shop', 'db'), c.kube.pdb('shop', 'web')]);
    const podsBefore = JSON.stringify(c.kube.pods().map((p) => [p.metadata.name, p.metadata.uid, p.metadata.deletionTimestamp ?? null]));

    const run = await act(c, { mode: 'plan', reboot: 'always' });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(run.outputs.result).toBe('planned');
    // the settle prediction, judged by the gate's own rule on the pods' Ready conditions as kubectl printed them
    expect(run.stdout).toContain(
      'settle gate: the drains would wait for StatefulSet shop/db, ReplicaSet default/cache-7d4, ReplicaSet shop/web-5f6 to be available again',
    );
    const d = byName(run) as unknown as Record<string, { outcome: string; drainForecast?: any }>;
    expect(d['worker-1'].outcome).toBe('planned-reboot');

    expect(d['worker-1'].drainForecast).toEqual({
      ok: false,
      evictions: 1,
      blocked: [{ pod: 'shop/db-0', budgets: ['shop/db'], message: "Cannot evict pod as it would violate the pod's disruption budget." }],
      budgets: [{ pdb: 'shop/db', disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 }],
      refusals: [],
      errors: [],
      // maxUnavailable: 0 over its one healthy pod: apply would refuse the node before its claim (refused-drain.test.ts)
      unsatisfiable: {
        node: 'worker-1',
        blocking: [
          {
            case: 'max-unavailable-zero',
            budgets: ['shop/db'],
            spec: 'maxUnavailable: 0',
            status: { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 },
            pods: ['shop/db-0'],
          },
        ],
      },
    });
    expect(d['worker-2'].drainForecast).toEqual({
      ok: false,
      evictions: 1,
      blocked: [],
      budgets: [],
      refusals: [{ pod: 'default/debug-shell', reason: 'cannot delete Pods that declare no controller (use --force to override)' }],
      errors: [],
    });
    expect(d['worker-3'].drainForecast).toEqual({ ok: true, evictions: 1, blocked: [], budgets: [], refusals: [], errors: [] });

    expect(detailsOf(run.summary, 'worker-1')).toContain(
      'drain would be blocked now by PDB shop/db (allows 0 disruptions; 1 healthy, 1 needed): 1 pod shop/db-0',
    );
    expect(detailsOf(run.summary, 'worker-2')).toContain(
      'drain would refuse at once, evicting nothing: cannot delete Pods that declare no controller (use --force to override): default/debug-shell (the action never passes --force)',
    );
    expect(detailsOf(run.summary, 'worker-3')).toContain('drain would go through now: 1 pod to evict, every dry-run eviction allowed');

    // the dry runs went out through the real kubectl, one per pod drain would evict, every one a dry run
    const evictionPosts = c.kube.requests.filter((q) => q.method === 'POST' && q.path.endsWith('/eviction'));
    expect(evictionPosts.map((q) => q.path).sort()).toEqual([
      '/api/v1/namespaces/default/pods/cache-1/eviction',
      '/api/v1/namespaces/shop/pods/db-0/eviction',
      '/api/v1/namespaces/shop/pods/web-1/eviction',
    ]);
    // (kubectl adds the --request-timeout as `timeout=30s`)
    for (const q of evictionPosts) expect(new URLSearchParams(q.query).getAll('dryRun')).toEqual(['All']);
    expect(evictionPosts.map((q) => q.status).sort()).toEqual([201, 201, 429]);
    // nothing changed: no pod evicted or deleted, no PDB written, no node cordoned
    expect(c.kube.podEvents.filter((e) => e.type === 'evicted')).toEqual([]);
    expect(JSON.stringify(c.kube.pods().map((p) => [p.metadata.name, p.metadata.uid, p.metadata.deletionTimestamp ?? null]))).toBe(
      podsBefore,
    );
    expect(JSON.stringify([c.kube.pdb('shop', 'db'), c.kube.pdb('shop', 'web')])).toBe(pdbsBefore);
    // the dry-run evictions are the only requests a write verb carries
    expect(c.kube.mutatingRequests()).toEqual(evictionPosts);
  });

  it('a namespace-wide PDB (selector {}, as an operator writes it) covers every pod of its namespace and is named', async () => {
    c = await startCluster({ defaultNodes: false });
    c.addNode({ name: 'worker-1', role: 'worker' });
    c.kube.addPod({
      namespace: 'vault',
      name: 'vault-0',
      nodeName: 'worker-1',
      owner: { kind: 'StatefulSet', name: 'vault' },
      labels: { app: 'vault' },
    });
    // created through the API as stored: the disruption controller counts it (policy/v1), and the
    // eviction subresource honours it since Kubernetes 1.29
    const pdb = {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'everything', namespace: 'vault' },
      spec: { selector: {}, maxUnavailable: 0 },
    };
    const file = join(scratchDir('pdb-'), 'pdb.json');
    writeFileSync(file, JSON.stringify(pdb));
    const created = await kubectl(c.kube, ['create', '-f', file]);
    expect(created.code, created.stderr).toBe(0);
    await expect.poll(() => c!.kube.pdb('vault', 'everything')?.status?.currentHealthy).toBe(1);

    const run = await act(c, { mode: 'plan', reboot: 'always' });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    const d = byName(run) as unknown as Record<string, { drainForecast?: any }>;
    expect(d['worker-1'].drainForecast).toMatchObject({
      ok: false,
      blocked: [{ pod: 'vault/vault-0', budgets: ['vault/everything'] }],
      budgets: [{ pdb: 'vault/everything', disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 }],
    });
    expect(c.kube.pods().some((p) => p.metadata.name === 'vault-0' && !p.metadata.deletionTimestamp)).toBe(true);
  });
});
