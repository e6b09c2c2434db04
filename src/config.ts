// Every input parsed and validated into one typed Config before anything runs.
// Errors name the input, so a user knows which line of their workflow to fix.
import { InputError } from './errors.js';

export type Mode = 'apply' | 'plan' | 'fences' | 'recover-fences';
export type RebootPolicy = 'evidence' | 'always';

export interface Config {
  mode: Mode;
  authPatch: string;
  /** empty: the single host the patch names */
  registry: string;
  revision: string;
  kubeconfig?: string;
  kubeContext?: string;
  talosconfig?: string;
  /** empty: all nodes */
  nodes: string[];
  nodeSelector?: string;
  reboot: RebootPolicy;
  criConfigPaths: string[];
  evidenceMarginMs: number;
  claimAttempts: number;
  drainTimeoutMs: number;
  readyTimeoutMs: number;
  verifyImage?: string;
  verifyNamespace: string;
  criRestartWaitMs: number;
  annotationPrefix: string;
  leaseNamespace: string;
  leaseName: string;
  /** for the fences modes: looks up the state of the run that owns a fence */
  githubToken?: string;
}

export type InputReader = (name: string) => string;

export const DEFAULT_CRI_CONFIG_PATHS = ['/etc/cri/conf.d/cri.toml', '/etc/cri/conf.d/01-registries.part'];

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parse a duration such as `90s`, `45m`, `1h`, `1h30m`, `500ms`; `input` names the input in the error. */
/**
 * The default `evidence-margin`: the instants compared are machined's wall clock, which Talos slews
 * (never reversing two instants) below a 400 ms offset and steps above it; no margin covers a step,
 * the clock checks do. What is left is noise an exact reading does not have (README, decision rules).
 */
export const DEFAULT_EVIDENCE_MARGIN = '10ms';
export const DEFAULT_EVIDENCE_MARGIN_MS = 10;

export function parseDuration(input: string, text: string): number {
  const t = text.trim();
  if (!/^(\d+(?:\.\d+)?(ms|s|m|h))+$/.test(t)) {
    throw new InputError(input, `"${text}" is not a duration (use e.g. 90s, 45m, 1h, 1h30m)`);
  }
  let total = 0;
  for (const m of t.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) total += Number(m[1]) * UNIT_MS[m[2]];
  return Math.round(total);
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
    registry: str('registry'),
    revision,
    kubeconfig: str('kubeconfig') || undefined,
    kubeContext: str('kube-context') || undefined,
    talosconfig: str('talosconfig') || undefined,
    nodes: parseList(get('nodes') ?? ''),
    nodeSelector: str('node-selector') || undefined,
    reboot: oneOf<RebootPolicy>('reboot', str('reboot') || 'evidence', ['evidence', 'always']),
    criConfigPaths: criPaths.length ? criPaths : DEFAULT_CRI_CONFIG_PATHS,
    evidenceMarginMs: parseDuration('evidence-margin', str('evidence-margin') || DEFAULT_EVIDENCE_MARGIN),
    claimAttempts: positiveInt('claim-attempts', str('claim-attempts') || '5', 50),
    drainTimeoutMs: parseDuration('drain-timeout', str('drain-timeout') || '45m'),
    readyTimeoutMs: parseDuration('ready-timeout', str('ready-timeout') || '10m'),
    verifyImage,
    verifyNamespace: str('verify-namespace') || 'kube-system',
    criRestartWaitMs: parseDuration('cri-restart-wait', str('cri-restart-wait') || '60s'),
    annotationPrefix,
    leaseNamespace: str('lease-namespace') || 'kube-system',
    leaseName: str('lease-name') || 'registry-auth-rollout',
    githubToken: str('github-token') || undefined,
  };
}
