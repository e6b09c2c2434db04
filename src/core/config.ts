// Every input parsed and validated into one typed Config before anything runs.
// Errors name the input, so a user knows which line of their workflow to fix.
import { isIP } from 'node:net';
import { InputError } from './errors.js';
import { parseLabelSelector, type LabelSelectorInput } from './labelSelector.js';
import { readPreflightInputs, type PreflightConfig } from './preflight.js';
import type { MaintenanceWindow } from './model/windows.js';
import { readWindowsInput, WINDOWS_INPUT } from './windows.js';
import { readGatesInputs, type GatesConfig } from './gates.js';
import { readSilenceInputs, type SilenceConfig } from './silence.js';

export type Mode = 'apply' | 'plan' | 'fences' | 'recover-fences';
export type RebootPolicy = 'evidence' | 'always';
export type Undrainable = 'stop' | 'quarantine';

export interface Config extends PreflightConfig, GatesConfig, SilenceConfig {
  mode: Mode;
  authPatch: string;
  /** the registry hosts to roll; empty: every host the auth patch names */
  registry: string[];
  revision: string;
  kubeconfig?: string;
  kubeContext?: string;
  talosconfig?: string;
  /** the name the Talos API server certificate must be valid for instead of the endpoint's host */
  talosServerName?: string;
  /** empty: all nodes */
  nodes: string[];
  /** `node-selector` parsed as the apiserver parses it; the run matches it against its one listing of every node */
  nodeSelector?: LabelSelectorInput;
  reboot: RebootPolicy;
  criConfigPaths: string[];
  evidenceMarginMs: number;
  claimAttempts: number;
  drainTimeoutMs: number;
  /** a drain that times out: `stop` the roll (release the node), or `quarantine` it and go on (src/rules/quarantine.ts) */
  undrainable: Undrainable;
  /** how long a drain waits for the workloads earlier drains evicted to be available again; 0: no wait */
  settleTimeoutMs: number;
  readyTimeoutMs: number;
  verifyImage?: string;
  verifyNamespace: string;
  criRestartWaitMs: number;
  annotationPrefix: string;
  leaseNamespace: string;
  leaseName: string;
  /** for the fences modes: looks up the state of the run that owns a fence */
  githubToken?: string;
  /** `max-unavailable` as given; resolveMaxUnavailable turns it into a count once the workers are known */
  maxUnavailable: MaxUnavailableSpec;
  /** node label whose values are never out two at once; undefined: none */
  topologyKey?: string;
  /** undefined: no budget */
  timeBudgetMs?: number;
  failOnPartial: boolean;
  /** `maintenance-windows`: a node starts only while one is open (docs/windows.md); empty or absent: always open */
  maintenanceWindows?: MaintenanceWindow[];
}

/** `max-unavailable`: a count of workers, or a whole percentage of the selected workers. */
export type MaxUnavailableSpec = { count: number } | { percent: number };

export type InputReader = (name: string) => string;

export const DEFAULT_CRI_CONFIG_PATHS = ['/etc/cri/conf.d/cri.toml', '/etc/cri/conf.d/01-registries.part'];

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parse a duration such as `90s`, `45m`, `1h`, `1h30m`, `500ms`; `input` names the input in the error. */
export function parseDuration(input: string, text: string): number {
  const t = text.trim();
  if (!/^(\d+(?:\.\d+)?(ms|s|m|h))+$/.test(t)) {
    throw new InputError(input, `"${text}" is not a duration (use e.g. 90s, 45m, 1h, 1h30m)`);
  }
  let total = 0;
  for (const m of t.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) total += Number(m[1]) * UNIT_MS[m[2]];
  return Math.round(total);
}

/**
 * The default `evidence-margin`: none (the comparison stays strict, so a tie never skips). The two
 * instants compared are stamps of one clock, machined's wall clock: between them a slew only changes
 * its rate (it never reverses two stamps), and a step (> 400 ms by Talos's time sync) or an inserted
 * leap second (1 s) is larger than any margin that would not also refuse the real 1.14 gaps of a few
 * ms; the clock checks guard those. The readings' own bounds carry each read path's precision.
 * Reasoned out in docs/talos-evidence-timing.md ("The margin").
 */
export const DEFAULT_EVIDENCE_MARGIN = '0ms';
export const DEFAULT_EVIDENCE_MARGIN_MS = parseDuration('evidence-margin', DEFAULT_EVIDENCE_MARGIN);

/**
 * A duration that must be longer than zero. Zero is not a short wait here: kubectl drain reads
 * `--timeout=0` as "wait forever", and a zero ready-timeout or cri-restart-wait would give up before
 * the node or cri could answer at all. (Negative values never pass `parseDuration`.) `evidence-margin`
 * is not one of these: its comparison is strict, so a zero margin is meaningful.
 */
function positiveDuration(input: string, text: string): number {
  const ms = parseDuration(input, text);
  if (ms <= 0) throw new InputError(input, `"${text}" must be longer than zero (e.g. 90s, 45m, 1h)`);
  return ms;
}

/** The default `settle-timeout`: how long the next drain waits for the evicted pods' controllers (src/rules/settle.ts). */
export const DEFAULT_SETTLE_TIMEOUT = '10m';

/** `settle-timeout`: a duration, or `0` (any zero duration) for no settle gate at all. */
function settleTimeout(text: string): number {
  return /^0+$/.test(text) ? 0 : parseDuration('settle-timeout', text);
}

function oneOf<T extends string>(input: string, value: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new InputError(input, `"${value}" is not one of ${allowed.join(', ')}`);
}

function positiveInt(input: string, value: string, max: number): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1 || Number(value) > max) {
    throw new InputError(input, `"${value}" must be a whole number from 1 to ${max}`);
  }
  return Number(value);
}

/** `node-selector` parsed once; a selector the apiserver would refuse is an input error before anything runs. */
function nodeSelector(text: string): LabelSelectorInput | undefined {
  if (!text) return undefined;
  try {
    return parseLabelSelector(text);
  } catch (e) {
    throw new InputError('node-selector', `${JSON.stringify(text)} is not a label selector: ${(e as Error).message}`);
  }
}
/** comma- or newline-separated list, blanks dropped */
export function parseList(text: string): string[] {
  return text
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean);
}

// Kubernetes annotation key prefixes are DNS subdomains (RFC 1123), at most 253 characters.
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function readConfig(get: InputReader): Config {
  const str = (name: string) => get(name).trim();
  const mode = oneOf<Mode>('mode', str('mode') || 'apply', ['apply', 'plan', 'fences', 'recover-fences']);
  const authPatch = str('auth-patch');
  if (!authPatch) throw new InputError('auth-patch', 'is required: the path of the Talos machine-config patch carrying the credential');
  const revision = str('revision');
  if (!revision) throw new InputError('revision', 'is required: a non-secret identifier of this credential version');
  if (revision.length > 200 || /[\n\r]/.test(revision)) {
    throw new InputError('revision', 'must be a single line of at most 200 characters (it is stored in a node annotation)');
  }
  const annotationPrefix = str('annotation-prefix') || 'registry-auth-rollout';
  if (annotationPrefix.length > 253 || !DNS_SUBDOMAIN.test(annotationPrefix)) {
    throw new InputError('annotation-prefix', `"${annotationPrefix}" is not a DNS subdomain, so it cannot prefix an annotation key`);
  }
  const criPaths = parseList(get('cri-config-paths') ?? '');
  for (const p of criPaths) {
    if (!p.startsWith('/')) throw new InputError('cri-config-paths', `"${p}" is not an absolute path`);
  }
  const verifyImage = str('verify-image') || undefined;
  return {
    mode,
    authPatch,
    registry: [...new Set(parseList(get('registry') ?? ''))],
    revision,
    kubeconfig: str('kubeconfig') || undefined,
    kubeContext: str('kube-context') || undefined,
    talosconfig: str('talosconfig') || undefined,
    talosServerName: serverName('talos-server-name', str('talos-server-name')),
    nodes: parseList(get('nodes') ?? ''),
    nodeSelector: nodeSelector(str('node-selector')),
    reboot: oneOf<RebootPolicy>('reboot', str('reboot') || 'evidence', ['evidence', 'always']),
    criConfigPaths: criPaths.length ? criPaths : DEFAULT_CRI_CONFIG_PATHS,
    evidenceMarginMs: parseDuration('evidence-margin', str('evidence-margin') || DEFAULT_EVIDENCE_MARGIN),
    claimAttempts: positiveInt('claim-attempts', str('claim-attempts') || '5', 50),
    drainTimeoutMs: positiveDuration('drain-timeout', str('drain-timeout') || '45m'),
    undrainable: oneOf<Undrainable>('undrainable', str('undrainable') || 'stop', ['stop', 'quarantine']),
    settleTimeoutMs: settleTimeout(str('settle-timeout') || DEFAULT_SETTLE_TIMEOUT),
    readyTimeoutMs: positiveDuration('ready-timeout', str('ready-timeout') || '10m'),
    verifyImage,
    verifyNamespace: str('verify-namespace') || 'kube-system',
    criRestartWaitMs: positiveDuration('cri-restart-wait', str('cri-restart-wait') || '60s'),
    annotationPrefix,
    leaseNamespace: str('lease-namespace') || 'kube-system',
    leaseName: str('lease-name') || 'registry-auth-rollout',
    githubToken: str('github-token') || undefined,
    ...readParallelInputs(str),
    ...readPreflightInputs(str, BOOLEANS),
    maintenanceWindows: readWindowsInput(get(WINDOWS_INPUT) ?? '', parseDuration),
    ...readGatesInputs(str, BOOLEANS, parseDuration),
    ...readSilenceInputs(str, parseDuration),
  };
}

// Several workers at once (docs/parallel.md). A label key is `[prefix/]name`: the prefix a DNS
// subdomain, the name at most 63 characters of alphanumerics, `-`, `_`, `.`, alphanumeric at both ends.
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
// The spellings @actions/core's getBooleanInput accepts (YAML 1.2 core schema), so no action differs.
const BOOLEANS = new Map([
  ...['true', 'True', 'TRUE'].map((t) => [t, true] as const),
  ...['false', 'False', 'FALSE'].map((f) => [f, false] as const),
]);

function readParallelInputs(
  str: (name: string) => string,
): Pick<Config, 'maxUnavailable' | 'topologyKey' | 'timeBudgetMs' | 'failOnPartial'> {
  const topologyKey = str('topology-key') || undefined;
  if (topologyKey !== undefined) {
    const slash = topologyKey.lastIndexOf('/');
    const prefix = slash < 0 ? undefined : topologyKey.slice(0, slash);
    if (!LABEL_NAME.test(topologyKey.slice(slash + 1)) || (prefix !== undefined && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)))) {
      throw new InputError('topology-key', `"${topologyKey}" is not a node label key (e.g. topology.kubernetes.io/zone)`);
    }
  }
  const budget = str('time-budget');
  const timeBudgetMs = budget ? parseDuration('time-budget', budget) : undefined;
  if (timeBudgetMs === 0) throw new InputError('time-budget', `"${budget}" must be longer than zero (leave it empty for no budget)`);
  const failOnPartial = BOOLEANS.get(str('fail-on-partial') || 'false');
  if (failOnPartial === undefined) throw new InputError('fail-on-partial', `"${str('fail-on-partial')}" is not true or false`);
  return { maxUnavailable: parseMaxUnavailable(str('max-unavailable') || '1'), topologyKey, timeBudgetMs, failOnPartial };
}

/**
 * A whole number ≥ 1, or a whole percentage from 1% to 100%. Above 100% is refused rather than
 * capped: 100% already means every worker, so a larger number is a typo a user should see.
 */
export function parseMaxUnavailable(text: string): MaxUnavailableSpec {
  const m = /^(\d+)(%?)$/.exec(text.trim());
  const n = m ? Number(m[1]) : NaN;
  if (m?.[2] && n >= 1 && n <= 100) return { percent: n };
  if (m && !m[2] && n >= 1 && Number.isSafeInteger(n)) return { count: n };
  throw new InputError('max-unavailable', `"${text}" must be a whole number ≥ 1 or a percentage from 1% to 100% of the selected workers`);
}

/** Workers allowed out at once: a percentage of `workerCount` rounded down, never less than 1. */
export function resolveMaxUnavailable(spec: MaxUnavailableSpec, workerCount: number): number {
  return 'count' in spec ? spec.count : Math.max(1, Math.floor((spec.percent * workerCount) / 100));
}

/** A TLS server name: a host name or an IP address, without a scheme or a port. */
function serverName(input: string, v: string): string | undefined {
  if (!v) return undefined;
  if (isIP(v) || /^[A-Za-z0-9_*]([A-Za-z0-9_.-]*[A-Za-z0-9_])?\.?$/.test(v)) return v;
  throw new InputError(input, `"${v}" is not a host name or an IP address (give the name alone: no scheme, no port)`);
}
