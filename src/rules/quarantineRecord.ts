// The `<prefix>/quarantined` annotation's value: a JSON object (QuarantineRecord) that a quarantine
// writes and a later run, `mode: fences` and a person read. Its own file so the claim rule can read
// it without importing the quarantine's patch builders (which import the claim rule). Pure.
import type { AnnotationKeys, NodeState } from '../core/model/node.js';
import type { DrainBlocker } from '../core/model/record.js';

/** The value of the `quarantined` annotation, parsed. `v` is the format's version (today 1). */
export interface QuarantineRecord {
  v: 1;
  /** why: today only a drain that timed out */
  reason: 'drain-timeout';
  /** the drain-timeout that ran out, as the one duration formatter writes it (e.g. `45m0s`, `10.0 s`) */
  drainTimeout: string;
  /** what kept the drain from finishing: the PDBs and their pods (empty when nothing could be named) */
  blockedBy: DrainBlocker[];
  /** when the quarantine was written (ISO, the runner's clock) */
  at: string;
  /** the owner token of the run that quarantined it (repository, run id, attempt: `mode: fences` links it) */
  run: string;
  /** whether the node was cordoned before the FIRST run that quarantined it: what lifting it restores */
  wasCordoned: boolean;
}

/**
 * The annotation's text: JSON with a fixed key order, so two runs writing the same facts write the
 * same bytes and a person reading `kubectl get node -o yaml` sees the reason first.
 */
export function formatQuarantine(r: QuarantineRecord): string {
  const blockedBy = r.blockedBy.map((b) => ({
    ...(b.pdb !== undefined ? { pdb: b.pdb } : {}),
    ...(b.status ? { status: b.status } : {}),
    pods: b.pods,
  }));
  return JSON.stringify({
    v: r.v,
    reason: r.reason,
    drainTimeout: r.drainTimeout,
    blockedBy,
    at: r.at,
    run: r.run,
    wasCordoned: r.wasCordoned,
  });
}

export type ParsedQuarantine = { ok: true; record: QuarantineRecord } | { ok: false; error: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

function parseBlocker(v: unknown): DrainBlocker | undefined {
  if (!isObject(v) || !isStringList(v.pods)) return undefined;
  if (v.pdb !== undefined && typeof v.pdb !== 'string') return undefined;
  const b: DrainBlocker = { pods: [...v.pods] };
  if (typeof v.pdb === 'string') b.pdb = v.pdb;
  const s = v.status;
  if (isObject(s) && [s.disruptionsAllowed, s.currentHealthy, s.desiredHealthy].every((n) => typeof n === 'number')) {
    b.status = {
      disruptionsAllowed: s.disruptionsAllowed as number,
      currentHealthy: s.currentHealthy as number,
      desiredHealthy: s.desiredHealthy as number,
    };
  }
  return b;
}

/**
 * The annotation's text back into a record. Only `wasCordoned` decides anything later (what the
 * verified release restores), so it must be a boolean; a record without it, or text that is not
 * such JSON, is an error the caller must handle conservatively (see quarantineOf).
 */
export function parseQuarantine(text: string): ParsedQuarantine {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { ok: false, error: 'it is not JSON' };
  }
  if (!isObject(v)) return { ok: false, error: 'it is not a JSON object' };
  if (v.v !== 1) return { ok: false, error: `format version ${JSON.stringify(v.v)} is not 1` };
  if (typeof v.wasCordoned !== 'boolean') return { ok: false, error: 'wasCordoned is not true or false' };
  const blockers = Array.isArray(v.blockedBy) ? v.blockedBy.map(parseBlocker) : [];
  return {
    ok: true,
    record: {
      v: 1,
      reason: 'drain-timeout',
      drainTimeout: typeof v.drainTimeout === 'string' ? v.drainTimeout : '',
      blockedBy: blockers.filter((b): b is DrainBlocker => !!b),
      at: typeof v.at === 'string' ? v.at : '',
      run: typeof v.run === 'string' ? v.run : '',
      wasCordoned: v.wasCordoned,
    },
  };
}

/**
 * What the node's `quarantined` annotation says: undefined when it has none. A quarantined node is
 * cordoned BECAUSE of the quarantine, so its spec says nothing about the time before; that comes
 * from the record. An annotation that does not parse counts as "was cordoned" (`wasCordoned: true`,
 * with the error): lifting it then never uncordons a node that may have been cordoned on purpose.
 */
export function quarantineOf(
  node: Pick<NodeState, 'annotations'>,
  keys: Pick<AnnotationKeys, 'quarantined'>,
): { text: string; wasCordoned: boolean; record?: QuarantineRecord; error?: string } | undefined {
  const text = node.annotations[keys.quarantined];
  if (text === undefined) return undefined;
  const parsed = parseQuarantine(text);
  return parsed.ok
    ? { text, wasCordoned: parsed.record.wasCordoned, record: parsed.record }
    : { text, wasCordoned: true, error: parsed.error };
}
