// What a failed talosctl run said, split per node and classified once, so nothing downstream matches
// on message text. Shapes (docs/talos-facts.md#t3-error-output):
//  - ≤1.13 unary (hashicorp go-multierror list format), usually behind a prefix such as
//    `error listing services: ` or, when some nodes answered, `WARNING: ` with exit 0:
//      `N errors occurred:\n\t* <node>: <grpc error>\n\t* …\n\n`
//    `get` puts the bare COSI error in the list (no node), one per failing node in `--nodes` order.
//  - ≤1.13 streaming (`ls`): `N errors occurred:\n <error>\n <error>` (no node, no trailing blank line).
//  - 1.14: `error from node <n>: <grpc error>` lines (also `error getting version from node <n>: …`).
//  - anything else: one message, possibly followed by a blank line and cobra's usage text when the
//    message contains `arg(s)`, `flag` or `command`.
import type { FailureCause } from '../../core/errors.js';

export interface TalosErrorItem {
  /** the node the error names, when it names one of the known nodes */
  node?: string;
  message: string;
  cause: FailureCause;
}

export interface TalosErrorReport {
  form: 'multi' | 'stream' | 'per-node' | 'plain' | 'none';
  /** text before the error list on its line, e.g. `error listing services: ` */
  prefix: string;
  items: TalosErrorItem[];
  /** `WARNING: …` lines that are not error lists (version skew and the like) */
  warnings: string[];
  /** cobra printed the usage text */
  usage: boolean;
}

const LIST_HEAD = /^(.*?)(\d+) errors? occurred:$/;
const PER_NODE = /^error(?: [^\n]*?)? (?:from|on) node (\S+): (.*)$/;

/**
 * Split talosctl's stderr into error items. `knownNodes` are the addresses passed to `--nodes`;
 * a `<node>: ` prefix is recognised only for them (an unknown word before `: ` stays message text).
 */
export function splitTalosErrors(stderr: string, knownNodes: readonly string[] = []): TalosErrorReport {
  const report: TalosErrorReport = { form: 'none', prefix: '', items: [], warnings: [], usage: false };
  let text = stderr.replace(/\r\n/g, '\n');
  const usageAt = text.search(/(^|\n)\nUsage:\n/);
  if (usageAt >= 0) {
    report.usage = true;
    text = text.slice(0, usageAt);
  }
  const lines = text.split('\n');
  const plain: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const head = LIST_HEAD.exec(line);
    if (head) {
      if (report.form === 'none' || report.form === 'plain') report.prefix = head[1];
      const next = lines[i + 1] ?? '';
      if (next.startsWith('\t* ')) {
        // hashicorp list: items start with `\t* `; a multi-line message continues unindented; the list ends at a blank line
        report.form = 'multi';
        let cur: string | undefined;
        i++;
        for (; i < lines.length; i++) {
          const l = lines[i];
          if (l.startsWith('\t* ')) {
            if (cur !== undefined) report.items.push(item(cur, knownNodes));
            cur = l.slice(3);
          } else if (l === '' && (lines[i + 1] === undefined || lines[i + 1] === '' || !lines[i + 1].startsWith('\t* '))) {
            break;
          } else {
            cur = `${cur ?? ''}\n${l}`;
          }
        }
        if (cur !== undefined) report.items.push(item(cur, knownNodes));
        continue;
      }
      // streaming list: one leading space per item, nothing after it
      report.form = report.form === 'multi' ? 'multi' : 'stream';
      let cur: string | undefined;
      i++;
      for (; i < lines.length; i++) {
        const l = lines[i];
        if (l.startsWith(' ')) {
          if (cur !== undefined) report.items.push(item(cur, knownNodes));
          cur = l.slice(1);
        } else if (l === '' || l.startsWith('WARNING: ') || LIST_HEAD.test(l)) {
          i--;
          break;
        } else {
          cur = `${cur ?? ''}\n${l}`;
        }
      }
      if (cur !== undefined) report.items.push(item(cur, knownNodes));
      continue;
    }
    if (line.startsWith('WARNING: ')) {
      report.warnings.push(line.slice('WARNING: '.length));
      continue;
    }
    const perNode = PER_NODE.exec(line);
    if (perNode) {
      report.form = report.form === 'none' || report.form === 'plain' ? 'per-node' : report.form;
      report.items.push({ node: perNode[1], message: perNode[2], cause: classifyTalosError(perNode[2]) });
      continue;
    }
    if (line === '' || /^Signal received, aborting/.test(line)) continue;
    plain.push(line);
  }
  if (report.items.length === 0 && plain.length > 0) {
    report.form = 'plain';
    const message = plain.join('\n');
    report.items.push({ message, cause: report.usage && !/rpc error: code = /.test(message) ? 'usage' : classifyTalosError(message) });
  }
  return report;
}

function item(text: string, knownNodes: readonly string[]): TalosErrorItem {
  // longest match first: `10.0.0.1` must not claim `10.0.0.11: …`
  const node = [...knownNodes].sort((a, b) => b.length - a.length).find((n) => text.startsWith(`${n}: `));
  const message = node ? text.slice(node.length + 2) : text;
  return { node, message, cause: classifyTalosError(message) };
}

const CODE_CAUSE: Record<string, FailureCause> = {
  Unavailable: 'transport',
  DeadlineExceeded: 'timeout',
  PermissionDenied: 'forbidden',
  Unauthenticated: 'forbidden',
  NotFound: 'not-found',
  AlreadyExists: 'conflict',
  Aborted: 'conflict',
  // `another apply configuration is already in progress`
  FailedPrecondition: 'conflict',
  // validation failures, `can't be applied in immediate mode`, `etcd status is only available on control plane nodes`
  InvalidArgument: 'invalid',
  OutOfRange: 'invalid',
  Unimplemented: 'invalid',
  ResourceExhausted: 'too-many-requests',
  Internal: 'server',
  DataLoss: 'server',
  Canceled: 'unknown',
};

/** Classify one error message (no node prefix). */
export function classifyTalosError(message: string): FailureCause {
  const code = /rpc error: code = (\w+)/.exec(message)?.[1];
  if (code === 'Unknown') {
    // plain Go errors from the server: `lstat …: no such file or directory`, `doesn't support restart …`
    if (/no such file or directory/.test(message)) return 'not-found';
    if (/permission denied/i.test(message)) return 'forbidden';
    return 'server';
  }
  if (code) return CODE_CAUSE[code] ?? 'unknown';
  if (/context deadline exceeded/.test(message)) return 'timeout';
  if (
    /connection refused|no route to host|i\/o timeout|connection reset|broken pipe|network is unreachable|\bEOF\b|transport:|handshake failed|\btls:|x509:|dial tcp/.test(
      message,
    )
  ) {
    return 'transport';
  }
  if (/failed to determine endpoints|error constructing client|not supported with multiple nodes|requires exactly one node/.test(message))
    return 'usage';
  if (/\barg\(s\)|\bflags?\b|\bcommand\b|unknown shorthand|invalid argument/.test(message)) return 'usage';
  if (/is not registered/.test(message)) return 'not-found';
  return 'unknown';
}

/** The cause of a whole failed run: our deadline first, then the first error talosctl reported. */
export function classifyTalosFailure(run: { exitCode: number | null; stderr: string; timedOut?: boolean }): FailureCause {
  if (run.timedOut) return 'timeout';
  if (run.exitCode === 127 && /ENOENT/.test(run.stderr)) return 'usage';
  const report = splitTalosErrors(run.stderr);
  if (report.usage && report.items.every((i) => !/rpc error: code = /.test(i.message))) return 'usage';
  return report.items[0]?.cause ?? 'unknown';
}
