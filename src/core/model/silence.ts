// The Alertmanager silence a roll holds (docs/alert-silence.md): its matchers as the API v2 carries
// them, and what the run says about it (the summary, the annotations and the report file name its id).
// Plain data, no I/O.

/** One matcher of a silence, as Alertmanager's API v2 `matcher` has it (api/v2/openapi.yaml). */
export interface SilenceMatcher {
  name: string;
  value: string;
  isRegex: boolean;
  /** false: `!=` / `!~` */
  isEqual: boolean;
}

/** A silence's matchers in Alertmanager's own syntax (`node=~"a|b"`), as a person reads them. */
export function matchersText(matchers: readonly SilenceMatcher[]): string {
  return matchers.map((m) => `${m.name}${m.isEqual ? '' : '!'}${m.isRegex ? '=~' : '='}${JSON.stringify(m.value)}`).join(', ');
}

/** What the roll did with its silences, for the summary, the annotations and the report file. */
export interface SilenceReport {
  /** the Alertmanager, as `alertmanager-url` names it (no user info: refused as an input) */
  alertmanager: string;
  /** one per matcher set, in the order of `alertmanager-matchers`; `id` the last one Alertmanager gave it, absent when never created */
  silences: Array<{ id?: string; matchers: string; state: 'expired' | 'left' | 'not-created' }>;
  /** every request that failed, said once each (an Alertmanager that cannot be reached is a warning, never a failure) */
  warnings: string[];
}
