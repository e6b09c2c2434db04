// A GitHub workflow run attempt's state as the fences rule judges it (src/rules/fences.ts): read by the
// GitHub adapter (src/adapters/github.ts, which re-exports it), defined here so the rule needs no
// adapter. Plain data, no I/O.

export type RunState = 'queued' | 'in_progress' | 'completed' | 'unknown';

export interface RunAttemptInfo {
  state: RunState;
  /** GitHub's conclusion (success, failure, cancelled, …) once completed */
  conclusion?: string;
  /** the run attempt's page, for people */
  url: string;
  /** why the state is unknown */
  error?: string;
}
