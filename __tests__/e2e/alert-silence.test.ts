// End to end: the Alertmanager silence through the bundle (docs/alert-silence.md), against the
// Alertmanager twin (sim/alertmanager/server.ts) and the kube twin. A roll with alertmanager-url
// creates one silence per matcher line before its first claim (the twins' request logs, one clock),
// extends it in place while it rolls (a 15 s tail: an extension every 5 s, and two reboots on the twin's
// own timings outlast that; a 3 s tail lapsed under load, when the action's timer stalled past it), and expires it at the
// end; the token only ever in an Authorization header over https, masked everywhere else; an
// Alertmanager that cannot be reached changes nothing but a warning; a run with nothing to roll asks
// it nothing.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { AlertmanagerSim } from '../../sim/alertmanager/server.js';
import { act, assertNoSecret, fromAction, requireKubectl, startCluster } from './helpers.js';
import { scratchDir } from '../scratch.js';

const TOKEN = 'am-bearer-7c1f0e92d4';
let c: SimCluster | undefined;
let am: AlertmanagerSim | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  await am?.stop();
  c = am = undefined;
});

/** two stale workers to roll, one already verified */
async function cluster(): Promise<SimCluster> {
  const cl = await startCluster({ defaultNodes: false });
  cl.addNode({ name: 'worker-1', role: 'worker' });
  cl.addNode({ name: 'worker-2', role: 'worker' });
  return cl;
}

/** the action's first claim: its first write to a Node */
function firstClaimAt(cl: SimCluster): number {
  const claim = cl.kube.requests.find((r) => fromAction(r) && r.method === 'PATCH' && r.path.startsWith('/api/v1/nodes/'));
  if (!claim) throw new Error('the run claimed no node');
  return claim.at;
}

const posts = (s: AlertmanagerSim) => s.requests.filter((r) => r.method === 'POST');

describe('e2e: the Alertmanager silence', () => {
  it('one silence created before the first claim, extended in place while the roll runs, expired at the end; its id in the summary and the report; the token masked everywhere', async () => {
    c = await cluster();
    am = await AlertmanagerSim.start({ tls: true, token: TOKEN });
    const dir = scratchDir('am-e2e-');
    const caFile = join(dir, 'am-ca.pem');
    writeFileSync(caFile, am.caPem!);
    const run = await act(c, {
      'alertmanager-url': am.url,
      'alertmanager-token': TOKEN,
      'alertmanager-ca-file': caFile,
      'alertmanager-matchers': 'node=~"$NODES"',
      'alertmanager-silence-tail': '15s',
    });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result).toBe('processed');
    expect(run.outputs.rebooted).toBe('2');

    // created once, before the first claim
    // $NODES: the rolled nodes' names and InternalIPs, quoted for a regex, sorted
    const nodes = ['worker-1', 'worker-2']
      .flatMap((n) => [n, c!.talos.node(n).ip as string])
      .sort()
      .map((v) => v.replaceAll('.', '\\.'))
      .join('|');
    const [create, ...extensions] = posts(am);
    const id = create.silenceID!;
    expect(create.body).toMatchObject({
      matchers: [{ name: 'node', value: nodes, isRegex: true, isEqual: true }],
      createdBy: 'talos-registry-auth-rollout',
    });
    expect((create.body as { id?: string }).id).toBeUndefined();
    expect(create.at).toBeLessThanOrEqual(firstClaimAt(c));
    // extended in place: each a POST carrying the id, answered with the same id
    expect(extensions.length).toBeGreaterThan(0);
    for (const x of extensions) {
      expect((x.body as { id: string }).id).toBe(id);
      expect(x.silenceID).toBe(id);
    }
    expect(new Set(posts(am).map((r) => r.silenceID))).toEqual(new Set([id]));
    // expired at the end, after the last node's end
    const deletes = am.requests.filter((r) => r.method === 'DELETE');
    expect(deletes.map((r) => [r.path, r.status])).toEqual([[`/api/v2/silence/${id}`, 200]]);
    expect(am.state(am.silences.get(id)!)).toBe('expired');
    expect(am.silences.size).toBe(1);
    const lastNodeWrite = Math.max(
      ...c.kube.requests.filter((r) => fromAction(r) && r.method === 'PATCH' && r.path.startsWith('/api/v1/nodes/')).map((r) => r.at),
    );
    expect(deletes[0].at).toBeGreaterThanOrEqual(lastNodeWrite);

    // the token: in every request's Authorization header, and nowhere the action writes
    expect(am.requests.every((r) => r.authorization === 'expected')).toBe(true);
    assertNoSecret(run, TOKEN);
    const reportText = readFileSync(run.outputs['report-file']!, 'utf8');
    expect(reportText).not.toContain(TOKEN);
    expect(JSON.stringify(run.state ?? {})).not.toContain(TOKEN);
    expect(run.summary).toContain(id);
    expect(JSON.parse(reportText).silence).toEqual({
      alertmanager: am.url,
      silences: [{ id, matchers: `node=~${JSON.stringify(nodes)}`, state: 'expired' }],
      warnings: [],
    });
    expect(run.stdout).not.toContain('::warning title=Alertmanager silence');
  });

  it('an Alertmanager that cannot be reached changes nothing but a warning; a run with nothing to roll asks it nothing', async () => {
    c = await cluster();
    am = await AlertmanagerSim.start();
    am.unreachable = true;
    const run = await act(c, { 'alertmanager-url': am.url, 'alertmanager-silence-tail': '3s' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result).toBe('processed');
    expect(run.outputs.rebooted).toBe('2');
    // the two default silences tried once each, and nothing after (nothing created: nothing to extend or expire)
    expect(am.requests.map((r) => [r.method, r.status])).toEqual([
      ['POST', undefined],
      ['POST', undefined],
    ]);
    expect(am.silences.size).toBe(0);
    expect(run.stdout).toMatch(
      /::warning title=Alertmanager silence::Alertmanager silence: the silence node=~.* was not created: POST http:\/\/127\.0\.0\.1:\d+\/api\/v2\/silences: /,
    );
    const report = JSON.parse(readFileSync(run.outputs['report-file']!, 'utf8'));
    expect(report.silence.silences.map((s: { state: string }) => s.state)).toEqual(['not-created', 'not-created']);
    expect(report.silence.warnings).toHaveLength(2);

    // converged now: a run with nothing to roll creates no silence (the twin answers again, and is not asked)
    am.unreachable = false;
    const before = am.requests.length;
    const again = await act(c, { 'alertmanager-url': am.url });
    expect(again.outputs.result).toBe('clean');
    expect(am.requests.length).toBe(before);
    expect(JSON.parse(readFileSync(again.outputs['report-file']!, 'utf8')).silence).toBeUndefined();
  });
});
