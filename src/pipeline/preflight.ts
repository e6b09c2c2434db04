// The pre-flight check (docs/preflight.md), sequenced: run by src/pipeline/run.ts after its first
// listing, before the Lease and before any node is claimed (in apply only when a node is to be rolled),
// each host of the auth patch is asked with the new credential (the registry adapter), its answers
// judged (src/rules/preflight.ts), one log line each. The first host that is not `ok`
// stops the run with a PreflightError naming the host, what was asked and what was answered.
import { PreflightError } from '../core/errors.js';
import type { PreflightSummary, RegistryCheck } from '../core/model/preflight.js';
import type { PreflightTarget } from '../core/preflight.js';
import { judgePreflight } from '../rules/preflight.js';
import { PREFLIGHT_OFF, preflightLine } from '../report/preflight.js';

export interface PreflightPorts {
  /** the registry adapter's token flow for one host */
  check(target: PreflightTarget): Promise<RegistryCheck>;
  log(line: string): void;
}

/** The check is over before this returns: `lines` for the report; a PreflightError (carrying its lines) when a host is not ok. */
export async function runPreflight(
  enabled: boolean,
  targets: readonly PreflightTarget[],
  ports: PreflightPorts,
): Promise<PreflightSummary> {
  if (!enabled) {
    ports.log(PREFLIGHT_OFF);
    return { ran: false, lines: [PREFLIGHT_OFF] };
  }
  const lines: string[] = [];
  for (const target of targets) {
    const v = judgePreflight(await ports.check(target));
    const line = preflightLine(v);
    lines.push(line);
    ports.log(line);
    if (v.verdict !== 'ok') throw new PreflightError({ ...v, lines });
  }
  return { ran: true, lines };
}
