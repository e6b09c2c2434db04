// Runs the real kubectl against a KubeSim. Never skips: without kubectl the tests fail and say how to get it.
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { KubeSim } from '../../sim/kube/index.js';

export function findKubectl(): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, 'kubectl');
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  throw new Error(
    'kubectl not found on PATH. These tests drive the real kubectl binary: install it (the Google Cloud SDK ' +
      '`kubectl` component as on the CI image, or `apt-get install kubernetes-client` on Debian, or a release ' +
      'binary from https://dl.k8s.io/release/v1.32.4/bin/linux/amd64/kubectl) and put it on PATH.',
  );
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Async on purpose: the simulator runs in this process, so a blocking spawn would starve it. */
export function kubectl(sim: KubeSim, args: string[], opts: { timeoutMs?: number } = {}): Promise<KubectlResult> {
  const bin = findKubectl();
  const t = Date.now();
  return new Promise((resolve) => {
    execFile(
      bin,
      args,
      { env: { ...process.env, ...sim.env() }, encoding: 'utf8', timeout: opts.timeoutMs ?? 30_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
        resolve({ code, stdout, stderr, ms: Date.now() - t });
      },
    );
  });
}

export async function kubectlJson(sim: KubeSim, args: string[]): Promise<any> {
  const r = await kubectl(sim, [...args, '-o', 'json']);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until<T>(fn: () => T | undefined | false, timeoutMs = 30_000, stepMs = 20): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('condition not reached in time');
    await sleep(stepMs);
  }
}
