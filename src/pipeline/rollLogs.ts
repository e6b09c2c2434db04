// Where the roll's lines go: NodeLogs (each node's lines grouped, src/report/nodeLog.ts) over the run's
// log port, or, one node at a time with no NodeLogs given (tests, benchmarks), straight through.
import { NodeLogs } from '../report/nodeLog.js';
import type { NodeLogsLike, RolloutDeps, RunContext } from './context.js';

/** The roll's logs: the ones given, else straight through with one node at a time, else NodeLogs over the run's log port. */
export function rollLogs(deps: RolloutDeps, ctx: RunContext): NodeLogsLike {
  const { maxUnavailable } = ctx.config;
  return deps.nodeLogs ?? ('count' in maxUnavailable && maxUnavailable.count === 1 ? passThrough(ctx.log) : new NodeLogs(sinkOf(ctx.log)));
}

/**
 * One node at a time and no NodeLogs given (tests, benchmarks): the port's group opens when the node
 * starts and closes when it ends, and lines go straight through, as before nodes ran in parallel.
 */
function passThrough(log: RunContext['log']): NodeLogsLike {
  return {
    info: (m) => log.info(m),
    forNode: (node) => ({
      node,
      info: (m) => log.info(m),
      progress: (m) => log.info(m),
      group: (title) => {
        const end = log.group(title);
        return () => end();
      },
    }),
    within: (_log, fn) => fn(),
    flushAll: () => undefined,
  };
}

/** NodeLogs over the rollout's own log port (tests, the demo): a group is the port's group. */
function sinkOf(log: RunContext['log']): ConstructorParameters<typeof NodeLogs>[0] {
  let end: (() => void) | undefined;
  return {
    info: (line) => log.info(line),
    startGroup: (title) => {
      end = log.group(title);
    },
    endGroup: () => end?.(),
  };
}
