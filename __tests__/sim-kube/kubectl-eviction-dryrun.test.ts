// A dry-run eviction (`dryRun=All`) through the real kubectl: the apiserver runs the whole eviction,
// the PDB check included, and answers as a real one would (201, or the 429 with the DisruptionBudget
// cause), but changes nothing (pkg/registry/core/pod/storage/eviction.go: checkAndDecrement returns
// before its UpdateStatus, the delete is a dry run). A real eviction afterwards still works.
import { beforeAll, describe, expect, it } from 'vitest';
import { KubeSim } from '../../sim/kube/index.js';
import { findKubectl } from './helpers.js';

beforeAll(() => {
  findKubectl();
});

const evictionBody = (name: string, dryRun: boolean) =>
  JSON.stringify({
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name, namespace: 'default' },
    ...(dryRun ? { deleteOptions: { dryRun: ['All'] } } : {}),
  });

/** `kubectl create --raw … -f -` with the body on stdin, as the action's adapter runs it. */
async function evict(sim: KubeSim, name: string, dryRun: boolean) {
  const { spawn } = await import('node:child_process');
  const path = `/api/v1/namespaces/default/pods/${name}/eviction${dryRun ? '?dryRun=All' : ''}`;
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const p = spawn(findKubectl(), ['create', '--raw', path, '-f', '-'], { env: { ...process.env, ...sim.env() } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += String(d)));
    p.stderr.on('data', (d) => (stderr += String(d)));
    p.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    p.stdin.end(evictionBody(name, dryRun));
  });
}

async function cluster(): Promise<KubeSim> {
  const sim = await KubeSim.start({ heartbeatMs: 500, taintDelayMs: 50 });
  sim.addNode({ name: 'w-1', ip: '10.0.0.11', role: 'worker' });
  sim.addPod({ name: 'web-5f6-abcde', nodeName: 'w-1', owner: { kind: 'ReplicaSet', name: 'web-5f6' }, labels: { app: 'web' } });
  sim.addPod({ name: 'api-7c8-fghij', nodeName: 'w-1', owner: { kind: 'ReplicaSet', name: 'api-7c8' }, labels: { app: 'api' } });
  return sim;
}

describe.concurrent('eviction with dryRun=All', () => {
  it('a policy/v1 PDB with an empty selector covers every pod of its namespace (eviction.go since 1.29, kubernetes#119732)', async () => {
    const sim = await cluster();
    try {
      sim.addPdb({ name: 'whole-namespace', selector: {}, disruptionsAllowed: 0 });
      const r = await evict(sim, 'api-7c8-fghij', true);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/TooManyRequests/);
      expect(sim.pods().map((p: any) => p.metadata.name)).toContain('api-7c8-fghij');
    } finally {
      await sim.stop();
    }
  });

  it('a PDB allowing nothing: the real 429 and its message, nothing changed; allowed later, still nothing changed', async () => {
    const sim = await cluster();
    try {
      sim.addPdb({ name: 'web-pdb', selector: { app: 'web' }, disruptionsAllowed: 0 });
      const pdbBefore = JSON.stringify(sim.pdb('default', 'web-pdb'));
      const r = await evict(sim, 'web-5f6-abcde', true);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe(
        "Error from server (TooManyRequests): Cannot evict pod as it would violate the pod's disruption budget.",
      );
      const req = sim.requests.find((q) => q.method === 'POST' && q.path.endsWith('/eviction'));
      expect(req?.status).toBe(429);
      expect(JSON.stringify(sim.pdb('default', 'web-pdb'))).toBe(pdbBefore);

      sim.setPdbAllowed('default', 'web-pdb', 1);
      const pdbAllowing = JSON.stringify(sim.pdb('default', 'web-pdb'));
      const ok = await evict(sim, 'web-5f6-abcde', true);
      expect(ok.code).toBe(0);
      expect(JSON.parse(ok.stdout)).toMatchObject({ kind: 'Status', status: 'Success' });
      const pod = sim.pods().find((p) => p.metadata.name === 'web-5f6-abcde');
      expect(pod.metadata.deletionTimestamp).toBeUndefined();
      expect(JSON.stringify(sim.pdb('default', 'web-pdb'))).toBe(pdbAllowing);
      expect(sim.pdb('default', 'web-pdb').status.disruptedPods).toBeUndefined();
    } finally {
      await sim.stop();
    }
  });

  it('a pod no PDB covers: 201, not deleted; the real eviction then deletes it and uses the budget', async () => {
    const sim = await cluster();
    try {
      const dry = await evict(sim, 'api-7c8-fghij', true);
      expect(dry.code).toBe(0);
      expect(sim.pods().find((p) => p.metadata.name === 'api-7c8-fghij').metadata.deletionTimestamp).toBeUndefined();

      sim.addPdb({ name: 'web-pdb', selector: { app: 'web' }, disruptionsAllowed: 1 });
      const real = await evict(sim, 'web-5f6-abcde', false);
      expect(real.code).toBe(0);
      const pod = sim.pods().find((p) => p.metadata.name === 'web-5f6-abcde');
      expect(pod === undefined || pod.metadata.deletionTimestamp !== undefined).toBe(true);
      expect(Object.keys(sim.pdb('default', 'web-pdb').status.disruptedPods ?? {})).toEqual(['web-5f6-abcde']);
    } finally {
      await sim.stop();
    }
  });

  it('the query alone (no dryRun in the body) is a dry run too', async () => {
    const sim = await cluster();
    try {
      const { spawn } = await import('node:child_process');
      const code = await new Promise<number>((resolve) => {
        const p = spawn(
          findKubectl(),
          ['create', '--raw', '/api/v1/namespaces/default/pods/api-7c8-fghij/eviction?dryRun=All', '-f', '-'],
          {
            env: { ...process.env, ...sim.env() },
          },
        );
        p.on('close', (c) => resolve(c ?? -1));
        p.stdin.end(JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'api-7c8-fghij' } }));
      });
      expect(code).toBe(0);
      expect(sim.pods().find((p) => p.metadata.name === 'api-7c8-fghij').metadata.deletionTimestamp).toBeUndefined();
    } finally {
      await sim.stop();
    }
  });
});
