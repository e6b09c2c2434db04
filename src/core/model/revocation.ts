// The old-credential verdict as data: may the old registry credential be revoked now, and has the
// selection converged. The rule that reaches it, and why, is src/rules/revocation.ts; it lives here,
// below the rule, because the run's result (runResult.ts) carries it to the outputs, the summary and
// the report file. Plain data, no I/O.

/** Why a node still holds, or may hold, the old credential (the report file's schema takes its enum from here). */
export const HOLDER_KINDS = [
  'not-verified',
  'not-reached',
  'planned',
  'quarantined',
  'claimed',
  'proof-undecided',
  'refused',
  'failed',
] as const;
export type HolderKind = (typeof HOLDER_KINDS)[number];

export interface OldCredentialHolder {
  node: string;
  kind: HolderKind;
  /** one line a person reads */
  why: string;
  /** whether the `nodes` / `node-selector` inputs select it (false: this run does not roll it) */
  selected: boolean;
}

export interface RevocationVerdict {
  /** no node of the cluster can still hold the old credential (the `old-credential-revocable` output) */
  revocable: boolean;
  /** one line: why the answer is what it is */
  reason: string;
  /** the nodes of the cluster that hold or may hold the old credential, sorted by name; empty when revocable */
  holders: OldCredentialHolder[];
  /** how many nodes the run listed: every node of the cluster, each judged */
  judged: number;
  /** how many of them the `nodes` / `node-selector` inputs leave out (judged too) */
  outsideScope: number;
  /** every node the inputs select carries this revision's marker, none held (the `selection-converged` output); false when none is selected */
  selectionConverged: boolean;
}
