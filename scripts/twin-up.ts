// The cluster twin for a workflow job or a shell, kept up until SIGTERM or Ctrl-C: the demo's default
// cluster (three control planes, three workers; sim/cluster.ts addDefaultNodes) at the demo's time
// scale, and the auth patch of the new credential. Once it is up it writes DIR/ready, the lines a step
// appends to $GITHUB_OUTPUT (kubeconfig, talosconfig, auth-patch, url, pid), renamed into place whole
// so a reader never sees half of it. Started in the background by scripts/twin-up.sh.
//
//   node --import tsx scripts/twin-up.ts DIR
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addDefaultNodes, SimCluster } from '../sim/cluster.js';
import { firstSignal } from '../demo/keep.js';

async function main(): Promise<number> {
  const dir = process.argv[2];
  if (!dir || process.argv.length > 3) {
    console.error('usage: node --import tsx scripts/twin-up.ts DIR');
    return 2;
  }
  const stop = firstSignal();
  const cluster = await SimCluster.start({ timeScale: 1 / 60 });
  try {
    addDefaultNodes(cluster, { mixedVersions: true });
    const outputs = {
      kubeconfig: cluster.kube.kubeconfigPath,
      talosconfig: cluster.talos.talosconfigPath,
      'auth-patch': cluster.writeAuthPatch(),
      url: cluster.kube.url,
      pid: String(process.pid),
    };
    writeFileSync(
      join(dir, 'ready.tmp'),
      Object.entries(outputs)
        .map(([k, v]) => `${k}=${v}\n`)
        .join(''),
    );
    renameSync(join(dir, 'ready.tmp'), join(dir, 'ready'));
    console.log(`cluster twin up: ${cluster.kube.url}, Talos API at ${cluster.talos.endpoint}`);
    const signal = await stop.signal;
    console.log(`${signal}: shutting the twin down`);
    return 0;
  } finally {
    await cluster.stop();
    stop.dispose();
  }
}

process.exitCode = await main();
