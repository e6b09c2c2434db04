// `talosctl reboot` (client v1.13.8). With --wait (the default) the action tracker follows each node:
// it reads the boot id, sends Reboot, follows the event stream across the outage until the machine
// reports stage Running and ready (action.MachineReadyEventFn), then checks that its boot id changed
// (BootIDChangedPostCheckFn). So through talosctl the reboot returns only after the boot loaded cri and
// the services came up: the window in which the node answers without cri is the API path's alone. On a non-TTY stderr it prints one `"<node>": <message>` line per
// update; its errors are printed only through those lines, so the exit code is what counts.
import { randomUUID } from 'node:crypto';
import { grpcError, multiError } from '../format.js';
import type { CommandContext } from './context.js';
import { flag, sleep } from './context.js';

const q = (node: string) => JSON.stringify(node);

async function track(ctx: CommandContext, node: string, timeoutMs: number): Promise<boolean> {
  const say = (msg: string) => ctx.out.err(`${q(node)}: ${msg}\n`);
  const a = ctx.reach(node);
  if (!a.ok) {
    // the event watcher retries Unavailable while the boot-id read fails the node outright
    say('unavailable, retrying...');
    say(a.error);
    return false;
  }
  const rt = a.rt;
  const preBootID = rt.node.bootID;
  const deadline = Date.now() + timeoutMs;
  say('waiting for actor ID');
  say(`actor ID: ${randomUUID()}`);
  const back = rt.reboot();
  say('sequence: reboot action: START');
  say('error: reboot sequence completed');
  let done = false;
  void back.then(() => {
    done = true;
  });
  // one reconnect attempt per second while the machine is down, as retry.Constant does
  while (!done && !ctx.signal.aborted) {
    if (Date.now() >= deadline) {
      const err = grpcError('DeadlineExceeded', 'context deadline exceeded');
      say(`error: ${err}`);
      say(err);
      return false;
    }
    say('unavailable, retrying...');
    await Promise.race([back, sleep(Math.min(1000, Math.max(0, deadline - Date.now())), ctx.signal)]);
  }
  if (ctx.signal.aborted) return false;
  // connected again: the event stream is followed without a word until the machine is ready
  let ready = false;
  void rt.runningAndReady().then(() => {
    ready = true;
  });
  while (!ready && !ctx.signal.aborted) {
    if (Date.now() >= deadline) {
      const err = grpcError('DeadlineExceeded', 'context deadline exceeded');
      say(`error: ${err}`);
      say(err);
      return false;
    }
    await Promise.race([rt.runningAndReady(), sleep(Math.min(1000, Math.max(0, deadline - Date.now())), ctx.signal)]);
  }
  if (ctx.signal.aborted) return false;
  say('events check condition met');
  if (rt.node.bootID === preBootID) return false;
  say('post check passed');
  return true;
}

export async function rebootCommand(ctx: CommandContext): Promise<number> {
  const wait = flag(ctx, 'wait', true) || flag(ctx, 'debug', false) || flag(ctx, 'drain', false);
  if (!wait) {
    // one Reboot call with `nodes` metadata: any failing node fails the command
    const errs: string[] = [];
    for (const node of ctx.req.nodes) {
      const a = ctx.reach(node);
      if (!a.ok) errs.push(`${node}: ${a.error}`);
      else void a.rt.reboot();
    }
    if (errs.length) {
      ctx.out.fail(`error executing reboot: ${multiError(errs)}`);
      return 1;
    }
    return 0;
  }
  const timeoutMs = flag(ctx, 'timeout', 30 * 60_000);
  const results = await Promise.all(ctx.req.nodes.map((n) => track(ctx, n, timeoutMs)));
  return results.every(Boolean) ? 0 : 1;
}
