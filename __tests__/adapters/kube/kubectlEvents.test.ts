// Kubectl.createEvents through the real kubectl against the twin: one process for a node's batch
// (a v1 List on stdin), Events that `kubectl describe node` and `kubectl get events` show, in order,
// and a refused create (RBAC without `create` on events) thrown as a classified ToolError.
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Kubectl } from '../../../src/adapters/kube/kubectl.js';
import { Runner } from '../../../src/adapters/exec.js';
import { ToolError } from '../../../src/core/errors.js';
import type { RolloutEvent } from '../../../src/core/events.js';
import { KubeSim } from '../../../sim/kube/index.js';
import { findKubectl, kubectl, kubectlJson } from '../../sim-kube/helpers.js';

let sim: KubeSim;
let runner: Runner;
let kube: Kubectl;

beforeAll(() => {
  findKubectl();
});
beforeEach(async () => {
  sim = await KubeSim.start({ heartbeatMs: 60_000 });
  sim.addNode({ name: 'w-1', ip: '10.0.0.11', role: 'worker' });
  runner = new Runner();
  kube = new Kubectl({ runner, kubeconfig: sim.kubeconfigPath });
});
afterEach(async () => {
  await sim.stop();
});

function nodeBatch(): RolloutEvent[] {
  const uid = sim.node('w-1').metadata.uid as string;
  const t0 = Date.now() - 60_000;
  const ev = (i: number, reason: RolloutEvent['reason'], message: string): RolloutEvent => ({
    about: { kind: 'Node', name: 'w-1', uid },
    reason,
    type: 'Normal',
    message,
    // two of them within the same second: the order must still hold
    at: new Date(t0 + i * 400).toISOString(),
  });
  return [
    ev(0, 'Claimed', 'cordoned and claimed'),
    ev(1, 'RebootSkipped', 'reboot skipped: containerd started 63s after the last config write'),
    ev(5, 'Released', 'released'),
  ];
}

describe('Kubectl.createEvents', () => {
  it('writes a batch in one kubectl process; describe node and get events show it in order', async () => {
    const commands: string[] = [];
    runner.onCommand((c) => commands.push(c.command));
    await kube.createEvents(nodeBatch());
    expect(commands).toHaveLength(1);
    expect(commands[0]).toMatch(/kubectl .*create --validate=false -f - -o name/);
    // one POST per item, into `default`
    const posts = sim.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/namespaces/default/events');
    expect(posts.map((r) => r.status)).toEqual([201, 201, 201]);

    const described = await kubectl(sim, ['describe', 'node', 'w-1']);
    expect(described.code, described.stderr).toBe(0);
    const lines = described.stdout
      .split('Events:')[1]!
      .split('\n')
      .filter((l) => /registry-auth-rollout/.test(l));
    expect(lines.map((l) => l.trim().split(/\s+/)[1])).toEqual(['Claimed', 'RebootSkipped', 'Released']);
    expect(lines[1]).toContain('reboot skipped: containerd started 63s after the last config write');

    const listed = await kubectl(sim, [
      'get',
      'events',
      '-n',
      'default',
      '--field-selector',
      'involvedObject.kind=Node,involvedObject.name=w-1',
    ]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/Normal\s+RebootSkipped\s+node\/w-1\s+reboot skipped/);
    const json = await kubectlJson(sim, ['get', 'events', '-n', 'default', '--field-selector', 'reason=Claimed']);
    expect(json.items).toHaveLength(1);
    expect(json.items[0]).toMatchObject({
      involvedObject: { kind: 'Node', name: 'w-1', uid: sim.node('w-1').metadata.uid },
      source: { component: 'registry-auth-rollout' },
      reportingComponent: 'registry-auth-rollout',
      count: 1,
      type: 'Normal',
    });
    expect(json.items[0].involvedObject.namespace).toBeUndefined();
  });

  it('an Event on the run Lease goes to its namespace', async () => {
    await kube.createEvents([
      {
        about: { kind: 'Lease', namespace: 'kube-system', name: 'registry-auth-rollout' },
        reason: 'RolloutSucceeded',
        type: 'Normal',
        message: 'the run ended processed (1 rebooted)',
        at: new Date().toISOString(),
      },
    ]);
    const json = await kubectlJson(sim, ['get', 'events', '-n', 'kube-system', '--field-selector', 'involvedObject.kind=Lease']);
    expect(json.items.map((e: any) => e.reason)).toEqual(['RolloutSucceeded']);
  });

  it('a refused create (403) is a ToolError of kind forbidden; nothing is stored', async () => {
    sim.failNext(
      { method: 'POST', path: /\/events$/, count: 10 },
      {
        status: 403,
        reason: 'Forbidden',
        message: 'events is forbidden: User "ci" cannot create resource "events" in API group "" in the namespace "default"',
      },
    );
    const err = await kube.createEvents(nodeBatch()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).kind).toBe('forbidden');
    expect((await kubectlJson(sim, ['get', 'events', '-A'])).items).toEqual([]);
  });

  it('an empty batch runs nothing', async () => {
    const commands: string[] = [];
    runner.onCommand((c) => commands.push(c.command));
    await kube.createEvents([]);
    expect(commands).toEqual([]);
  });
});
