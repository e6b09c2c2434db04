// End to end through the bundle: a health gate's value is a typed description, never the content of a
// cluster object (docs/gates.md "What a gate's value says"). A CEL gate whose expression returns a
// string field, a PersistentVolume whose status message and a VolumeAttachment whose attach error
// carry secret-looking text: the text reaches no sink (log, summary, annotations, outputs, saved
// state, report file, Events), apply or plan; "returned a string, not a boolean" and the rule that
// failed appear instead. In the second case the string and the object's name contain the registry
// password registered for masking: the string is not quoted, and the name leaves masked.
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NEW_CREDENTIAL, type SimCluster } from '../../sim/cluster.js';
import { exampleDbClusters, R } from '../../sim/kube/resources.js';
import type { ActionRun } from '../../runner/runAction.js';
import { act, requireKubectl, startCluster } from './helpers.js';
import { addWorkers } from './parallelWorkers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

const DB = exampleDbClusters;
const GATE = (field: string) => `- name: db-conn
  kind: DbCluster
  group: example.com
  namespace: db
  expression: self.status.${field}
`;

/** Every text a run leaves behind, by sink: what the runner shows and keeps, the report file, the cluster's Events. */
function sinks(cluster: SimCluster, run: ActionRun): Record<string, string> {
  const report = run.outputs['report-file'];
  return {
    // `::add-mask::` is how a secret is registered with the runner, which swallows the line
    stdout: run.stdout
      .split('\n')
      .filter((l) => !l.startsWith('::add-mask::'))
      .join('\n'),
    stderr: run.stderr,
    summary: run.summary,
    outputs: JSON.stringify(run.outputs),
    annotations: JSON.stringify(run.annotations),
    state: JSON.stringify(run.state),
    'report file': report ? readFileSync(report, 'utf8') : '',
    events: JSON.stringify(cluster.kube.events()),
  };
}

function leaks(cluster: SimCluster, run: ActionRun, secrets: Record<string, string>): string[] {
  return Object.entries(sinks(cluster, run)).flatMap(([sink, text]) =>
    Object.entries(secrets)
      .filter(([, value]) => text.includes(value))
      .map(([what]) => `${what} in ${sink}`),
  );
}

/** The report file's gate entries (plan) and gate holds (apply). */
function reportOf(run: ActionRun): any {
  return JSON.parse(readFileSync(run.outputs['report-file']!, 'utf8'));
}

describe('e2e: a gate value is a typed description, never cluster content', () => {
  it('a string-valued CEL gate, a failed PV and an attach error with secret-looking text: none of it leaves, apply or plan', async () => {
    c = await startCluster({ defaultNodes: false });
    addWorkers(c, ['w-1']);
    c.kube.installCrd(DB);
    const SECRETS = {
      'the connection string password': 'hX7qT2vN9wLp4Rz',
      "the PV's status message": 'AQD3pVdlq9kGIhAAf0cE7Z+J1w==',
      "the attach error's message": 'vA7-Kq2mZ9xR4tW1',
    };
    c.kube.createObject(DB, 'db', {
      apiVersion: 'example.com/v1',
      kind: 'DbCluster',
      metadata: { name: 'pg', namespace: 'db' },
      spec: {},
      status: { connection: `postgres://app:${SECRETS['the connection string password']}@pg-primary.db.svc:5432/app` },
    });
    c.kube.createObject(R.persistentvolumes, '', {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pv-ceph' },
      spec: {},
      status: { phase: 'Failed', message: `Recycle failed: rbd: map failed: key=${SECRETS["the PV's status message"]}` },
    });
    c.kube.createObject(R.volumeattachments, '', {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'VolumeAttachment',
      metadata: { name: 'csi-0a1b' },
      spec: { attacher: 'csi.example.com', nodeName: 'w-1', source: { persistentVolumeName: 'pv-ceph' } },
      status: {
        attached: false,
        attachError: {
          time: '2026-11-30T11:00:00Z',
          message: `rpc error: code = Internal desc = token=${SECRETS["the attach error's message"]}`,
        },
      },
    });

    const apply = await act(c, { 'health-gates': GATE('connection'), 'gate-timeout': '2s' });
    expect(apply.exitCode, apply.stdout).toBe(0);
    expect(apply.outputs.result).toBe('partial');
    expect(leaks(c, apply, SECRETS)).toEqual([]);
    const said = 'db-conn: DbCluster db/pg: returned a string, not a boolean';
    const notice = apply.annotations.find((a) => a.kind === 'notice')?.message ?? '';
    expect(notice).toContain(said);
    expect(notice).toContain('storage/persistentvolumes: PersistentVolume pv-ceph: phase Failed');
    expect(notice).toContain('storage/volumeattachments: VolumeAttachment csi-0a1b: status.attachError is set');
    expect(apply.stdout).toContain(`wait for storage/persistentvolumes: PersistentVolume pv-ceph: phase Failed;`);
    expect(apply.summary).toContain('returned a string, not a boolean');
    const hold = reportOf(apply).timeline.holds.find((h: any) => h.kind === 'gate');
    expect(hold.detail).toContain(said);

    const plan = await act(c, { mode: 'plan', 'health-gates': GATE('connection') });
    expect(plan.exitCode, plan.stdout).toBe(0);
    expect(leaks(c, plan, SECRETS)).toEqual([]);
    expect(plan.stdout).toContain('health gate db-conn: does not hold (DbCluster db/pg: returned a string, not a boolean)');
    expect(plan.summary).toContain('returned a string, not a boolean');
    const gate = reportOf(plan).gates.find((g: any) => g.name === 'db-conn');
    // the words, and the same as data: the object and the type of what the expression returned
    expect(gate).toMatchObject({
      holds: false,
      value: 'DbCluster db/pg: returned a string, not a boolean',
      selected: 1,
      failing: { count: 1, object: { kind: 'DbCluster', namespace: 'db', name: 'pg' }, finding: { type: 'string' } },
    });
    expect(reportOf(plan).gates.find((g: any) => g.name === 'storage/volumeattachments').failing.finding).toEqual({
      type: 'storage',
      rule: 'attach-error',
    });
  });

  it('a string holding the registered registry password, on an object whose name holds it too: the string is not quoted, the name leaves masked', async () => {
    c = await startCluster({ defaultNodes: false });
    addWorkers(c, ['w-1']);
    c.kube.installCrd(DB);
    const password = NEW_CREDENTIAL.password;
    c.kube.createObject(DB, 'db', {
      apiVersion: 'example.com/v1',
      kind: 'DbCluster',
      metadata: { name: `pg-${password}`, namespace: 'db' },
      spec: {},
      status: { pullSecret: `ghcr.io ${NEW_CREDENTIAL.username}:${password} (rotated)` },
    });
    const SECRETS = { 'the registry password': password, 'the rest of the string': '(rotated)' };

    const apply = await act(c, { 'health-gates': GATE('pullSecret'), 'gate-timeout': '2s' });
    expect(apply.exitCode, apply.stdout).toBe(0);
    expect(apply.outputs.result).toBe('partial');
    expect(apply.stdout).toContain(`::add-mask::${password}`);
    expect(leaks(c, apply, SECRETS)).toEqual([]);
    const said = 'db-conn: DbCluster db/pg-***: returned a string, not a boolean';
    expect(apply.annotations.find((a) => a.kind === 'notice')?.message).toContain(said);
    expect(apply.stdout).toContain(said);
    expect(reportOf(apply).timeline.holds.find((h: any) => h.kind === 'gate').detail).toContain(said);

    const plan = await act(c, { mode: 'plan', 'health-gates': GATE('pullSecret') });
    expect(plan.exitCode, plan.stdout).toBe(0);
    expect(leaks(c, plan, SECRETS)).toEqual([]);
    expect(plan.summary).toContain('DbCluster db/pg-***: returned a string, not a boolean');
    expect(reportOf(plan).gates.find((g: any) => g.name === 'db-conn')).toMatchObject({
      value: 'DbCluster db/pg-***: returned a string, not a boolean',
      failing: { object: { name: 'pg-***' }, finding: { type: 'string' } },
    });
  });
});
