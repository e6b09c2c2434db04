// What the job summary is rendered from (src/report/summary.ts), in a file of its own so the sections
// (head.ts, …) take its shape without importing the file that imports them.
import type { RolloutView } from '../../core/model/rolloutResult.js';

/**
 * What the summary renders: the run's result as text tells it (src/core/model/rolloutResult.ts), every
 * fact but what ran and how it ended optional; `upToDate` also as a bare count.
 */
export type SummaryInput = Omit<RolloutView, 'upToDate'> & { upToDate?: number | readonly string[] };
