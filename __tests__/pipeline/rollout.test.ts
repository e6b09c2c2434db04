import { describe, expect, it } from 'vitest';
import { ServerIdentityError, ToolError } from '../../src/core/errors.js';
import { holderRenewsWhileWatched, keys, makeCluster, NEW, OWNER, provenMarker, roll, verifiedRev } from './harness.js';

describe('rollout: the whole pipeline on fakes', () => {
  it('reboots a node whose containerd holds the old credential and skips one that booted with the new one', async () => {
    const c = makeCluster([{ name: 'w-old' }, { name: 'w-new', current: true }]);
    const res = await roll(c);
    expect(res.result).toBe('processed');
    const byNode = Object.fromEntries(res.records.map((r) => [r.node, r]));
    expect(byNode['w-old'].outcome).toBe('rebooted');
    expect(byNode['w-new'].outcome).toBe('reboot-skipped');
    expect(c.talos.mutatingCalls()).toEqual(['patchMachineConfig 10.0.0.11', 'patchMachineConfig 10.0.0.10', 'reboot 10.0.0.10']);
    expect(c.kube.calls.filter((x) => x.method === 'drain').map((x) => x.name)).toEqual(['w-old']);
    for (const n of ['w-old', 'w-new']) {
      const s = c.kube.state(n);
      expect(verifiedRev(s)).toBe('rev-2');
      expect(s.annotations[keys.owner]).toBeUndefined();
      expect(s.annotations[keys.phase]).toBeUndefined();
      expect(s.annotations[keys.wasCordoned]).toBeUndefined();
      expect(s.unschedulable).toBe(false);
    }
    expect(byNode['w-old'].proof?.verdict).toBe('skip');
    // One batched `talosctl version` for the pass serves every evidence reading.
    expect(c.talos.calls.filter((x) => x.method === 'version')).toEqual([{ method: 'version', addresses: ['10.0.0.11', '10.0.0.10'] }]);
  });

  it('orders workers by name, then control planes by name', async () => {
    const c = makeCluster([
      { name: 'cp-b', role: 'control-plane', current: true },
      { name: 'w-b', current: true },
      { name: 'cp-a', role: 'control-plane', current: true },
      { name: 'w-a', current: true },
      { name: 'cp-c', role: 'control-plane', current: true },
    ]);
    const res = await roll(c);
    expect(res.records.map((r) => r.node)).toEqual(['w-a', 'w-b', 'cp-a', 'cp-b', 'cp-c']);
  });

  it('returns clean when every node already verified the revision', async () => {
    const c = makeCluster([{ name: 'w1', annotations: { [keys.verified]: provenMarker('rev-2') } }]);
    const res = await roll(c);
    expect(res.result).toBe('clean');
    expect(c.kube.mutatingCalls()).toEqual([]);
  });

  it.each([
    [
      'a status heartbeat',
      (o: any) => {
        o.status.conditions[0].lastHeartbeatTime = '2026-11-30T10:00:05Z';
      },
    ],
    [
      'a label',
      (o: any) => {
        o.metadata.labels['team'] = 'x';
      },
    ],
    [
      'someone else’s annotation',
      (o: any) => {
        o.metadata.annotations = { ...o.metadata.annotations, 'other/thing': 'y' };
      },
    ],
  ])('an unrelated write between the read and the claim (%s) does not even cause a retry', async (_what, write) => {
    const c = makeCluster([{ name: 'w1', current: true, annotations: { 'x/y': 'z' } }]);
    let injected = false;
    c.kube.beforePatch = (name) => {
      if (!injected) {
        injected = true;
        c.kube.mutate(name, write);
      }
    };
    const rvBefore = c.kube.raw('w1').metadata.resourceVersion;
    const res = await roll(c);
    expect(injected).toBe(true);
    expect(res.result).toBe('processed');
    expect(res.records[0].claim).toEqual({ attempts: 1, conflicts: [] });
    // The old one-shot claim tested this resourceVersion; the write above changed it.
    expect(c.kube.raw('w1').metadata.resourceVersion).not.toBe(rvBefore);
  });

  it('a first-attempt 422 on a benign change (the cordon mirror taint moved) is retried and the roll proceeds', async () => {
    const c = makeCluster([
      {
        name: 'w1',
        unschedulable: true,
        taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: '2026-11-30T09:00:00Z' }],
        current: true,
      },
    ]);
    let n = 0;
    c.kube.beforePatch = (name, ops) => {
      if (n++ === 0 && ops.some((o) => o.path === '/spec/taints')) {
        // The lifecycle controller re-wrote its mirror taint with a new timeAdded.
        c.kube.mutate(name, (o) => {
          o.spec.taints = [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: '2026-11-30T10:00:01Z' }];
        });
      }
    };
    const res = await roll(c);
    expect(res.result).toBe('processed');
    expect(res.records[0].claim?.attempts).toBe(2);
    expect(res.records[0].claim?.conflicts.join(' ')).toMatch(/unschedulable/);
    // The pre-existing cordon survives the roll.
    expect(c.kube.state('w1').unschedulable).toBe(true);
  });

  it('a persistent benign change exhausts claim-attempts, refuses and never drains', async () => {
    const c = makeCluster([
      {
        name: 'w1',
        unschedulable: true,
        taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: '2026-11-30T09:00:00Z' }],
      },
    ]);
    let t = 0;
    c.kube.beforePatch = (name, ops) => {
      if (ops.some((o) => o.path.includes('owner') || o.path === '/metadata/annotations')) {
        c.kube.mutate(name, (o) => {
          o.spec.taints = [
            {
              key: 'node.kubernetes.io/unschedulable',
              effect: 'NoSchedule',
              timeAdded: `2026-11-30T10:00:${String(++t).padStart(2, '0')}Z`,
            },
          ];
        });
      }
    };
    const res = await roll(c, { claimAttempts: 3 });
    expect(res.result).toBe('failed');
    expect(res.records[0].outcome).toBe('refused');
    expect(res.records[0].reason).toMatch(/did not land in 3 attempts/);
    expect(c.kube.calls.some((x) => x.method === 'drain')).toBe(false);
    expect(c.talos.mutatingCalls()).toEqual([]);
    expect(c.kube.state('w1').annotations[keys.owner]).toBeUndefined();
  });

  it('a concurrent cordon refuses, never drains and leaves the node as the other actor set it', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2' }]);
    c.kube.beforePatch = (name) => {
      if (name === 'w1' && !c.kube.raw('w1').spec.unschedulable)
        c.kube.mutate(name, (o) => {
          o.spec.unschedulable = true;
        });
    };
    const res = await roll(c);
    expect(res.result).toBe('failed');
    expect(res.records[0]).toMatchObject({ node: 'w1', outcome: 'refused' });
    expect(res.records[0].reason).toMatch(/unschedulable/);
    expect(res.notReached).toEqual(['w2']);
    expect(c.kube.calls.some((x) => x.method === 'drain')).toBe(false);
    expect(c.talos.mutatingCalls()).toEqual([]);
    const s = c.kube.state('w1');
    expect(s.unschedulable).toBe(true);
    expect(s.annotations[keys.owner]).toBeUndefined();
  });

  it('another owner claiming at the same moment refuses, naming the holder', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.kube.beforePatch = (name) => {
      if (!c.kube.raw(name).metadata.annotations?.[keys.owner]) {
        c.kube.mutate(name, (o) => {
          o.metadata.annotations = { ...o.metadata.annotations, [keys.owner]: 'other/repo/runs/9/attempts/1/ffff' };
        });
      }
    };
    const res = await roll(c);
    expect(res.records[0].outcome).toBe('refused');
    expect(res.records[0].reason).toContain('other/repo/runs/9/attempts/1/ffff');
    expect(c.kube.state('w1').annotations[keys.owner]).toBe('other/repo/runs/9/attempts/1/ffff');
  });

  it('a residual claim in the inventory fails before any mutation', async () => {
    const c = makeCluster([{ name: 'w1', annotations: { [keys.owner]: 'other/repo/runs/9/attempts/1/ffff' } }, { name: 'w2' }]);
    await expect(roll(c)).rejects.toThrow(/w1/);
    expect(c.kube.mutatingCalls()).toEqual([]);
    expect(c.talos.mutatingCalls()).toEqual([]);
  });

  it('a node replaced between the inventory and the claim is refused', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const orig = c.kube.getNode.bind(c.kube);
    let first = true;
    c.kube.getNode = async (name) => {
      if (first) {
        first = false;
        c.kube.replace(name);
      }
      return orig(name);
    };
    const res = await roll(c);
    expect(res.records[0].outcome).toBe('refused');
    expect(res.records[0].reason).toMatch(/uid/);
    expect(c.kube.calls.filter((x) => x.method === 'patchNode' || x.method === 'drain')).toEqual([]);
    expect(c.talos.mutatingCalls()).toEqual([]);
  });

  it('a pre-existing cordon survives a roll that reboots the node', async () => {
    const c = makeCluster([{ name: 'w1', unschedulable: true }]);
    const res = await roll(c);
    expect(res.records[0].outcome).toBe('rebooted');
    const s = c.kube.state('w1');
    expect(s.unschedulable).toBe(true);
    expect(verifiedRev(s)).toBe('rev-2');
    expect(s.annotations[keys.wasCordoned]).toBeUndefined();
    // and the record says why it stays cordoned (the summary's row and details show it)
    expect(res.records[0].cordonKept).toMatch(/cordoned before this run claimed it/);
  });

  it('a node the release uncordons records no kept cordon', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const res = await roll(c);
    expect(res.records[0].outcome).toBe('rebooted');
    expect(c.kube.state('w1').unschedulable).toBe(false);
    expect(res.records[0].cordonKept).toBeUndefined();
  });

  it('a drain failure restores schedulability, releases without verified-revision and fails', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2' }]);
    c.kube.drainError = new ToolError({
      tool: 'kubectl',
      command: 'kubectl drain w1',
      kind: 'timeout',
      exitCode: 1,
      stderr: 'global timeout reached: 60s',
      node: 'w1',
    });
    const res = await roll(c);
    expect(res.result).toBe('failed');
    expect(res.records[0].outcome).toBe('failed');
    expect(res.records[0].reason).toMatch(/drain failed/);
    expect(c.talos.mutatingCalls()).toEqual(['patchMachineConfig 10.0.0.10']);
    const s = c.kube.state('w1');
    expect(s.unschedulable).toBe(false);
    expect(s.annotations[keys.owner]).toBeUndefined();
    expect(verifiedRev(s)).toBeUndefined();
    expect(res.notReached).toEqual(['w2']);
  });

  it('refuses a control-plane reboot when a peer’s etcd reports an alarm, and releases the node', async () => {
    const c = makeCluster([
      { name: 'cp1', role: 'control-plane' },
      { name: 'cp2', role: 'control-plane', current: true },
      { name: 'cp3', role: 'control-plane', current: true },
    ]);
    c.talos.nodes.get('10.0.0.12')!.etcd = { alarm: 'NOSPACE' };
    const res = await roll(c, { nodes: ['cp1'] });
    expect(res.records[0]).toMatchObject({ node: 'cp1', outcome: 'refused' });
    expect(res.records[0].reason).toMatch(/quorum/);
    expect(c.kube.calls.some((x) => x.method === 'drain')).toBe(false);
    expect(c.talos.mutatingCalls()).toEqual(['patchMachineConfig 10.0.0.10']);
    expect(c.kube.state('cp1').unschedulable).toBe(false);
  });

  it('refuses a control-plane reboot when etcd lists a voter that no Node accounts for, naming it', async () => {
    const c = makeCluster([
      { name: 'cp1', role: 'control-plane' },
      { name: 'cp2', role: 'control-plane', current: true },
      { name: 'cp3', role: 'control-plane', current: true },
    ]);
    c.talos.extraMembers = [
      { id: '5e1f00d0c0ffee01', name: 'cp0', peerUrls: ['https://10.0.0.9:2380'], clientUrls: ['https://10.0.0.9:2379'], learner: false },
    ];
    const res = await roll(c, { nodes: ['cp1'] });
    expect(res.records[0]).toMatchObject({ node: 'cp1', outcome: 'refused' });
    expect(res.records[0].reason).toContain(
      'etcd voter 5e1f00d0c0ffee01 (name "cp0", peer URL https://10.0.0.9:2380) is not accounted for',
    );
    expect(res.records[0].reason).toContain('talosctl -n 10.0.0.11 etcd remove-member 5e1f00d0c0ffee01');
    expect(c.kube.calls.some((x) => x.method === 'drain')).toBe(false);
    expect(c.talos.mutatingCalls()).toEqual(['patchMachineConfig 10.0.0.10']);
    // every peer's copy of the list, every peer's status and alarms; only the status of the target
    const reads = c.talos.calls.filter((x) => x.method.startsWith('etcd')).map((x) => `${x.method} ${x.addresses.join(',')}`);
    expect(reads.sort()).toEqual(
      [
        'etcdStatus 10.0.0.10',
        ...['10.0.0.11', '10.0.0.12'].flatMap((a) => [`etcdStatus ${a}`, `etcdAlarms ${a}`, `etcdMembers ${a}`]),
      ].sort(),
    );
  });

  it('a learner without a Node does not block a control-plane reboot', async () => {
    const c = makeCluster([
      { name: 'cp1', role: 'control-plane' },
      { name: 'cp2', role: 'control-plane', current: true },
      { name: 'cp3', role: 'control-plane', current: true },
    ]);
    c.talos.extraMembers = [
      { id: '5e1f00d0c0ffee02', name: 'cp4', peerUrls: ['https://10.0.0.9:2380'], clientUrls: ['https://10.0.0.9:2379'], learner: true },
    ];
    const res = await roll(c, { nodes: ['cp1'] });
    expect(res.records[0].outcome).toBe('rebooted');
  });

  it('reboots a control plane when every peer is healthy', async () => {
    const c = makeCluster([
      { name: 'cp1', role: 'control-plane' },
      { name: 'cp2', role: 'control-plane', current: true },
      { name: 'cp3', role: 'control-plane', current: true },
    ]);
    const res = await roll(c, { nodes: ['cp1'] });
    expect(res.records[0].outcome).toBe('rebooted');
  });

  it('plan mode makes no mutating call and reports the evidence', async () => {
    const c = makeCluster([{ name: 'w-old' }, { name: 'w-new', current: true }, { name: 'cp1', role: 'control-plane' }]);
    const res = await roll(c, { mode: 'plan' });
    expect(res.result).toBe('planned');
    expect(c.kube.mutatingCalls()).toEqual([]);
    expect(c.talos.mutatingCalls()).toEqual([]);
    expect(Object.fromEntries(res.records.map((r) => [r.node, r.outcome]))).toEqual({
      'w-old': 'planned-reboot',
      'w-new': 'planned-skip',
      cp1: 'planned-reboot',
    });
    // the reads are batched: one service call for every node
    expect(c.talos.calls.filter((x) => x.method === 'criService')).toEqual([
      { method: 'criService', addresses: ['10.0.0.11', '10.0.0.10', '10.0.0.12'] },
    ]);
  });

  it('reboot: always reboots even a node with proof', async () => {
    const c = makeCluster([{ name: 'w1', current: true }]);
    const res = await roll(c, { reboot: 'always' });
    expect(res.records[0].outcome).toBe('rebooted');
  });

  it('on Talos 1.14 the patch makes cri restart by itself: no drain, no reboot, proven by the new start', async () => {
    const c = makeCluster([{ name: 'w1', version: 'v1.14.0' }]);
    const res = await roll(c);
    expect(res.records[0].outcome).toBe('reboot-skipped');
    expect(res.records[0].reason).toMatch(/Talos restarted cri/);
    expect(c.kube.calls.some((x) => x.method === 'drain')).toBe(false);
    expect(c.talos.mutatingCalls()).toEqual(['patchMachineConfig 10.0.0.10']);
  });

  it('on Talos 1.14 the write lands after the patch returned, while the evidence is read: the containerd that ran before the patch is never the proof', async () => {
    const c = makeCluster([{ name: 'w1', version: 'v1.14.0' }]);
    // the write (and the restart after it) lands right before the first content read after the patch answers
    c.talos.patchWriteLandsOn = 'readAuth';
    const res = await roll(c);
    const r = res.records[0];
    expect(r.outcome, r.reason).toBe('reboot-skipped');
    expect(r.reason).toMatch(/^Talos restarted cri after the patch: containerd PID 1993 started/);
    expect(r.proof?.values.launchBeforePatch?.pid).toBe(1893);
    const wait = r.steps.find((st) => st.name.startsWith('wait for Talos to restart cri'))!;
    expect(wait.detail).toMatch(/^skip: containerd PID 1993/);
    expect(c.kube.calls.some((x) => x.method === 'drain')).toBe(false);
  });

  it('on Talos 1.14 a reading before the patch that placed no containerd launch: rebooted without waiting, and the step says why', async () => {
    const c = makeCluster([{ name: 'w1', version: 'v1.14.0' }]);
    const read = c.talos.criService.bind(c.talos);
    let first = true;
    c.talos.criService = async (a: string[]) => {
      const m = await read(a);
      // the start event pushed out of the history before the patch
      for (const v of m.values()) if (first && v.ok) v.value.events = v.value.events.filter((e) => !/started with PID/.test(e.message));
      first = false;
      return m;
    };
    const res = await roll(c);
    const r = res.records[0];
    expect(r.outcome).toBe('rebooted');
    const wait = r.steps.find((st) => st.name.startsWith('wait for Talos to restart cri'))!;
    expect(wait.name).toBe('wait for Talos to restart cri (not waited)');
    expect(wait.detail).toMatch(/placed no containerd launch/);
    // the reading before the patch and the proof after the reboot: no polls in between
    expect(c.talos.calls.filter((x) => x.method === 'criService')).toHaveLength(2);
  });

  it('verify-image failing leaves the node cordoned and claimed with phase=mutating', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.kube.pull = () => ({ ok: false, reason: '401 Unauthorized' });
    const res = await roll(c, { verifyImage: 'ghcr.io/acme/private:1' });
    expect(res.records[0].outcome).toBe('failed');
    expect(res.records[0].reason).toMatch(/could not pull.*401/);
    expect(res.records[0].nextStep).toMatch(/kubectl .*patch node w1 --type=json/);
    const s = c.kube.state('w1');
    expect(s.unschedulable).toBe(true);
    expect(s.annotations[keys.owner]).toBe(OWNER);
    expect(s.annotations[keys.phase]).toBe('mutating');
    expect(c.kube.podCount()).toBe(0);
  });

  it('verify-image refuses a pod that admission gave imagePullSecrets', async () => {
    const c = makeCluster([{ name: 'w1', current: true }]);
    c.kube.injectPullSecrets = true;
    const res = await roll(c, { verifyImage: 'ghcr.io/acme/private:1' });
    expect(res.records[0].outcome).toBe('failed');
    expect(res.records[0].reason).toMatch(/imagePullSecrets/);
  });

  it('a failed credential patch releases the node (nothing was drained) and fails', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.talos.patchFails = 'rpc error: code = Unavailable';
    const res = await roll(c);
    expect(res.records[0].outcome).toBe('failed');
    const s = c.kube.state('w1');
    expect(s.unschedulable).toBe(false);
    expect(s.annotations[keys.owner]).toBeUndefined();
  });

  it('the desired credential is never part of any record', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2', current: true }]);
    const res = await roll(c, { mode: 'plan' });
    expect(JSON.stringify(res)).not.toContain(NEW.password);
  });
});

describe('rollout: the run Lease', () => {
  it('takes the Lease before the first mutation and releases it at the end', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const res = await roll(c);
    expect(res.result).toBe('processed');
    const firstMutation = c.kube.calls.findIndex((x) => ['patchNode', 'drain'].includes(x.method));
    const acquire = c.kube.calls.findIndex((x) => x.method === 'createLease');
    expect(acquire).toBeGreaterThanOrEqual(0);
    expect(acquire).toBeLessThan(firstMutation);
    expect((await c.kube.getLease('kube-system', 'registry-auth-rollout'))?.holderIdentity).toBe('');
  });

  it('refuses before any mutation while another run holds it (it renews it while watched, whatever its times say), naming the holder', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    await c.kube.createLease('kube-system', 'registry-auth-rollout', {
      holderIdentity: 'acme/infra/runs/7/attempts/1/beef',
      leaseDurationSeconds: 120,
      renewTime: '2020-01-01T00:00:00.000000Z',
    });
    holderRenewsWhileWatched(c.kube);
    await expect(roll(c)).rejects.toThrow(/acme\/infra\/runs\/7\/attempts\/1\/beef[\s\S]*github.com\/acme\/infra\/actions\/runs\/7/);
    expect(c.kube.calls.filter((x) => x.method === 'patchNode')).toEqual([]);
    expect(c.talos.mutatingCalls()).toEqual([]);
  });

  it('a Lease stolen mid-run stops the run before its next mutation', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2' }]);
    // Another run takes the Lease while w1 is being drained; the next renewal notices.
    // eslint-disable-next-line prefer-const -- the drain stub reads it; it is built after the stub
    let lockRef: any;
    c.kube.drain = async (name) => {
      c.kube.calls.push({ method: 'drain', name });
      await c.kube.patchLease('kube-system', 'registry-auth-rollout', [
        { op: 'replace', path: '/spec/holderIdentity', value: 'thief/repo/runs/1/attempts/1/0000' },
      ]);
      await lockRef.tick();
    };
    const { RunLock } = await import('../../src/pipeline/runLock.js');
    lockRef = new RunLock({ kube: c.kube, namespace: 'kube-system', name: 'registry-auth-rollout', owner: OWNER, clock: c.clock });
    const res = await roll(c, {}, { lock: lockRef });
    expect(res.result).toBe('failed');
    expect(res.records[0].reason).toMatch(/Lease/);
    expect(c.talos.mutatingCalls()).toEqual(['patchMachineConfig 10.0.0.10']);
    expect(res.notReached).toEqual(['w2']);
  });
});

describe('rollout: transport failures and a cluster that changes', () => {
  const transport = (what: string) =>
    new ToolError({ tool: 'kubectl', command: what, kind: 'transport', exitCode: 1, stderr: 'Unable to connect to the server: EOF' });

  it('a drain cut off by the network is retried once after /readyz answers, under the same claim', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    let drains = 0;
    c.kube.drain = async (name) => {
      c.kube.calls.push({ method: 'drain', name });
      if (++drains === 1) throw transport('kubectl drain w1');
    };
    const res = await roll(c);
    expect(res.result).toBe('processed');
    expect(drains).toBe(2);
    expect(c.kube.calls.some((x) => x.method === 'readyz')).toBe(true);
    expect(res.records[0].steps.map((s) => s.name)).toContain('drain (retry after a transport failure)');
  });

  it('a drain cut off twice fails and restores the node', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.kube.drain = async (name) => {
      c.kube.calls.push({ method: 'drain', name });
      throw transport('kubectl drain w1');
    };
    const res = await roll(c);
    expect(res.result).toBe('failed');
    expect(c.kube.calls.filter((x) => x.method === 'drain')).toHaveLength(2);
    expect(c.kube.state('w1').unschedulable).toBe(false);
  });

  it('a PDB timeout is never retried', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.kube.drainError = new ToolError({
      tool: 'kubectl',
      command: 'kubectl drain w1',
      kind: 'timeout',
      exitCode: 1,
      stderr: 'global timeout reached: 60s',
    });
    await roll(c);
    expect(c.kube.calls.filter((x) => x.method === 'drain')).toHaveLength(1);
  });

  it('a release whose response is lost in transit is confirmed by a re-read and not sent again', async () => {
    const c = makeCluster([{ name: 'w1', current: true }]);
    const orig = c.kube.patchNode.bind(c.kube);
    c.kube.patchNode = async (name, ops) => {
      const r = await orig(name, ops);
      if (ops.some((o) => o.op === 'remove' && o.path.endsWith('owner'))) throw transport('kubectl patch node w1');
      return r;
    };
    const res = await roll(c);
    expect(res.result).toBe('processed');
    const s = c.kube.state('w1');
    expect(verifiedRev(s)).toBe('rev-2');
    expect(s.annotations[keys.owner]).toBeUndefined();
  });

  it('a node the autoscaler adds mid-roll is rolled before the run ends; none is rolled twice', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2', current: true }]);
    let added = false;
    c.kube.drain = async (name) => {
      c.kube.calls.push({ method: 'drain', name });
      if (!added) {
        added = true;
        c.kube.addNode({ name: 'w3', ip: '10.0.0.99' });
        c.talos.add({ ...structuredClone(c.talos.nodes.get('10.0.0.11')!), name: 'w3', address: '10.0.0.99' });
      }
    };
    const res = await roll(c, {}, { relistPauseMs: 1000 });
    expect(res.result).toBe('processed');
    expect(res.records.map((r) => r.node)).toEqual(['w1', 'w2', 'w3']);
    expect(verifiedRev(c.kube.state('w3'))).toBe('rev-2');
  });

  it('a node replaced after the claim (before the credential patch) stops the roll without touching Talos', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const orig = c.kube.patchNode.bind(c.kube);
    c.kube.patchNode = async (name, ops) => {
      const r = await orig(name, ops);
      if (ops.some((o) => o.op === 'add' && o.path.endsWith('phase') && o.value === 'mutating')) c.kube.replace(name);
      return r;
    };
    const res = await roll(c);
    expect(res.result).toBe('failed');
    expect(res.records[0].reason, JSON.stringify(res.records[0].steps)).toMatch(/uid/);
    expect(c.talos.mutatingCalls()).toEqual([]);
  });
});

describe('rollout: evidence reads that break', () => {
  it('a `talosctl read` that throws makes the evidence fail (reboot), it does not hang the plan', async () => {
    const c = makeCluster([
      { name: 'w1', current: true },
      { name: 'w2', current: true },
    ]);
    c.talos.readAuth = async (address) => {
      if (address === '10.0.0.10') throw new Error('talosctl read: killed');
      return { ok: true, value: { path: '/etc/cri/conf.d/cri.toml', exists: false, auth: {} } };
    };
    const res = await roll(c, { mode: 'plan' });
    expect(res.records.find((r) => r.node === 'w1')?.outcome).toBe('planned-reboot');
    expect(res.records.find((r) => r.node === 'w1')?.reason).toMatch(/killed|read/);
  });
});

describe('rollout: a Talos API server whose certificate is refused', () => {
  // The API adapter throws ServerIdentityError when the endpoint's certificate is not apid's for it
  // (src/adapters/talos/api/connection.ts). Unlike a failed reading (→ reboot) it stops the node and the run.
  const refused = () => new ServerIdentityError('10.0.0.99:50000', '10.0.0.99', ['it is valid for 10.255.255.1, not 10.0.0.99']);

  it('at the version prefetch: the run fails before any claim or Talos mutation', async () => {
    const c = makeCluster([{ name: 'w1', current: true }]);
    c.talos.version = async () => {
      throw refused();
    };
    const res = await roll(c);
    expect(res.result).toBe('failed');
    expect(res.error?.message).toMatch(
      /^the Talos API at 10\.0\.0\.99:50000 presented a certificate .*not 10\.0\.0\.99; no node was processed/,
    );
    expect(c.talos.mutatingCalls()).toEqual([]);
    expect(c.kube.state('w1').annotations[keys.owner]).toBeUndefined();
  });

  it('at a file read of the evidence: the node is given back unpatched and not rebooted, the run fails naming the endpoint', async () => {
    const c = makeCluster([
      { name: 'w1', current: true },
      { name: 'w2', current: true },
    ]);
    c.talos.readAuth = async () => {
      throw refused();
    };
    const res = await roll(c);
    expect(res.result).toBe('failed');
    const w1 = res.records.find((r) => r.node === 'w1')!;
    expect(w1.outcome).toBe('failed');
    expect(w1.reason).toMatch(/the Talos API at 10\.0\.0\.99:50000 presented a certificate/);
    expect(c.talos.mutatingCalls()).toEqual([]);
    expect(c.kube.state('w1').annotations[keys.owner]).toBeUndefined();
    expect(res.records.find((r) => r.node === 'w2')).toBeUndefined();
  });

  it('at the quorum gate: the control plane is not rebooted and the stop names the endpoint, not an unreadable peer', async () => {
    const c = makeCluster([
      { name: 'cp1', role: 'control-plane' },
      { name: 'cp2', role: 'control-plane' },
      { name: 'cp3', role: 'control-plane' },
    ]);
    c.talos.etcdStatus = async () => {
      throw refused();
    };
    const res = await roll(c, { nodes: ['cp1'] });
    expect(res.result).toBe('failed');
    const cp1 = res.records.find((r) => r.node === 'cp1')!;
    expect(cp1.reason).toMatch(/the Talos API at 10\.0\.0\.99:50000 presented a certificate/);
    expect(cp1.reason).not.toMatch(/quorum gate/);
    expect(c.talos.calls.filter((x) => x.method === 'reboot')).toEqual([]);
  });
});
