// The boot id read before the reboot, bounded on its own: the reboot's ready-timeout counts from the
// Reboot's answer (the wait for a different boot id), so reads that fail for a while before it must not
// spend it. Reads that fail as an outage does (the node or the Talos endpoint away for a moment:
// `transport`, `timeout`) are read again once a poll interval until BOOT_ID_READ_MS has passed; past it,
// or on any other failure, the reboot is not sent (RebootNotSentError): a node whose boot id cannot be
// read is never rebooted blind, since nothing could then tell its coming back from it never going down.
// A role that may not read it (`forbidden`, an os:operator certificate) is no such failure: talosctl
// follows that reboot by its event stream, without the boot id (docs/talos-api.md, "The reboot").
// The rule and its tests: __tests__/pipeline/bootIdBefore.test.ts; the time budget counts the bound
// (src/pipeline/deadlines.ts deadlinesOf, src/rules/budget.ts).
import { errorMessage, RebootNotSentError, ToolError } from '../core/errors.js';
import { formatDuration } from '../core/format.js';
import type { RunContext } from './context.js';

/** The pre-read's own bound: a minute rides out a Talos endpoint or apid restart; a node away longer is given back. */
export const BOOT_ID_READ_MS = 60_000;

/** the deadline of one read (the adapter's reads while the node comes back get 5 s each too) */
const BOOT_ID_CALL_MS = 5_000;

/** The boot id before the reboot; undefined when the role may not read it. Throws RebootNotSentError past the bound. */
export async function readBootIdBefore(ctx: RunContext, address: string, name: string): Promise<string | undefined> {
  const { clock } = ctx;
  const until = clock.now() + BOOT_ID_READ_MS;
  for (let reads = 1; ; reads++) {
    let id: string;
    try {
      id = await ctx.talos.bootId(address, Math.max(1, Math.min(BOOT_ID_CALL_MS, until - clock.now())));
    } catch (e) {
      if (e instanceof ToolError && e.kind === 'forbidden') return undefined;
      // a refused server certificate (ServerIdentityError, no ToolError) is no outage: it stays the cause
      const outage = e instanceof ToolError && (e.kind === 'transport' || e.kind === 'timeout');
      if (!outage || ctx.cancelled?.() || clock.now() + ctx.pollIntervalMs >= until) throw notSent(name, reads, errorMessage(e), e);
      await clock.sleep(ctx.pollIntervalMs);
      continue;
    }
    if (id === '') throw notSent(name, reads, 'the boot id read was empty');
    return id;
  }
}

function notSent(name: string, reads: number, why: string, cause?: unknown): RebootNotSentError {
  const tries = reads === 1 ? 'once' : `${reads} times within ${formatDuration(BOOT_ID_READ_MS)}`;
  return new RebootNotSentError(
    name,
    `not sent: the boot id to compare with after the reboot could not be read (read ${tries}): ${why}`,
    cause === undefined ? undefined : { cause },
  );
}
