// The Alertmanager silence's inputs (docs/alert-silence.md): `alertmanager-url` (empty: no silence),
// `alertmanager-token`, `alertmanager-ca-file`, `alertmanager-matchers` and `alertmanager-silence-tail`,
// validated with the other inputs, before anything runs; and the matchers of each silence for the
// nodes a roll selected. Pure: the CA file is read by the shell, only when a silence is about to be
// created (src/action/inputs.ts `readAlertmanagerTransport`). Its own file so config.ts only spreads it in.
import { InputError } from './errors.js';
import type { NodeState } from './model/node.js';
import type { SilenceMatcher } from './model/silence.js';

/** Where a matcher's value takes the rolled nodes: their names and InternalIP addresses, as one regex alternation. */
export const NODES_PLACEHOLDER = '$NODES';

/**
 * The default `alertmanager-matchers`: two silences, since Alertmanager ANDs the matchers of one
 * silence and a node-down alert carries one of two labels: `node` (kube-state-metrics' node alerts,
 * KubeNodeNotReady, KubeNodeUnreachable; the kubelet's) or `instance` (node-exporter's, which
 * kube-prometheus-stack relabels to the node's name; a scrape target's `address:port`).
 */
export const DEFAULT_MATCHERS = [`node=~"${NODES_PLACEHOLDER}"`, `instance=~"(${NODES_PLACEHOLDER})(:[0-9]+)?"`];

/** The default `alertmanager-silence-tail`: how long a silence outlives a run killed without its post step. */
export const DEFAULT_SILENCE_TAIL = '15m';
export const DEFAULT_SILENCE_TAIL_MS = 15 * 60_000;

export interface SilenceConfig {
  /** `alertmanager-url`, without a trailing slash (a path prefix kept: `--web.route-prefix`); undefined: no silence */
  alertmanagerUrl?: string;
  /** `alertmanager-token`: sent as `Authorization: Bearer`, over https only (a secret: registered by the shell) */
  alertmanagerToken?: string;
  /** `alertmanager-ca-file`: a PEM bundle added to Node's default CAs for the Alertmanager's requests */
  alertmanagerCaFile?: string;
  /** one silence per line of `alertmanager-matchers` (each a list of matchers, ANDed), `$NODES` not yet expanded */
  alertmanagerMatchers?: SilenceMatcher[][];
  /** `alertmanager-silence-tail` */
  silenceTailMs?: number;
}

/** Reads the inputs; throws an InputError naming the input. Without `alertmanager-url` the others are not read. */
export function readSilenceInputs(str: (name: string) => string, parseDuration: (input: string, text: string) => number): SilenceConfig {
  const url = str('alertmanager-url');
  if (!url) return {};
  const token = str('alertmanager-token') || undefined;
  if (token && /[\r\n]/.test(token))
    throw new InputError('alertmanager-token', 'must be a single line (it is sent as an Authorization: Bearer header)');
  const alertmanagerUrl = alertmanagerUrlInput(url, !!token);
  const lines = str('alertmanager-matchers')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const tail = str('alertmanager-silence-tail') || DEFAULT_SILENCE_TAIL;
  const silenceTailMs = parseDuration('alertmanager-silence-tail', tail);
  if (silenceTailMs < 1000) throw new InputError('alertmanager-silence-tail', `"${tail}" must be at least 1s`);
  return {
    alertmanagerUrl,
    ...(token ? { alertmanagerToken: token } : {}),
    ...(str('alertmanager-ca-file') ? { alertmanagerCaFile: str('alertmanager-ca-file') } : {}),
    alertmanagerMatchers: (lines.length ? lines : DEFAULT_MATCHERS).map((l) => parseMatcherLine(l)),
    silenceTailMs,
  };
}

function alertmanagerUrlInput(text: string, withToken: boolean): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InputError('alertmanager-url', 'is not a URL (e.g. https://alertmanager.monitoring.svc:9093)');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new InputError('alertmanager-url', `the scheme ${url.protocol} is not http or https`);
  // a user or password in the URL would be printed wherever the URL is: the token has its own input
  if (url.username || url.password)
    throw new InputError('alertmanager-url', 'must not carry a user or password: give a bearer token in alertmanager-token');
  if (url.search || url.hash)
    throw new InputError('alertmanager-url', 'must not carry a query or a fragment (the base URL, with its route prefix if any)');
  // credentialRoute's first rule, for this input: a token never travels in clear text
  if (withToken && url.protocol !== 'https:') {
    throw new InputError(
      'alertmanager-url',
      'is plain http, and alertmanager-token is set: the token would travel in clear text; use https',
    );
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

// Alertmanager's label names (model.LabelName IsValid, the classic rule) and its matcher syntax
// (`name="v"`, `=~`, `!=`, `!~`; a value quoted as in amtool, or bare without `,`, `"` or blanks).
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const MATCHER = /^\s*([^\s=!~"]+)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*"|[^\s,"]*)\s*(?:,|$)/;

/** One line of `alertmanager-matchers`: the matchers of one silence, comma-separated, in braces or not. */
export function parseMatcherLine(line: string): SilenceMatcher[] {
  const input = 'alertmanager-matchers';
  let rest = line.trim();
  if (rest.startsWith('{') && rest.endsWith('}')) rest = rest.slice(1, -1);
  const matchers: SilenceMatcher[] = [];
  while (rest.trim()) {
    const m = MATCHER.exec(rest);
    if (!m)
      throw new InputError(
        input,
        `${JSON.stringify(line)} is not a list of matchers (name="value", name=~"regex", name!="value", name!~"regex")`,
      );
    rest = rest.slice(m[0].length);
    const [, name, op, raw] = m;
    if (!LABEL_NAME.test(name)) throw new InputError(input, `${JSON.stringify(name)} is not a label name ([a-zA-Z_][a-zA-Z0-9_]*)`);
    const value = raw.startsWith('"') ? (JSON.parse(raw) as string) : raw;
    const isRegex = op.endsWith('~');
    if (value.includes(NODES_PLACEHOLDER) && !isRegex) {
      throw new InputError(
        input,
        `${name}${op}: ${NODES_PLACEHOLDER} stands for a regex alternation of the rolled nodes, so it goes only in a =~ or !~ matcher`,
      );
    }
    if (isRegex) {
      try {
        new RegExp(`^(?:${value.replaceAll(NODES_PLACEHOLDER, 'x')})$`);
      } catch {
        throw new InputError(input, `${name}${op}${JSON.stringify(value)}: not a regular expression`);
      }
    }
    matchers.push({ name, value, isRegex, isEqual: !op.startsWith('!') });
  }
  if (matchers.length === 0) throw new InputError(input, `${JSON.stringify(line)} holds no matcher`);
  // Alertmanager refuses a silence all of whose matchers match the empty string (silence.go validateSilence): it would silence every alert
  if (matchers.every((m) => matchesEmpty(m))) {
    throw new InputError(
      input,
      `${JSON.stringify(line)}: at least one matcher must not match the empty string (Alertmanager refuses a silence of every alert)`,
    );
  }
  return matchers;
}

/** silence.go `matchesEmpty`: `=` of "" and a `=~` whose regex matches ""; `$NODES` stands for at least one name. */
function matchesEmpty(m: SilenceMatcher): boolean {
  if (!m.isEqual) return false;
  if (!m.isRegex) return m.value === '';
  return new RegExp(`^(?:${m.value.replaceAll(NODES_PLACEHOLDER, 'x')})$`).test('');
}

/** A string as a regex matching it alone (RE2 and JS agree on these escapes). */
export function regexQuote(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The matchers of each silence for the rolled nodes: `$NODES` becomes `name1|ip1|name2|…`, each quoted, sorted, once each. */
export function silenceMatchers(
  sets: readonly SilenceMatcher[][],
  nodes: readonly Pick<NodeState, 'name' | 'internalIPs'>[],
): SilenceMatcher[][] {
  const alternatives = [...new Set(nodes.flatMap((n) => [n.name, ...n.internalIPs]))].sort().map(regexQuote).join('|');
  return sets.map((set) => set.map((m) => ({ ...m, value: m.value.replaceAll(NODES_PLACEHOLDER, alternatives) })));
}
