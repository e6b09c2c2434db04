// How the channel's one `kubectl proxy` ends when the run does not end cleanly: the runner's
// cancellation (SIGINT/SIGTERM of the step: src/action/main.ts cancels the Runner), and a force-kill of
// the step's process that no handler sees (docs/kube-channel.md, "When the step is cancelled or killed").
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Runner } from '../../../../src/adapters/exec.js';
import { HttpKube } from '../../../../src/adapters/kube/http/client.js';
import { ToolError } from '../../../../src/core/errors.js';
import { KubeSim } from '../../../../sim/kube/index.js';
import { findKubectl } from '../../../sim-kube/helpers.js';

let sim: KubeSim;
let temp: string;

beforeAll(async () => {
  findKubectl();
  sim = await KubeSim.start({ heartbeatMs: 1000 });
  sim.addNode({ name: 'w-1', ip: '10.0.0.11', role: 'worker' });
  temp = mkdtempSync(join(tmpdir(), 'chan-end-'));
});

afterAll(async () => {
  await sim?.stop();
  rmSync(temp, { recursive: true, force: true });
});

describe('the channel when the run is cancelled or killed', () => {
  it('cancelled: the proxy outlives the cancellation, so the step can still give its nodes back; a request sent after it is answered; close() stops the proxy and removes its directory', async () => {
    const runner = new Runner();
    const kube = new HttpKube({ runner, kubeconfig: sim.kubeconfigPath, tempDir: temp });
    expect((await kube.getNode('w-1')).name).toBe('w-1');
    const opened = await kube.channel.open();
    const socket = opened.socketPath;
    const pid = proxyPid(socket);
    try {
      runner.cancel();
      // the cleanup's request, sent after the cancellation, over the same proxy: no second proxy
      const after = await kube.patchNode('w-1', [{ op: 'add', path: '/metadata/annotations', value: { 'example.com/given-back': 'yes' } }]);
      expect(after.annotations['example.com/given-back']).toBe('yes');
      expect(opened.alive).toBe(true);
      expect(alive(pid)).toBe(true);
      expect(kube.channel.starts).toBe(1);
      expect(runner.processCount).toBe(1);
      // a command run after the cancellation is still refused: only the channel outlives it
      expect((await runner.run({ file: 'true', args: [] })).aborted).toBe(true);
    } finally {
      await kube.close();
    }
    expect(alive(pid)).toBe(false);
    expect(existsSync(dirname(socket))).toBe(false);
  });

  it('cancelled: a request in flight is answered if it can be within a short grace, else it ends `cancelled`; a request sent after the cancellation has a short deadline of its own, and none goes on past 6 s after it', async () => {
    const runner = new Runner();
    const kube = new HttpKube({ runner, kubeconfig: sim.kubeconfigPath, tempDir: temp });
    try {
      await kube.getNode('w-1');
      // a write the API server applies and never answers, in flight when the run is cancelled
      sim.failNext({ method: 'PATCH', path: /^\/api\/v1\/nodes\/w-1$/ }, { hang: true, land: true });
      const inFlight = kube
        .patchNode('w-1', [{ op: 'add', path: '/metadata/labels/example.com~1in-flight', value: 'yes' }])
        .catch((x: unknown) => x);
      await until(() => sim.node('w-1').metadata.labels?.['example.com/in-flight'] === 'yes');
      const cancelledAt = Date.now();
      runner.cancel();
      const e = await inFlight;
      expect(e).toBeInstanceOf(ToolError);
      expect((e as ToolError).kind).toBe('cancelled');
      // ended by the grace (2 s), not by the request's own 30 s deadline; the bound is a hang detector
      expect(Date.now() - cancelledAt).toBeLessThan(25_000);
      expect((e as ToolError).message).toMatch(
        /PATCH \/api\/v1\/nodes\/w-1 failed \(cancelled\): the run was cancelled and no answer came within 2000 ms/,
      );
      // sent after the cancellation and never answered: it ends at its short deadline, as a timeout
      sim.failNext({ method: 'GET', path: /^\/api\/v1\/nodes\/w-1$/ }, { hang: true });
      const late = await kube.getNode('w-1').catch((x: unknown) => x);
      expect((late as ToolError).kind).toBe('timeout');
      expect((late as ToolError).message).toMatch(/no answer within 3000 ms/);
      // Whatever the machine's speed: every later request gets at most what is left of the step's 6 s,
      // and once they are over none is sent at all.
      let over: ToolError | undefined;
      // (a node of its own: a hang left for a request that was never sent must not meet another test's read)
      for (let i = 0; i < 4 && !over; i++) {
        sim.failNext({ method: 'GET', path: /^\/api\/v1\/nodes\/w-hang$/ }, { hang: true });
        const sent = kube.http.requestCount;
        const x = (await kube.getNode('w-hang').catch((y: unknown) => y)) as ToolError;
        expect(x.kind).toBe('timeout');
        const within = /no answer within (\d+) ms/.exec(x.message);
        if (within) expect(Number(within[1])).toBeLessThanOrEqual(3_000);
        else {
          expect(x.message).toMatch(/not sent: the cancelled step's 6000 ms to give back what it holds are over/);
          expect(kube.http.requestCount).toBe(sent);
          expect(Date.now() - cancelledAt).toBeGreaterThanOrEqual(5_990);
          over = x;
        }
      }
      expect(over).toBeDefined();
    } finally {
      await kube.close();
    }
  });

  it('the step force-killed (its process alone, as the runner on Linux kills it): its proxy outlives it, and the next channel in the same temp directory ends it, removes its directory and opens its own', async () => {
    // a step process of its own that opens the channel, reads once, says where its socket is, and waits to be killed
    const script = join(temp, 'step.mts');
    const src = JSON.stringify(join(process.cwd(), 'src/adapters'));
    const code = [
      `const { Runner } = await import(${src} + '/exec.ts');`,
      `const { HttpKube } = await import(${src} + '/kube/http/client.ts');`,
      `const kube = new HttpKube({ runner: new Runner(), kubeconfig: ${JSON.stringify(sim.kubeconfigPath)}, tempDir: ${JSON.stringify(temp)} });`,
      `await kube.getNode('w-1');`,
      `console.log('SOCKET ' + (await kube.channel.open()).socketPath);`,
      `setInterval(() => undefined, 1000);`,
    ].join('\n');
    writeFileSync(script, code);
    const { spawn } = await import('node:child_process');
    const tsx = join(process.cwd(), 'node_modules/.bin/tsx');
    const step = spawn(tsx, [script], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    step.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')));
    let proxy: number | undefined;
    try {
      await until(() => /SOCKET \S+/.test(out));
      const killedSocket = /SOCKET (\S+)/.exec(out)![1]!;
      proxy = proxyPid(killedSocket);
      // the runner's last resort on Linux: SIGKILL to the step's process alone (not its group)
      // the step's own process is the proxy's parent (tsx runs the script in a child of its own)
      const owner = parentOf(proxy);
      process.kill(owner, 'SIGKILL');
      await until(() => !alive(owner));
      // no handler ran: the proxy is orphaned, still serving in its directory
      expect(alive(proxy)).toBe(true);
      expect(existsSync(killedSocket)).toBe(true);

      const runner = new Runner();
      const next = new HttpKube({ runner, kubeconfig: sim.kubeconfigPath, tempDir: temp });
      try {
        expect((await next.getNode('w-1')).name).toBe('w-1');
        const opened = await next.channel.open();
        expect(dirname(opened.socketPath)).not.toBe(dirname(killedSocket));
        expect(dirname(dirname(opened.socketPath))).toBe(temp);
        expect(statSync(dirname(opened.socketPath)).mode & 0o777).toBe(0o700);
        expect(runner.processCount).toBe(1);
        // the killed step's proxy ended and its directory gone
        const orphan = proxy;
        await until(() => !alive(orphan));
        expect(existsSync(dirname(killedSocket))).toBe(false);
      } finally {
        await next.close();
      }
    } finally {
      if (proxy !== undefined && alive(proxy)) process.kill(proxy, 'SIGKILL');
      if (step.pid !== undefined && alive(step.pid)) process.kill(-step.pid, 'SIGKILL');
    }
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
}

/** A process's parent, from /proc/PID/stat (the field after the state). */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** The pid of the kubectl proxy serving `socket`, from /proc. */
function proxyPid(socket: string): number {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (cmd.includes(`--unix-socket=${socket}`)) return Number(d);
    } catch {
      /* gone */
    }
  }
  throw new Error(`no process serves ${socket}`);
}

async function until(f: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!f() && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
  if (!f()) throw new Error('condition not met');
}
