// The pre-flight check as the log and the job summary say it: one line per host, and a failed check
// as the summary of a run that stopped before anything was claimed. Pure.
import type { PreflightVerdict } from '../core/model/preflight.js';
import { e } from './summary/cells.js';

const LOGIN_ONLY = 'a login proves less than a pull: set preflight-image (or verify-image) to HEAD a manifest';

/** One host's verdict in one line: `pre-flight: ghcr.io token flow + manifest HEAD of org/app:tag: ok`. */
export function preflightLine(v: PreflightVerdict): string {
  if (v.verdict === 'withheld') return `pre-flight: ${v.host} refused to send the new credential: asked ${v.asked}; ${v.answered}`;
  if (v.verdict !== 'ok') return `pre-flight: ${v.host} ${v.verdict}: asked ${v.asked}; answered ${v.answered}`;
  if (v.proves === 'login') return `pre-flight: ${v.host} ${v.what}: ok (${LOGIN_ONLY})`;
  if (v.proves === 'none') return `pre-flight: ${v.host} ${v.what}: ok (nothing about the credential is proven)`;
  return `pre-flight: ${v.host} ${v.what}: ok`;
}

/** The line of `preflight: false`. */
export const PREFLIGHT_OFF = 'pre-flight: off (preflight: false): the new credential was not checked against the registry before the roll';

/** The summary's section: the lines, escaped (a registry's answer is not ours). */
export function renderPreflight(lines: readonly string[]): string {
  return `<p><b>Pre-flight:</b><br>${lines.map((l) => e(l.replace(/^pre-flight: /, ''), 2000)).join('<br>')}</p>`;
}

/** The whole summary of a run the check stopped: nothing was claimed. */
export function renderPreflightStop(lines: readonly string[], message: string): string {
  return [
    '<h2>Registry auth rollout: stopped by the pre-flight check</h2>',
    renderPreflight(lines),
    `<p><b>Error:</b> ${e(message, 8000)}</p>`,
    '<p>No node was claimed, drained, patched or rebooted, and no Lease was taken.</p>',
    '',
  ].join('\n\n');
}
