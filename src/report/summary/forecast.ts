// A node's drain forecast in its details block of the job summary (plan mode): what would block its
// drain now, each cluster-supplied name escaped.
import type { DrainForecast } from '../../core/model/record.js';
import { forecastLines } from '../forecast.js';
import { e, MAX_TEXT } from './cells.js';

export function renderForecast(f: DrainForecast): string {
  const head = `<p><b>Drain forecast</b> (dry-run evictions, nothing evicted): ${f.ok ? 'would go through now' : '<b>would not go through now</b>'}</p>`;
  return `${head}\n<ul>${forecastLines(f)
    .map((l) => `<li>${e(l, MAX_TEXT)}</li>`)
    .join('')}</ul>`;
}
