// End to end: the Talos API endpoint must present apid's certificate for the address dialed (or for
// `talos-server-name`), checked as talosctl checks it. A certificate of the cluster CA issued for
// another address, or a dual-use one (a pre-1.3 talosconfig certificate: serverAuth + clientAuth,
// no SAN), stops the run before anything is mutated, naming the endpoint and the reason, and the
// reads do not fall back to talosctl.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { A, act, ann, byName, requireKubectl, startCluster } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

/** Nothing of the run reached the cluster: no write to the apiserver, no talosctl, no API call answered. */
function expectUntouched(c: SimCluster): void {
  expect(c.kube.mutatingRequests()).toEqual([]);
  expect(c.talos.commands).toEqual([]);
  expect(c.talos.apiCalls).toEqual([]);
  for (const n of ['cp-1', 'worker-1']) {
    expect(ann(c, n)[A.owner]).toBeUndefined();
    expect(c.kube.node(n).spec.unschedulable).toBeFalsy();
  }
}

function failureLine(stdout: string): string {
  return stdout.split('\n').find((l) => l.startsWith('::error::')) ?? '';
}

describe('e2e: the Talos API server identity', () => {
  it('a cluster-CA certificate issued for another address fails the run before any mutation, naming the endpoint and the reason', async () => {
    c = await startCluster({ apiCertificate: 'wrong-san' });
    const run = await act(c);
    expect(run.exitCode).not.toBe(0);
    expect(run.outputs.result).toBe('failed');
    const line = failureLine(run.stdout);
    expect(line).toContain(`the Talos API at ${c.talos.endpoint} presented a certificate that is not a valid server certificate for it`);
    expect(line).toMatch(/it is valid for 10\.255\.255\.1, not 127\.0\.0\.1/);
    expect(run.stdout).not.toMatch(/reading Talos through talosctl/);
    expectUntouched(c);
  });

  it('a dual-use certificate (serverAuth + clientAuth, no SAN: a pre-1.3 talosconfig) is refused likewise', async () => {
    c = await startCluster({ apiCertificate: 'dual-use' });
    const run = await act(c);
    expect(run.exitCode).not.toBe(0);
    expect(run.outputs.result).toBe('failed');
    const line = failureLine(run.stdout);
    expect(line).toContain(`the Talos API at ${c.talos.endpoint} presented a certificate`);
    expect(line).toMatch(/it is a client certificate too \(ExtKeyUsage serverAuth and clientAuth/);
    expect(line).toMatch(/no IP SANs/);
    expect(run.stdout).not.toMatch(/reading Talos through talosctl/);
    expectUntouched(c);
  });

  it('talos-server-name naming one of the SANs lets the run read over the API through an address the certificate does not name', async () => {
    c = await startCluster({ apiCertificate: 'wrong-san', defaultNodes: false });
    c.addNode({ name: 'worker-1', role: 'worker', current: true, bootedAgoMs: 120_000, bootGapMs: 1200 });
    const run = await act(c, { 'talos-server-name': 'talos-sim-apid.cluster.local' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.stdout).toMatch(
      /reading Talos through its API at 127\.0\.0\.1:\d+ \(.*server certificate checked for talos-sim-apid\.cluster\.local\)/,
    );
    expect(byName(run)['worker-1'].outcome).toBe('reboot-skipped');
    expect(c.talos.apiCalls.length).toBeGreaterThan(0);
  });

  it('talos-server-name naming something the certificate does not fails the run before any mutation', async () => {
    c = await startCluster();
    const run = await act(c, { 'talos-server-name': 'apid.example.com' });
    expect(run.exitCode).not.toBe(0);
    const line = failureLine(run.stdout);
    expect(line).toContain(
      `the Talos API at ${c.talos.endpoint} presented a certificate that is not a valid server certificate for it (checked for the name apid.example.com)`,
    );
    expect(line).toMatch(/it is valid for talos-sim-apid, talos-sim-apid\.cluster\.local, not apid\.example\.com/);
    expectUntouched(c);
  });

  it('a certificate refused on every reconnection mid-run (never re-issued) stops the node (given back, Talos untouched) and the run, naming the endpoint', async () => {
    c = await startCluster({ defaultNodes: false });
    c.addNode({ name: 'worker-1', role: 'worker', current: true, bootedAgoMs: 120_000, bootGapMs: 1200 });
    c.addNode({ name: 'worker-2', role: 'worker', current: true, bootedAgoMs: 120_000, bootGapMs: 1200 });
    // worker-1's claim: from then on the endpoint answers with a certificate for other addresses
    c.kube.beforeWrite({ method: 'PATCH', path: /^\/api\/v1\/nodes\/worker-1$/, once: true }, () =>
      c!.talos.presentApiCertificate('wrong-san'),
    );
    const run = await act(c);
    expect(run.exitCode).not.toBe(0);
    expect(run.outputs.result).toBe('failed');
    const d = byName(run);
    expect(d['worker-1'].outcome).toBe('failed');
    expect(d['worker-1'].reason).toContain(`the Talos API at ${c.talos.endpoint} presented a certificate`);
    expect(d['worker-1'].reason).toMatch(/it is valid for 10\.255\.255\.1, not 127\.0\.0\.1/);
    expect(d['worker-2']).toBeUndefined();
    // given back as found, nothing on Talos changed, no talosctl read in place of the API
    expect(ann(c, 'worker-1')[A.owner]).toBeUndefined();
    expect(c.kube.node('worker-1').spec.unschedulable).toBeFalsy();
    expect(c.talos.commands).toEqual([]);
  });

  // Apid's certificate is re-issued when the machine's addresses change. A refusal
  // on a reconnection fails that connection only; the calls dial again within their deadlines.
  // Re-issued after the client's second dial that met the refused certificate (a second or two at its 1 s
  // reconnect interval): counted, not timed, so a loaded machine's late timer cannot stretch the refused
  // window past the reads' deadlines and turn a skipped reboot into a (safe) reboot.
  it('the address moving at a claim and the certificate re-issued after two refused dials: the run goes on, every node done', async () => {
    c = await startCluster({ defaultNodes: false });
    c.addNode({ name: 'worker-1', role: 'worker', current: true, bootedAgoMs: 120_000, bootGapMs: 1200 });
    c.addNode({ name: 'worker-2', role: 'worker', current: true, bootedAgoMs: 120_000, bootGapMs: 1200 });
    const dialsBefore = { n: 0 };
    c.kube.beforeWrite({ method: 'PATCH', path: /^\/api\/v1\/nodes\/worker-1$/, once: true }, () => {
      dialsBefore.n = c!.talos.apiConnections;
      c!.talos.moveApiAddress({ dials: 2 });
    });
    const run = await act(c);
    // the client did meet the refused certificate (two dials), and dialled again once it was re-issued
    expect(c.talos.apiConnections - dialsBefore.n).toBeGreaterThanOrEqual(3);
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run);
    expect(d['worker-1'].outcome, d['worker-1'].reason).toBe('reboot-skipped');
    expect(d['worker-2'].outcome, d['worker-2'].reason).toBe('reboot-skipped');
    expect(c.talos.commands).toEqual([]);
    expect(run.stdout).not.toMatch(/presented a certificate/);
  });

  // The VIP's certificate re-issued after the client's second refused dial, as above: counted, not a
  // timer a loaded machine can stretch.
  it('the address moving while the node holding it reboots (a VIP), re-issued after two refused dials: rebooted, proven, released; the next node rolled too', async () => {
    c = await startCluster({ defaultNodes: false });
    c.addNode({ name: 'cp-1', role: 'control-plane' });
    c.addNode({ name: 'cp-2', role: 'control-plane' });
    c.addNode({ name: 'cp-3', role: 'control-plane' });
    const down = c.kube.nodeDown.bind(c.kube);
    let moved = false;
    const dialsBefore = { n: 0 };
    c.kube.nodeDown = (name: string) => {
      down(name);
      if (name === 'cp-1' && !moved) {
        moved = true;
        dialsBefore.n = c!.talos.apiConnections;
        c!.talos.moveApiAddress({ dials: 2 });
      }
    };
    const run = await act(c, { reboot: 'always', nodes: 'cp-1,cp-2' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(moved).toBe(true);
    // the client met the refused certificate (two dials), and dialled again once it was re-issued
    expect(c.talos.apiConnections - dialsBefore.n).toBeGreaterThanOrEqual(3);
    const d = byName(run);
    for (const n of ['cp-1', 'cp-2']) {
      expect(d[n].outcome, d[n].reason).toBe('rebooted');
      expect(ann(c, n)[A.owner]).toBeUndefined();
    }
    expect(c.talos.apiCalls.filter((x) => x.method === '/machine.MachineService/Reboot')).toHaveLength(2);
    expect(c.talos.commands).toEqual([]);
  });
});
