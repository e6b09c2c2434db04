// Text formats of talosctl v1.13.8 and the libraries it prints through. The clock-dependent parts
// (Go durations, ls LASTMOD) and text/tabwriter live in sim/bin/talosfmt.cjs, because the fake
// executable renders them with its own clock; they are re-exported here so there is one copy.
import { createRequire } from 'node:module';

type TalosFmt = typeof import('../bin/talosfmt.cjs');

const require = createRequire(import.meta.url);
const shared = require('../bin/talosfmt.cjs') as TalosFmt;

export const { agoMark, lsTimeMark, goDurationSeconds, roundToSecond, agoText, lsTimeText, resolveMarks, tabwrite, humanizeTimeMark } =
  shared;

/** `rpc error: code = <Code> desc = <message>` as grpc-go's status error prints. */
export function grpcError(code: string, desc: string): string {
  return `rpc error: code = ${code} desc = ${desc}`;
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** The Unavailable text apid reports for a node it cannot dial (grpc-go transport wording). */
export function unavailableError(node: string): string {
  const dial =
    IPV4.test(node) || node.includes(':')
      ? `dial tcp ${node.includes(':') && !IPV4.test(node) ? `[${node}]` : node}:50000: connect: connection refused`
      : `dial tcp: lookup ${node}: no such host`;
  return grpcError('Unavailable', `connection error: desc = "transport: Error while dialing: ${dial}"`);
}

/** hashicorp/go-multierror's default ListFormatFunc, as talosctl ≤1.13 wraps per-node errors. */
export function multiError(errors: string[]): string {
  if (errors.length === 1) return `1 error occurred:\n\t* ${errors[0]}\n\n`;
  return `${errors.length} errors occurred:\n\t${errors.map((e) => `* ${e}`).join('\n\t')}\n\n`;
}

/** helpers.AppendErrors: the formatter streaming commands (ls) use; no node name, no trailing blank line. */
export function streamMultiError(errors: string[]): string {
  const count = errors.length === 1 ? '1 error' : `${errors.length} errors`;
  return `${count} occurred:\n${errors.map((e) => ` ${e}`).join('\n')}`;
}

/** dustin/go-humanize Bytes (SI units). */
export function humanizeBytes(n: number): string {
  const sizes = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB'];
  if (n < 10) return `${n} B`;
  const e = Math.floor(Math.log(n) / Math.log(1000));
  const suffix = sizes[e];
  const val = Math.floor((n / 1000 ** e) * 10 + 0.5) / 10;
  return val < 10 ? `${val.toFixed(1)} ${suffix}` : `${val.toFixed(0)} ${suffix}`;
}

/** Go time.Format(time.RFC3339) of a UTC instant (fraction truncated). */
export function rfc3339(ms: number): string {
  const d = new Date(Math.floor(ms / 1000) * 1000);
  const iso = d.toISOString();
  return `${iso.slice(0, 19)}Z`;
}

/** Go's %q for a string (strconv.Quote), sufficient for printable ASCII and common escapes. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** Go's %q for a []string: `["a" "b"]`. */
export function goQuoteSlice(items: string[]): string {
  return `[${items.map(goQuote).join(' ')}]`;
}
