// Keeping a twin up for a person to poke at (`npm run demo -- --keep`, scripts/twin-up.ts): where its
// configs are, what to try on it, and the wait for Ctrl-C or SIGTERM.
import { join } from 'node:path';
import type { SimCluster } from '../sim/cluster.js';
import { shellWord } from '../src/core/shell.js';

/** The first SIGINT or SIGTERM from now on; `dispose` removes the handlers (the default action returns). */
export function firstSignal(): { signal: Promise<NodeJS.Signals>; dispose(): void } {
  let resolve!: (s: NodeJS.Signals) => void;
  const signal = new Promise<NodeJS.Signals>((r) => (resolve = r));
  const handlers = (['SIGINT', 'SIGTERM'] as const).map((s) => {
    const h = () => resolve(s);
    process.on(s, h);
    return [s, h] as const;
  });
  return { signal, dispose: () => handlers.forEach(([s, h]) => process.off(s, h)) };
}

/**
 * What to print while the twin is kept: its kubeconfig and talosconfig, and commands that work on it.
 * The twin's talosctl (sim/bin/talosctl) answers from a shell as the real client would, given the
 * talosconfig: the twin serves the API a real talosctl dials on the same endpoint, its commands on HTTP.
 */
export function keepLines(c: SimCluster): string[] {
  const kubeconfig = c.kube.kubeconfigPath;
  const talosconfig = c.talos.talosconfigPath;
  const worker =
    c.kube.nodes().find((n: any) => !('node-role.kubernetes.io/control-plane' in (n.metadata.labels ?? {}))) ?? c.kube.nodes()[0];
  const name: string = worker?.metadata.name ?? '<node>';
  const ip: string = worker?.status?.addresses?.find((a: any) => a.type === 'InternalIP')?.address ?? '<ip>';
  const talosctl = join(c.talos.binDir, 'talosctl');
  return [
    `kubeconfig:  ${kubeconfig}`,
    `talosconfig: ${talosconfig}`,
    '',
    'try:',
    `  KUBECONFIG=${shellWord(kubeconfig)} kubectl describe node ${name}`,
    `  KUBECONFIG=${shellWord(kubeconfig)} kubectl get events -A`,
    `  ${shellWord(talosctl)} --talosconfig ${shellWord(talosconfig)} -n ${ip} version`,
    '',
    'the twin stays up until Ctrl-C (or SIGTERM)',
  ];
}
