// End to end: with a client certificate in the talosconfig the bundle reboots over the Talos API
// (MachineService.Reboot, then the boot id until it changes) and no talosctl reboot runs; a refused
// Reboot fails the node with the API's reason, a node that never comes back fails at ready-timeout;
// without a certificate talosctl still reboots.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { A, act, ann, byName, node, REVISION, requireKubectl, startCluster, verifiedRev } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

/** what talosctl itself ran (the API's mutations are not in `commands`) */
const talosctlReboots = (c: SimCluster) => c.talos.commands.filter((x) => x.command === 'reboot');
const apiReboots = (c: SimCluster, name: string) =>
  c.talos.mutatingCommands().filter((x) => x.command === 'reboot' && x.via === 'api' && x.nodes.includes(c.talos.node(name).ip));

describe('e2e: the reboot over the Talos API', () => {
  it('a node is rebooted through MachineService.Reboot, proven and released; talosctl never runs reboot', async () => {
    c = await startCluster({ defaultNodes: false });
    c.addNode({ name: 'worker-1', role: 'worker' });
    const bootBefore = c.talos.node('worker-1').bootID;
    const run = await act(c);
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.stdout).toMatch(/reboots through the API \(MachineService\.Reboot/);
    const d = byName(run)['worker-1'];
    expect(d.outcome).toBe('rebooted');
    expect(c.talos.node('worker-1').bootID).not.toBe(bootBefore);
    expect(apiReboots(c, 'worker-1').map((x) => x.exitCode)).toEqual([0]);
    expect(talosctlReboots(c)).toEqual([]);
    expect(verifiedRev(ann(c, 'worker-1'))).toBe(REVISION);
    expect(c.talos.imagePull.pull('worker-1', 'ghcr.io/acme/private:1').ok).toBe(true);
  });

  it('a Reboot refused with PermissionDenied fails the node with that reason; nothing is retried through talosctl', async () => {
    c = await startCluster({ defaultNodes: false });
    c.addNode({ name: 'worker-1', role: 'worker' });
    const bootBefore = c.talos.node('worker-1').bootID;
    c.talos.failNext(
      { command: 'reboot', node: 'worker-1' },
      { stderr: 'rpc error: code = PermissionDenied desc = not authorized\n', exitCode: 1 },
    );
    const run = await act(c);
    expect(run.exitCode).not.toBe(0);
    const d = byName(run)['worker-1'];
    expect(d.outcome, run.stdout).toBe('failed');
    expect(run.stdout).toMatch(/MachineService\/Reboot[^\n]*not authorized/);
    expect(c.talos.node('worker-1').bootID).toBe(bootBefore);
    expect(apiReboots(c, 'worker-1').map((x) => x.exitCode)).toEqual([7]);
    expect(talosctlReboots(c)).toEqual([]);
  });

  it('a node that goes down and never comes back fails at ready-timeout, left fenced; talosctl never runs reboot', async () => {
    c = await startCluster({ defaultNodes: false });
    c.addNode({ name: 'worker-1', role: 'worker' });
    c.talos.failNextReboot('worker-1', 'stays-down');
    const run = await act(c, { 'ready-timeout': '6s' });
    expect(run.exitCode).not.toBe(0);
    const d = byName(run)['worker-1'];
    expect(d.outcome, run.stdout).toBe('failed');
    expect(run.stdout).toMatch(/MachineService\/Reboot[^\n]*did not answer with a new boot id within 6(\.0)? ?s/);
    // the reboot was sent: the node stays cordoned under the claim for a person to look at
    expect(ann(c, 'worker-1')[A.owner]).toBeDefined();
    expect(ann(c, 'worker-1')[A.phase]).toBe('mutating');
    expect(node(c, 'worker-1').spec.unschedulable).toBe(true);
    expect(apiReboots(c, 'worker-1').map((x) => x.exitCode)).toEqual([0]);
    expect(talosctlReboots(c)).toEqual([]);
  });

  it('without a client certificate talosctl reboots, as before', async () => {
    c = await startCluster({ defaultNodes: false, cliPath: true });
    c.addNode({ name: 'worker-1', role: 'worker' });
    const run = await act(c);
    expect(run.exitCode, run.stdout).toBe(0);
    expect(byName(run)['worker-1'].outcome).toBe('rebooted');
    expect(talosctlReboots(c).map((x) => x.nodes)).toEqual([[c.talos.node('worker-1').ip]]);
    expect(c.talos.mutatingCommands().filter((x) => x.via === 'api')).toEqual([]);
  });
});
