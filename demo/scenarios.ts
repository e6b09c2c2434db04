// Named situations for the demo (and the benchmarks): each adds something to the default cluster.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NEW_CREDENTIAL, OLD_CREDENTIAL, type SimCluster } from '../sim/cluster.js';
import { RegistrySim } from '../sim/registry/server.js';
import { exampleDbClusters } from '../sim/kube/resources.js';

// To add one: a new key in SCENARIOS below (its name on the command line), with a description and a
// setup; `npm run demo -- --help` lists it by its summary (or the start of its description).
export interface Scenario {
  description: string;
  /** one line for --help; default: the description up to its first colon */
  summary?: string;
  /** extra action inputs */
  inputs?: Record<string, string>;
  /** returns functions that stop what it started; `say` prints a line of what the twin does on its side */
  setup(c: SimCluster, say: (line: string) => void): Array<() => void>;
  /** optional: a second run of the same inputs after this change (e.g. the cause lifted) */
  rerun?: { description: string; setup(c: SimCluster): void };
  /** optional: something to start first (the registry twin), its inputs and how to stop it */
  prepare?(c: SimCluster, dir: string): Promise<{ inputs: Record<string, string>; stop(): Promise<void> }>;
}

export const SCENARIOS: Record<string, Scenario> = {
  default: {
    summary: "the default cluster: 6 nodes, Talos 1.13 and 1.14, an operator's cordon, a node already current",
    description:
      '3 control planes, 3 workers, mixing Talos 1.13 and 1.14 (cp-3 and worker-1 restart cri by themselves after the patch): worker-2 carries an operator cordon, worker-3 was just created by the autoscaler with the new credential, the config of cp-2 carries both credential forms (a RegistryAuthConfig document over a stale legacy map); kubelets write heartbeats; boot and restart timings drawn from realistic ranges (seeded): a rebooted node answers before its CRI files are written and cri is up',
    setup: () => [],
  },
  plan: {
    summary: "read-only (--mode plan): each node's config change and a drain forecast a PDB and a bare pod block",
    description:
      "the default cluster (what `--mode plan` runs unless --scenario says otherwise), plus shop/db-0 on worker-2, whose PodDisruptionBudget allows no eviction, and a bare pod default/debug-shell on worker-1: plan's drain forecast (dry-run evictions, nothing evicted) names the budget and the pod that would stop each drain now",
    setup: (c) => {
      c.kube.addPod({
        namespace: 'shop',
        name: 'db-0',
        nodeName: 'worker-2',
        owner: { kind: 'StatefulSet', name: 'db' },
        labels: { app: 'db' },
      });
      c.kube.addPdb({ namespace: 'shop', name: 'db', selector: { app: 'db' }, disruptionsAllowed: 0 });
      c.kube.addPod({ namespace: 'default', name: 'debug-shell', nodeName: 'worker-1' });
      return [];
    },
  },
  churn: {
    description: 'the default cluster with 20 unrelated status writes per second on every node while it is claimed',
    setup: (c) => [c.kube.startChurn({ perSecond: 20, kind: 'status' })],
  },
  pdb: {
    summary: "worker-2's drain waits on a PodDisruptionBudget until the budget's other pod is Ready, then goes on",
    description:
      "a Deployment shop/cart with cart-1 on worker-2 (a node the roll drains and reboots) and cart-2 on worker-3, still starting (not Ready); its PodDisruptionBudget (minAvailable 1) refuses cart-1's eviction while cart-2 is not Ready: worker-2's drain waits, retrying the eviction, until cart-2 becomes Ready 5 s after the first refusal, then goes on",
    setup: (c, say) => {
      // cart-2 starts (placed by the scheduler on worker-3 by its hostname label) and stays not Ready until told
      c.kube.setReadiness('shop', 'cart', 'never');
      const owner = { kind: 'Deployment', name: 'cart' } as const;
      c.kube.addPod({ namespace: 'shop', name: 'cart-1', nodeName: 'worker-2', owner, labels: { app: 'cart' } });
      c.kube.addPod({
        namespace: 'shop',
        name: 'cart-2',
        owner,
        labels: { app: 'cart' },
        nodeSelector: { 'kubernetes.io/hostname': 'worker-3' },
      });
      c.kube.addPdbMinAvailable({ namespace: 'shop', name: 'cart', selector: { app: 'cart' }, minAvailable: 1 });
      // Each refused eviction is told as the twin answers it (kubectl drain retries every 5 s); cart-2
      // becomes Ready 5 s after the first, whatever the machine's pace.
      let ready: NodeJS.Timeout | undefined;
      let seen = 0;
      const watch = setInterval(() => {
        const answers = c.kube.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pods/cart-1/eviction'));
        for (const r of answers.slice(seen)) {
          seen++;
          if (r.status === 429) {
            say('eviction of shop/cart-1 refused (429): budget shop/cart needs 1 Ready pod, cart-1 is the only one; kubectl drain retries');
            ready ??= setTimeout(() => {
              say('shop/cart-2 on worker-3 is Ready now: the budget allows one eviction');
              c.kube.readyNow('shop', 'cart');
            }, 5000);
          } else if (r.status < 300) {
            say('eviction of shop/cart-1 accepted: the drain goes on');
            clearInterval(watch);
          }
        }
      }, 100);
      return [() => clearInterval(watch), () => clearTimeout(ready)];
    },
  },
  'refused-drain': {
    summary: 'a drain that can never finish (maxUnavailable: 0 over healthy pods): worker-2 refused before its claim, the roll goes on',
    description:
      "a StatefulSet shop/db with db-0 on worker-2 and db-1 on worker-3, both Ready, and a PodDisruptionBudget with maxUnavailable: 0: no eviction of db-0 can ever be allowed, so worker-2 is refused before its claim (never written to; its row names the budget, the pod and the fix) and the roll goes on with the other nodes; worker-3's roll, which needs no drain (its containerd already runs the new credential), goes ahead; `--mode plan` says the same beforehand",
    setup: (c) => {
      const owner = { kind: 'StatefulSet', name: 'db' } as const;
      c.kube.addPod({ namespace: 'shop', name: 'db-0', nodeName: 'worker-2', owner, labels: { app: 'db' } });
      c.kube.addPod({ namespace: 'shop', name: 'db-1', nodeName: 'worker-3', owner, labels: { app: 'db' } });
      c.kube.addPdb({ namespace: 'shop', name: 'db', selector: { app: 'db' }, disruptionsAllowed: 0 });
      return [];
    },
  },
  quarantine: {
    summary: 'undrainable: quarantine: a node whose PDB never allows is quarantined, then lifted by a rerun',
    description:
      'undrainable: quarantine, drain-timeout 10s: an extra Talos 1.13 worker, worker-db, runs db-0, whose PodDisruptionBudget never allows an eviction: worker-db is quarantined (cordoned, not rebooted, annotated) and the roll goes on; the run fails naming it',
    inputs: { undrainable: 'quarantine', 'drain-timeout': '10s' },
    setup: (c) => {
      c.addNode({ name: 'worker-db', role: 'worker' });
      c.kube.addPod({
        namespace: 'shop',
        name: 'db-0',
        nodeName: 'worker-db',
        owner: { kind: 'StatefulSet', name: 'db' },
        labels: { app: 'db' },
      });
      // db-1 stays Pending (no node matches it): the budget waits for it, so the drain is not provably
      // stuck (that would be refused before the claim: the refused-drain scenario) but times out
      c.kube.addPod({
        namespace: 'shop',
        name: 'db-1',
        owner: { kind: 'StatefulSet', name: 'db' },
        labels: { app: 'db' },
        nodeSelector: { 'kubernetes.io/hostname': 'worker-gone' },
      });
      c.kube.addPdb({ namespace: 'shop', name: 'db', selector: { app: 'db' }, disruptionsAllowed: 0 });
      return [];
    },
    rerun: {
      description: 'the PodDisruptionBudget allows the eviction now: the rerun rolls worker-db and lifts its quarantine',
      setup: (c) => c.kube.setPdbAllowed('shop', 'db', 1),
    },
  },
  settle: {
    summary: 'the next drain waits (settle gate) until a Deployment evicted by the last one is available again',
    description:
      "a Deployment shop/api with pods on worker-2 and worker-3; a pod of it re-created after an eviction becomes Ready only 15 s after it started: after worker-2's drain evicted one, the next node's drain waits until shop/api is available again (settle-timeout)",
    setup: (c) => {
      c.kube.addPod({ namespace: 'shop', name: 'api-1', nodeName: 'worker-2', owner: { kind: 'Deployment', name: 'api' } });
      c.kube.addPod({ namespace: 'shop', name: 'api-2', nodeName: 'worker-3', owner: { kind: 'Deployment', name: 'api' } });
      c.kube.setReadiness('shop', 'api', 15_000);
      return [];
    },
  },
  'etcd-alarm': {
    summary: 'an etcd NOSPACE alarm: the control-plane reboots are refused by the quorum gate',
    description: 'cp-2 reports an etcd NOSPACE alarm: the control-plane reboots are refused',
    setup: (c) => {
      c.talos.setEtcd('cp-2', { alarm: 'NOSPACE' });
      return [];
    },
  },
  'etcd-orphan': {
    summary: 'an etcd member without a Node: the control-plane reboot is refused, naming the member',
    description:
      "etcd still lists cp-0, a control plane deleted from Kubernetes but never removed from etcd: 4 voters, so rebooting one of the 3 control planes would lose quorum: the control-plane reboot is refused naming cp-0's member and the command that removes it",
    setup: (c) => {
      c.talos.addEtcdMember({ name: 'cp-0', address: '10.5.0.9' });
      return [];
    },
  },
  'cri-first': {
    summary: 'a Talos 1.13 worker whose containerd started before cri.toml was written: it must be rebooted',
    description:
      'an extra Talos 1.13 worker whose containerd started before cri.toml was written at boot (nothing in ≤1.13 prevents it): it must be rebooted',
    setup: (c) => {
      c.addNode({ name: 'worker-cri-first', role: 'worker', current: true, criFirst: true });
      return [];
    },
  },
  'talos-1.14': {
    description: 'an extra worker runs Talos 1.14, which restarts cri by itself after the patch',
    setup: (c) => {
      c.addNode({ name: 'worker-114', role: 'worker', version: '1.14' });
      return [];
    },
  },
  'bad-credential': {
    summary: 'the pre-flight check asks the registry twin with the old password and stops the run',
    description:
      'the auth patch carries the OLD password for the registry twin (HTTPS on 127.0.0.1 with its own CA, the token flow): the pre-flight check asks the registry with it before anything is claimed, the token endpoint answers 401, and the run stops: no Lease, no node claimed, patched or rebooted',
    setup: () => [],
    prepare: async (_c, dir) => {
      const reg = await RegistrySim.start({ ...NEW_CREDENTIAL, repositories: { 'acme/app': ['1.4.2'] } });
      const caFile = join(dir, 'registry-ca.pem');
      writeFileSync(caFile, reg.caPem);
      const patch = join(dir, 'registry-auth-bad.yaml');
      const { username, password } = OLD_CREDENTIAL;
      writeFileSync(
        patch,
        `apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: "${reg.host}"\nusername: ${username}\npassword: ${password}\n`,
        {
          mode: 0o600,
        },
      );
      return {
        inputs: {
          'auth-patch': patch,
          registry: reg.host,
          preflight: 'true',
          'preflight-image': `${reg.host}/acme/app:1.4.2`,
          'registry-ca-file': caFile,
        },
        stop: () => reg.stop(),
      };
    },
  },
  window: {
    summary: 'a maintenance window that closes 15 s into the roll: no further node starts, the run ends partial',
    description:
      'maintenance-windows: a window that opened this second, lasts 15 s and comes back every hour at the same minute (UTC): the first nodes start inside it; once it has closed no further node starts, the nodes in flight finish, and the run ends partial with a notice saying when the next window opens (the timeline marks the moment with #)',
    setup: () => [],
    // built when the demo runs, not when this file loads: the window opens as the run starts
    prepare: async () => {
      const now = new Date();
      return {
        inputs: {
          'maintenance-windows': `- { start: '${now.getUTCSeconds()} ${now.getUTCMinutes()} * * * *', duration: 15s, timezone: UTC }`,
        },
        stop: async () => undefined,
      };
    },
  },
  gate: {
    summary: 'health gates: a Longhorn volume degraded by each reboot, and a CEL gate over a custom resource, hold starts',
    description:
      'Longhorn installed, a volume longhorn-system/pvc-shop-db with a replica on each worker: each worker reboot degrades it until its replica is rebuilt, 20 s after the node is Ready again, and the storage gate (on by default) holds the next start until it is healthy; a CEL gate over a custom resource (shop/db, DbCluster example.com) holds too while its status.ready is false, for the first 10 s',
    inputs: {
      'health-gates':
        '- {name: shop-db-ready, kind: DbCluster, group: example.com, namespace: shop, expression: "self.status.ready == true"}',
    },
    setup: (c) => {
      c.kube.installLonghorn().add('pvc-shop-db', ['worker-1', 'worker-2', 'worker-3']);
      const db = exampleDbClusters;
      c.kube.installCrd(db);
      c.kube.createObject(db, 'shop', { metadata: { name: 'db' }, spec: {}, status: { ready: false } });
      const ready = setTimeout(() => c.kube.setStatus(db, 'shop', 'db', { ready: true }), 10_000);
      return [() => clearTimeout(ready)];
    },
  },
};
