// A reboot over the Talos API, followed as talosctl's `reboot --wait` follows it, reduced to its
// proof: read the boot id, send MachineService.Reboot (mode DEFAULT), then read the boot id again
// once a second with short calls until the node answers with a different one or the deadline
// passes. talosctl also follows the Events stream filtered by the Reboot's actor id; the stream
// only reports progress, and its end condition (the machine RUNNING and ready) is followed by the
// same boot id check, so polling the boot id decides the same outcome (docs/talos-api.md, "Reboot").
// While the node is down every call fails with Unavailable, a deadline or a reset: that is the
// reboot happening, not an error. Deadline: `timeoutMs` (ready-timeout); cancellation ends it.
// The first boot id read comes before anything is sent: a failure there is read again within the
// deadline (the endpoint or the node may be away for a moment), and when it still fails the reboot
// was never requested: RebootNotSentError, so the caller may give the node back as it is.
import { RebootNotSentError, ServerIdentityError, ToolError, errorMessage } from '../../../core/errors.js';
import { formatDuration } from '../../../core/format.js';
import type { TalosConnection } from './connection.js';
import { RPC } from './proto.js';

/** a boot id read given less time than this is not worth sending: the deadline has come */
export const MIN_POLL_CALL_MS = 100;

/** the kernel's boot id, as talosctl's action tracker reads it */
export const BOOT_ID_PATH = '/proc/sys/kernel/random/boot_id';

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

/**
 * Thrown when the boot id cannot be read before the reboot because the role may not Read (an
 * `os:operator` certificate may Reboot but not Read): nothing was sent, and only the event stream
 * (talosctl) can follow such a reboot.
 */
export class BootIdForbidden extends Error {
  constructor(readonly error: ToolError) {
    super(error.message);
    this.name = 'BootIdForbidden';
  }
}

/** Failures while the node is down or coming back: expected, the next read follows. */
function isOutage(e: unknown): boolean {
  if (!(e instanceof ToolError)) return false;
  if (e.kind === 'transport' || e.kind === 'timeout') return true;
  // a stream cut by the node going down (talosctl retries io.EOF and Canceled the same way)
  return /code = Canceled|\bEOF\b|RST_STREAM/.test(e.stderr);
}

export async function rebootOverApi(
  conn: TalosConnection,
  node: string,
  timeoutMs: number,
  opts: ApiRebootOptions = {},
): Promise<ApiRebootResult> {
  const { signal } = opts;
  const pollMs = opts.pollMs ?? 1000;
  const pollCallMs = opts.pollCallMs ?? 5000;
  const deadline = Date.now() + timeoutMs;
  const what = `${RPC.reboot.path} (node ${node} via ${conn.endpoint})`;
  const fail = (kind: 'timeout' | 'cancelled' | 'unparseable', why: string): ToolError =>
    new ToolError({ tool: 'talos-api', command: what, kind, exitCode: null, stderr: why, node, message: `${what}: ${why}` });
  const cancelled = () => fail('cancelled', 'cancelled: the run was stopped while the node rebooted');

  const bootId = async (callMs?: number): Promise<string> => {
    const chunks = await conn.stream('read', node, { path: BOOT_ID_PATH }, { timeoutMs: callMs, signal });
    const text = Buffer.concat(chunks.map((c) => (c.bytes as Buffer | undefined) ?? Buffer.alloc(0))).toString('utf8');
    return text.trim();
  };

  if (signal?.aborted) throw cancelled();
  const before = await bootIdBefore(node, deadline, { bootId, pollMs, pollCallMs, signal, cancelled, what });
  if (before === '') throw new RebootNotSentError(node, `${what}: not sent: ${BOOT_ID_PATH} is empty`);

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
      const now = await bootId(callMs);
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

/**
 * The boot id before the reboot, read again while its reads fail as an outage does (the node or the
 * endpoint away for a moment) until `deadline`. Nothing has been sent yet, so every way out but a
 * forbidden read (BootIdForbidden: talosctl follows such a reboot without the boot id) and a
 * cancellation is RebootNotSentError, with the last failure as its cause; a refused server
 * certificate stays the cause too, so the caller still stops the run on it.
 */
async function bootIdBefore(
  node: string,
  deadline: number,
  o: {
    bootId: (callMs?: number) => Promise<string>;
    pollMs: number;
    pollCallMs: number;
    signal?: AbortSignal;
    cancelled: () => ToolError;
    what: string;
  },
): Promise<string> {
  let attempts = 0;
  for (;;) {
    attempts++;
    const left = deadline - Date.now();
    try {
      // the first read gets the connection's own deadline; a read again, the poll's (never past the deadline)
      return await o.bootId(attempts === 1 ? undefined : Math.max(MIN_POLL_CALL_MS, Math.min(o.pollCallMs, left)));
    } catch (e) {
      if (o.signal?.aborted) throw o.cancelled();
      if (e instanceof ToolError && e.kind === 'forbidden') throw new BootIdForbidden(e);
      const retry = isOutage(e) && !(e instanceof ServerIdentityError) && deadline - Date.now() > o.pollMs + MIN_POLL_CALL_MS;
      if (!retry) {
        const tries = attempts === 1 ? 'once' : `${attempts} times`;
        throw new RebootNotSentError(
          node,
          `${o.what}: not sent: the boot id to compare with after the reboot could not be read (read ${tries}): ${errorMessage(e)}`,
          { cause: e },
        );
      }
      await sleep(o.pollMs, o.signal);
      if (o.signal?.aborted) throw o.cancelled();
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
