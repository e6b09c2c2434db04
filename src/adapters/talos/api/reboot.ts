// A reboot over the Talos API, followed as talosctl's `reboot --wait` follows it, reduced to its
// proof: send MachineService.Reboot (mode DEFAULT) and read the boot id again once a second with short
// calls until the node answers with one other than the boot id read before (`before`, read by the
// pipeline within its own bound: src/pipeline/bootIdBefore.ts) or the deadline passes. talosctl also
// follows the Events stream filtered by the Reboot's actor id; the stream only reports progress, and
// its end condition (the machine RUNNING and ready) is followed by the same boot id check, so polling
// the boot id decides the same outcome (docs/talos-api.md, "The reboot").
// While the node is down every call fails with Unavailable, a deadline or a reset: that is the
// reboot happening, not an error. Deadline: `timeoutMs` (ready-timeout) from the Reboot's answer, so
// nothing before it spends the wait; cancellation ends it.
import { ToolError, errorMessage } from '../../../core/errors.js';
import { formatDuration } from '../../../core/format.js';
import type { TalosConnection } from './connection.js';
import { RPC } from './proto.js';
import { BOOT_ID_PATH } from '../resources.js';

/** a boot id read given less time than this is not worth sending: the deadline has come */
export const MIN_POLL_CALL_MS = 100;

export { BOOT_ID_PATH };

export interface ApiRebootOptions {
  /** the run's cancellation (Runner.signal) */
  signal?: AbortSignal;
  /** between two boot id reads; default 1 s (talosctl's retry.Constant interval) */
  pollMs?: number;
  /** the deadline of one boot id read while the node comes back; default 5 s */
  pollCallMs?: number;
}

/** What the reboot saw: the two boot ids and the Reboot's actor id. */
export interface ApiRebootResult {
  before: string;
  after: string;
  actorId: string;
}

/** Failures while the node is down or coming back: expected, the next read follows. */
function isOutage(e: unknown): boolean {
  if (!(e instanceof ToolError) || e.kind === 'cancelled') return false;
  if (e.kind === 'transport' || e.kind === 'timeout') return true;
  // a stream cut by the node going down (talosctl retries io.EOF and Canceled the same way)
  return /code = Canceled|\bEOF\b|RST_STREAM/.test(e.stderr);
}

/**
 * The kernel's boot id, trimmed, in one `Read` within `callMs` (the connection's own deadline when
 * unset). A stream cut by the node or the endpoint going away is classified `transport` here, once,
 * so the caller reads the kind alone.
 */
export async function readBootId(conn: TalosConnection, node: string, callMs?: number, signal?: AbortSignal): Promise<string> {
  try {
    const chunks = await conn.stream('read', node, { path: BOOT_ID_PATH }, { timeoutMs: callMs, signal });
    return Buffer.concat(chunks.map((c) => (c.bytes as Buffer | undefined) ?? Buffer.alloc(0)))
      .toString('utf8')
      .trim();
  } catch (e) {
    if (!(e instanceof ToolError) || e.kind === 'transport' || e.kind === 'timeout' || !isOutage(e)) throw e;
    throw new ToolError({
      tool: e.tool,
      command: e.command,
      kind: 'transport',
      exitCode: e.exitCode,
      stderr: e.stderr,
      node,
      message: e.message,
    });
  }
}

export async function rebootOverApi(
  conn: TalosConnection,
  node: string,
  timeoutMs: number,
  before: string,
  opts: ApiRebootOptions = {},
): Promise<ApiRebootResult> {
  const { signal } = opts;
  const pollMs = opts.pollMs ?? 1000;
  const pollCallMs = opts.pollCallMs ?? 5000;
  const what = `${RPC.reboot.path} (node ${node} via ${conn.endpoint})`;
  const fail = (kind: 'timeout' | 'cancelled' | 'unparseable', why: string): ToolError =>
    new ToolError({ tool: 'talos-api', command: what, kind, exitCode: null, stderr: why, node, message: `${what}: ${why}` });
  const cancelled = () => fail('cancelled', 'cancelled: the run was stopped while the node rebooted');

  if (signal?.aborted) throw cancelled();

  // Any failure of the Reboot call itself fails the reboot, as the tracker's action does: the node
  // answers before it goes down (the sequence runs after the response).
  let actorId: string;
  try {
    const res = await conn.unary('reboot', node, { mode: 'DEFAULT' }, { signal });
    const messages = (res.messages ?? []) as Array<Record<string, unknown>>;
    // talosctl: "no messages returned from action run"
    if (messages.length === 0) throw fail('unparseable', 'no messages returned from action run');
    actorId = typeof messages[0].actor_id === 'string' ? messages[0].actor_id : '';
  } catch (e) {
    if (signal?.aborted) throw cancelled();
    throw e;
  }

  // the wait for the new boot id starts at the Reboot's answer
  const deadline = Date.now() + timeoutMs;
  let last = 'the boot id was unchanged';
  for (;;) {
    await sleep(Math.min(pollMs, Math.max(0, deadline - Date.now())), signal);
    if (signal?.aborted) throw cancelled();
    const left = deadline - Date.now();
    if (left < MIN_POLL_CALL_MS) {
      throw fail(
        'timeout',
        `the node did not answer with a new boot id within ${formatDuration(timeoutMs)} (context deadline exceeded; last: ${last})`,
      );
    }
    const callMs = Math.min(pollCallMs, left);
    try {
      const now = await readBootId(conn, node, callMs, signal);
      if (now !== '' && now !== before) return { before, after: now, actorId };
      last = 'the boot id was unchanged';
    } catch (e) {
      if (signal?.aborted) throw cancelled();
      if (!isOutage(e)) throw e;
      // a read cut short by our own deadline says nothing about the node
      if (!(callMs < pollCallMs && e instanceof ToolError && e.kind === 'timeout')) last = errorMessage(e);
    }
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
