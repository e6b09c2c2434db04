// The job summary's timeline as the text a reader sees: the <pre> block after its heading, with
// the HTML entities the summary escaped turned back into characters (the demo prints it, the e2e
// tests read it). Dev tooling: the summary itself is built by src/report/timeline.ts.
import { TIMELINE_HEADING } from '../src/report/timeline.js';

const NAMED: Record<string, string> = { lt: '<', gt: '>', quot: '"', amp: '&' };

/** The timeline's lines, or undefined when the summary has none (plan mode, nothing started). */
export function timelineOf(summaryHtml: string): string | undefined {
  const at = summaryHtml.indexOf(TIMELINE_HEADING);
  if (at < 0) return undefined;
  const open = summaryHtml.indexOf('<pre>', at);
  const close = summaryHtml.indexOf('</pre>', open);
  if (open < 0 || close < 0) return undefined;
  return summaryHtml
    .slice(open + '<pre>'.length, close)
    .replace(/&(?:(lt|gt|quot|amp)|#(\d+));/g, (_, name: string | undefined, code: string | undefined) =>
      name ? NAMED[name] : String.fromCharCode(Number(code)),
    );
}
