// `npm run demo -- --keep`: the twin stays up after the run for the real kubectl, and a SIGTERM shuts
// it down: the process exits, the apiserver's port closes, the twin's directory is gone.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../runner/runAction.js';
import { listening, requireKubectl } from '../e2e/helpers.js';

beforeAll(() => requireKubectl());

describe('demo: --keep', () => {
  it('prints the kubeconfig, the real kubectl lists the nodes on it, SIGTERM shuts the twin down', async () => {
    // one node selected, already current: the run itself takes a second
    const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'demo', 'demo.ts'), '--keep', '--input', 'nodes=worker-3'], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      await keptThenStopped();
    } finally {
      // a failed expectation must not leave the demo (and its twin) running
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }

    async function keptThenStopped(): Promise<void> {
      const kept = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (b: Buffer) => {
          stdout += b.toString();
          if (stdout.includes('until Ctrl-C')) resolve(stdout);
        });
        void exited.then(() => reject(new Error(`the demo exited before keeping the twin: ${stdout}\n${stderr}`)));
      });
      const kubeconfig = /^ {3}kubeconfig: +(\S+)$/m.exec(kept)?.[1];
      const port = Number(/cluster twin: http:\/\/127\.0\.0\.1:(\d+)/.exec(kept)?.[1]);
      expect(kubeconfig, kept).toBeDefined();
      expect(kept).toMatch(/kubectl describe node worker-1/);
      expect(kept).toMatch(/talosctl --talosconfig \S+ -n 10\.5\.0\.\d+ version/);
      expect(kept).toContain('  ✔ worker-3 (worker): reboot skipped in');

      const nodes = spawnSync('kubectl', ['--kubeconfig', kubeconfig!, 'get', 'nodes', '-o', 'name'], { encoding: 'utf8' });
      expect(nodes.status, nodes.stderr).toBe(0);
      expect(nodes.stdout.trim().split('\n')).toEqual([
        'node/cp-1',
        'node/cp-2',
        'node/cp-3',
        'node/worker-1',
        'node/worker-2',
        'node/worker-3',
      ]);
      expect(await listening(port)).toBe(true);

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(stdout).toContain('SIGTERM: shutting the twin down');
      expect(await listening(port)).toBe(false);
      expect(existsSync(kubeconfig!)).toBe(false);
      const summary = /── job summary \(HTML, \d+ bytes\): (\S+)/.exec(stdout)?.[1];
      expect(summary && existsSync(summary)).toBe(false);
    }
  });
});
