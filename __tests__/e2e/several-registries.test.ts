// End to end: several registries (ghcr.io and a mirror whose host has a port) through the bundle: one
// patch naming both, two steps each rolling one, a changed verify-image, and the old single-key marker;
// a patch that would also write a host the run does not roll, refused before anything is touched.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MIRROR, MIRROR_NEW_CREDENTIAL, NEW_CREDENTIAL, REGISTRY, type SimCluster } from '../../sim/cluster.js';
import {
  A,
  act,
  ann,
  assertNoSecret,
  byName,
  drainRequests,
  readReport,
  reboots,
  REVISION,
  requireKubectl,
  startCluster,
  verifiedRev,
} from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

const AT = '2026-12-01T00:00:00.000Z';
/** entries as a release writes them, proven by the evidence (src/rules/marker.ts) */
const marker = (o: Record<string, { revision: string; image?: string }>) =>
  JSON.stringify(Object.fromEntries(Object.entries(o).map(([h, p]) => [h, { ...p, at: AT, proof: 'evidence' }])));

describe('e2e: several registries', () => {
  it('one patch naming both: each stale node rolled once for the hosts it is stale for, then clean', async () => {
    c = await startCluster({ defaultNodes: false });
    // worker-1: verified for ghcr.io, its config and containerd already on the mirror's new credential
    c.addNode({
      name: 'worker-1',
      role: 'worker',
      current: true,
      mirror: 'new',
      annotations: { [A.verified]: marker({ [REGISTRY]: { revision: REVISION } }) },
    });
    // worker-2: verified for neither, old credentials for both
    c.addNode({ name: 'worker-2', role: 'worker', mirror: 'old' });
    const patch = c.writeAuthPatchOf({ [REGISTRY]: NEW_CREDENTIAL, [MIRROR]: MIRROR_NEW_CREDENTIAL }, 'both.yaml');
    const run = await act(c, { 'auth-patch': patch });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result).toBe('processed');
    const d = byName(run) as Record<string, ReturnType<typeof byName>[string] & { hosts?: Array<{ host: string }> }>;
    expect(d['worker-1'].hosts?.map((h) => h.host)).toEqual([MIRROR]);
    expect(d['worker-1'].outcome, d['worker-1'].reason).toBe('reboot-skipped');
    expect(d['worker-2'].hosts?.map((h) => h.host)).toEqual([REGISTRY, MIRROR]);
    expect(d['worker-2'].outcome, d['worker-2'].reason).toBe('rebooted');
    // one drain and one reboot for both hosts, none on the node the evidence skipped
    expect(reboots(c, 'worker-2')).toHaveLength(1);
    expect(d['worker-2'].steps.filter((s) => s.name === 'drain').length, JSON.stringify(d['worker-2'].steps.map((s) => s.name))).toBe(1);
    expect(reboots(c, 'worker-1')).toEqual([]);
    expect(drainRequests(c, 'worker-1')).toEqual([]);
    for (const n of ['worker-1', 'worker-2']) {
      expect([verifiedRev(ann(c, n)), verifiedRev(ann(c, n), MIRROR)], n).toEqual([REVISION, REVISION]);
      expect(c.talos.imagePull.pull(n, `${MIRROR}/acme/private:1`).ok, n).toBe(true);
    }
    // the summary says which host each node was rolled for
    expect(run.summary).toContain(`<b>Hosts:</b> ${MIRROR}`);
    // the run's hosts are a list in the report file and in the summary's heading, each its own
    expect(readReport(run.outputs['report-file']).registry).toEqual([REGISTRY, MIRROR]);
    expect(run.summary).toContain(`<h2>Registry auth rollout: <code>${REGISTRY}</code>, <code>${MIRROR}</code> revision`);

    c.kube.requests.length = 0;
    const again = await act(c, { 'auth-patch': patch });
    expect(again.outputs.result).toBe('clean');
    expect(c.kube.mutatingRequests().filter((r) => r.path.startsWith('/api/v1/nodes'))).toEqual([]);
  });

  it('two steps with one registry each keep each other’s proof: the first one’s rerun is clean, nothing claimed', async () => {
    c = await startCluster({ defaultNodes: false });
    // already on both new credentials (each step's evidence skips the reboot): what is judged is the markers
    c.addNode({ name: 'worker-1', role: 'worker', current: true, mirror: 'new' });
    const ghcr = c.writeAuthPatchOf({ [REGISTRY]: NEW_CREDENTIAL }, 'ghcr.yaml');
    const mirror = c.writeAuthPatchOf({ [MIRROR]: MIRROR_NEW_CREDENTIAL }, 'mirror.yaml');
    const first = await act(c, { 'auth-patch': ghcr });
    expect(first.outputs.result, first.stdout).toBe('processed');
    const second = await act(c, { 'auth-patch': mirror, revision: 'mirror-1' });
    expect(second.outputs.result, second.stdout).toBe('processed');
    expect([verifiedRev(ann(c, 'worker-1')), verifiedRev(ann(c, 'worker-1'), MIRROR)]).toEqual([REVISION, 'mirror-1']);
    expect(byName(second)['worker-1'].reason).toMatch(/desired credential for mirror\.local:5000$/);

    c.kube.requests.length = 0;
    const rerun = await act(c, { 'auth-patch': ghcr });
    expect(rerun.outputs.result).toBe('clean');
    expect(c.kube.mutatingRequests().filter((r) => r.path.startsWith('/api/v1/nodes'))).toEqual([]);
    expect(ann(c, 'worker-1')[A.owner]).toBeUndefined();
  });

  it('a changed verify-image re-proves without a reboot; a node carrying the old single-key marker is not rolled, and the next run proves it', async () => {
    c = await startCluster({ defaultNodes: false });
    const proven = marker({ [REGISTRY]: { revision: REVISION, image: 'ghcr.io/acme/private:1' } });
    c.addNode({ name: 'worker-1', role: 'worker', current: true, annotations: { [A.verified]: proven } });
    // written by the action before the per-host markers: the revision alone
    c.addNode({ name: 'worker-2', role: 'worker', current: true, annotations: { [A.verifiedRevision]: REVISION } });
    const run = await act(c, { 'verify-image': 'ghcr.io/acme/private:2', 'verify-namespace': 'default' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result).toBe('processed');
    const d = byName(run);
    expect(Object.keys(d)).toEqual(['worker-1']);
    expect(d['worker-1'].outcome, d['worker-1'].reason).toBe('reboot-skipped');
    expect(d['worker-1'].steps.some((s) => s.ok && s.name.includes('ghcr.io/acme/private:2'))).toBe(true);
    expect(reboots(c, 'worker-1')).toEqual([]);
    expect(JSON.parse(ann(c, 'worker-1')[A.verified])[REGISTRY]).toMatchObject({ revision: REVISION, image: 'ghcr.io/acme/private:2' });
    // the upgrade re-rolls nothing: the old marker proves ghcr.io, untouched
    expect(drainRequests(c, 'worker-2')).toEqual([]);
    expect(c.kube.mutatingRequests().filter((r) => r.path === '/api/v1/nodes/worker-2')).toEqual([]);
    expect(ann(c, 'worker-2')[A.verifiedRevision]).toBe(REVISION);
    // but it does not say how worker-2 was proven: not revocable, named; the next run (nothing to roll)
    // proves it by a pull, with no claim, and writes the map with how
    expect(run.outputs['old-credential-revocable']).toBe('false');
    expect(readReport(run.outputs['report-file']).oldCredential!.holders.map((h) => [h.node, h.kind])).toEqual([
      ['worker-2', 'proof-undecided'],
    ]);
    const next = await act(c, { 'verify-image': 'ghcr.io/acme/private:2', 'verify-namespace': 'default' });
    expect(next.outputs.result).toBe('clean');
    expect(next.outputs['old-credential-revocable'], next.summary).toBe('true');
    expect(drainRequests(c, 'worker-2')).toEqual([]);
    expect(ann(c, 'worker-2')[A.verifiedRevision]).toBeUndefined();
    expect(JSON.parse(ann(c, 'worker-2')[A.verified])[REGISTRY]).toMatchObject({
      revision: REVISION,
      proof: 'verify-image',
      image: 'ghcr.io/acme/private:2',
    });
  });

  // Only the rolled registries are written (docs/registries.md): a patch that also writes the credential
  // of a host the run does not roll would put that value on every node rolled, judged by neither the
  // evidence nor the proof, while the host's marker entry still said verified. Refused while the inputs
  // are read: no node listed, no claim, no Lease, no Talos call.
  it.each([
    {
      what: 'a patch naming a host outside registry (the API path’s form)',
      patch: (cl: SimCluster) => cl.writeAuthPatchOf({ [MIRROR]: MIRROR_NEW_CREDENTIAL, [REGISTRY]: NEW_CREDENTIAL }, 'both.yaml'),
      inputs: { registry: MIRROR },
      secrets: [NEW_CREDENTIAL.password, MIRROR_NEW_CREDENTIAL.password],
      message: `input "registry": registry: ${MIRROR} does not roll ${REGISTRY}, whose credential the auth patch also writes`,
      fix: `Add ${REGISTRY} to registry, or remove it from the auth patch`,
    },
    {
      what: 'a patch left to talosctl deleting another host’s document (registry left empty)',
      patch: (cl: SimCluster) => {
        const path = join(cl.dir, 'delete-ghcr.yaml');
        const [u, p] = [MIRROR_NEW_CREDENTIAL.username, MIRROR_NEW_CREDENTIAL.password];
        const text = `apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ${MIRROR}\nusername: ${u}\npassword: ${p}\n---\napiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ${REGISTRY}\n$patch: delete\n`;
        writeFileSync(path, text, { mode: 0o600 });
        return path;
      },
      inputs: {} as Record<string, string>,
      secrets: [MIRROR_NEW_CREDENTIAL.password],
      message: `input "auth-patch": removes the credential of ${REGISTRY}`,
      fix: 'remove it from the auth patch',
    },
  ])('$what: refused before anything is touched, naming the host and the fix', async ({ patch, inputs, secrets, message, fix }) => {
    // talosctl on PATH: the talosctl form is applied, not refused for want of talosctl
    c = await startCluster({ defaultNodes: false, talosctl: true });
    c.addNode({ name: 'worker-1', role: 'worker', mirror: 'old' });
    c.addNode({ name: 'worker-2', role: 'worker', mirror: 'old' });
    const run = await act(c, { 'auth-patch': patch(c), ...inputs });
    expect(run.exitCode, run.stdout).toBe(1);
    const failure = run.annotations.find((a) => a.kind === 'error')?.message ?? '';
    expect(failure).toContain(message);
    expect(failure).toContain(fix);
    // the patch's secrets registered before the refusal, and shown nowhere
    for (const secret of secrets) assertNoSecret(run, secret);
    // nothing touched: not even the node list was read; no Lease, no claim, no Talos call
    expect(c.kube.requests.filter((r) => r.path.startsWith('/api/v1/nodes'))).toEqual([]);
    expect(c.kube.mutatingRequests()).toEqual([]);
    expect(c.kube.lease('kube-system', 'registry-auth-rollout')).toBeUndefined();
    expect(c.talos.apiCalls).toEqual([]);
    expect(c.talos.mutatingCommands()).toEqual([]);
    for (const n of ['worker-1', 'worker-2']) expect(ann(c, n)[A.owner], n).toBeUndefined();
  });
});
