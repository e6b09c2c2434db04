// 9. What one health-gate check costs a node start (docs/gates.md): the storage gate (PVs, PVCs,
// VolumeAttachments, Longhorn volumes) and one CEL gate over a custom resource, read in one `kubectl get
// … -A -o json` through the Kubectl adapter against the twin, judged by src/rules/gates.ts. Discovery
// (`kubectl api-resources`) is measured apart: once per run, never per node. A run with nothing to roll
// pays neither.
import { performance } from 'node:perf_hooks';
import { Runner, type RunResult, type RunSpec } from '../src/adapters/exec.js';
import { Kubectl } from '../src/adapters/kube/kubectl.js';
import { parseHealthGates } from '../src/core/gates.js';
import { HoldRecorder } from '../src/pipeline/holds.js';
import { HealthGates } from '../src/pipeline/gates.js';
import { realClock } from '../src/core/clock.js';
import { KubeSim } from '../sim/kube/index.js';
import { R, exampleDbClusters } from '../sim/kube/resources.js';
import { median, round } from './lib.js';

export interface GatesResult {
  /** objects the one listing returns */
  objects: number;
  gates: number;
  /** median ms of one check (one listing + every gate judged) */
  checkMs: number | null;
  /** kubectl processes of one check */
  checkProcesses: number;
  /** ms of the discovery, once per run */
  discoveryMs: number | null;
  discoveryProcesses: number;
  runs: number;
}

class CountingRunner extends Runner {
  count = 0;
  override run(spec: RunSpec): Promise<RunResult> {
    this.count++;
    return super.run(spec);
  }
}

const DB = exampleDbClusters;

export async function benchGates(progress: (msg: string) => void, runs = 10): Promise<GatesResult> {
  const sim = await KubeSim.start({ heartbeatMs: 60_000 });
  try {
    // a small storage footprint: 30 bound volumes and claims, 10 attachments, 10 Longhorn volumes, 3 databases
    const lh = sim.installLonghorn();
    sim.installCrd(DB);
    for (let i = 0; i < 30; i++) {
      sim.createObject(R.persistentvolumes, '', { metadata: { name: `pv-${i}` }, spec: {}, status: { phase: 'Bound' } });
      sim.createObject(R.persistentvolumeclaims, 'apps', { metadata: { name: `data-${i}` }, spec: {}, status: { phase: 'Bound' } });
    }
    for (let i = 0; i < 10; i++) {
      sim.createObject(R.volumeattachments, '', { metadata: { name: `csi-${i}` }, spec: {}, status: { attached: true } });
      lh.add(`pvc-${i}`, ['w-1', 'w-2']);
    }
    for (let i = 0; i < 3; i++) sim.createObject(DB, 'db', { metadata: { name: `pg-${i}` }, spec: {}, status: { ready: true } });
    const runner = new CountingRunner();
    const kube = new Kubectl({ runner, kubeconfig: sim.kubeconfigPath });
    const gates = new HealthGates({
      kube,
      clock: realClock,
      holds: new HoldRecorder(),
      timeoutMs: 60_000,
      user: parseHealthGates('- {name: db, kind: DbCluster, group: example.com, expression: "self.status.ready == true"}'),
      storage: true,
    });
    let t0 = performance.now();
    await gates.resolve({ info: () => undefined });
    const discoveryMs = performance.now() - t0;
    const discoveryProcesses = runner.count;
    const all: number[] = [];
    let values = await gates.check(); // warm
    const before = runner.count;
    for (let i = 0; i < runs; i++) {
      t0 = performance.now();
      values = await gates.check();
      all.push(performance.now() - t0);
    }
    if (!values.every((v) => v.holds)) throw new Error(`the gates bench's gates do not hold: ${JSON.stringify(values)}`);
    const result: GatesResult = {
      objects: 30 + 30 + 10 + 10 + 3,
      gates: values.length,
      checkMs: round(median(all)),
      checkProcesses: (runner.count - before) / runs,
      discoveryMs: round(discoveryMs),
      discoveryProcesses,
      runs,
    };
    progress(
      `health gates: one check ${result.checkMs} ms (${result.checkProcesses} kubectl process, ${result.gates} gates over ${result.objects} objects); discovery ${result.discoveryMs} ms once per run`,
    );
    return result;
  } finally {
    await sim.stop();
  }
}
