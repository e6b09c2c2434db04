// Everything the action reads from its runner, in one place: the inputs (→ a validated Config), the
// auth-patch file (read and parsed once, into the one AuthPatch value the run is handed: its file for
// talosctl, the desired credential, its secrets, its form), the run's identity and web root, and the
// test knobs. Nothing below the shell reads `process.env` or @actions/core: it is handed what is read here.
import { readFileSync } from 'node:fs';
import { readConfig, type Config } from '../core/config.js';
import { parseAuthPatch, type AuthPatch } from '../core/authPatch.js';
import { InputError } from '../core/errors.js';
import { preflightTargets, type PreflightTarget } from '../core/preflight.js';
import { readProxyEnv, type ProxyEnv } from '../core/proxyEnv.js';
import { formatOwnerToken, githubServerUrl, newOwnerToken } from '../core/owner.js';

/** Test and demo knobs (the twin is faster than a cluster); production uses the defaults. */
export interface TestKnobs {
  /** RAR_POLL_INTERVAL_MS: interval of the post-reboot and probe polls; undefined: the pipeline's default */
  pollIntervalMs?: number;
  /** RAR_RELIST_PAUSE_MS: pause between the two empty listings that end a run */
  relistPauseMs: number;
  /** RAR_LEASE_RENEW_MS: how often the run Lease is renewed; undefined: RunLock's default */
  leaseRenewMs?: number;
  /** RAR_LEASE_DURATION_S: the run Lease's duration (seconds) this run writes; undefined: LEASE_DURATION_SECONDS */
  leaseDurationS?: number;
}

export interface ActionInputs {
  config: Config;
  /** the auth patch, read and parsed once: the file, the desired credential, its secrets (registered already), its form */
  authPatch: AuthPatch;
  /** this run's claim token (repository, run id, attempt, nonce) */
  owner: string;
  /** GITHUB_SERVER_URL (else github.com) and GITHUB_API_URL (undefined: api.github.com): the web root of run links and the API the fences modes ask */
  github: { serverUrl?: string; apiUrl?: string };
  knobs: TestKnobs;
  /**
   * the pre-flight check's hosts to ask (their credentials are secrets); what the requests go through
   * (the CAs, the proxies) is read only when one is about to be made: `readRegistryTransport`
   */
  preflight: { targets: PreflightTarget[] };
}

/**
 * What the pre-flight's requests go through: the CA bundle read from `registry-ca-file` and, beside it,
 * the runner's NODE_EXTRA_CA_CERTS bundle (kept, not replaced), and the runner's proxies
 * (docs/preflight.md). Read and validated only when a registry request is about to be made, not with
 * the inputs: a run with nothing to roll makes none, so a runner's proxy setting or a CA file another
 * step has not written cannot fail it. Throws an InputError naming the variable or the input.
 */
export interface RegistryTransport {
  ca?: string;
  nodeExtraCa?: string;
  proxy: ProxyEnv;
}

export function readRegistryTransport(config: Pick<Config, 'registryCaFile'>, env: NodeJS.ProcessEnv): RegistryTransport {
  return {
    ...(config.registryCaFile
      ? { ca: readCaFile('registry-ca-file', config.registryCaFile), nodeExtraCa: readNodeExtraCa(env.NODE_EXTRA_CA_CERTS) }
      : {}),
    proxy: readProxyEnv(env),
  };
}

/**
 * What the Alertmanager's requests go through, by the registry's rules: `alertmanager-ca-file` added to
 * Node's CAs and NODE_EXTRA_CA_CERTS, the runner's proxies. Read when the silence is about to be
 * created (a roll starting), never with the inputs: a converged run creates no silence, so they cannot
 * fail it; a failure here is the silence's warning, not the roll's (docs/alert-silence.md).
 */
export function readAlertmanagerTransport(config: Pick<Config, 'alertmanagerCaFile'>, env: NodeJS.ProcessEnv): RegistryTransport {
  return {
    ...(config.alertmanagerCaFile
      ? { ca: readCaFile('alertmanager-ca-file', config.alertmanagerCaFile), nodeExtraCa: readNodeExtraCa(env.NODE_EXTRA_CA_CERTS) }
      : {}),
    proxy: readProxyEnv(env),
  };
}

/**
 * Reads and validates every input; throws InputError naming the one to fix. `secret` receives each
 * secret as soon as it is known (the credential's forms, the GitHub token), before anything logs.
 */
export function readInputs(getInput: (name: string) => string, env: NodeJS.ProcessEnv, secret: (s: string) => void): ActionInputs {
  // the Alertmanager's token is registered as it is read, before any input can be refused
  registerAlertmanagerToken(getInput, secret);
  const config = readConfig(getInput);
  if (config.githubToken) secret(config.githubToken);
  const authPatch = readAuthPatch(config.authPatch, config.registry, secret);
  return {
    config,
    authPatch,
    owner: formatOwnerToken(newOwnerToken(env)),
    github: { serverUrl: githubServerUrl(env), apiUrl: env.GITHUB_API_URL || undefined },
    knobs: readKnobs(env),
    preflight: { targets: preflightTargets(config, authPatch.credentials) },
  };
}

/** `alertmanager-token`, registered whatever else the inputs say (a refused input, no `alertmanager-url`). */
function registerAlertmanagerToken(getInput: (name: string) => string, secret: (s: string) => void): void {
  const token = (getInput('alertmanager-token') ?? '').trim();
  if (token) secret(token);
}

/** A CA bundle input's file: readable, and PEM certificates. */
function readCaFile(input: 'registry-ca-file' | 'alertmanager-ca-file', path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new InputError(input, `cannot read "${path}"${code ? ` (${code})` : ''}`);
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) {
    throw new InputError(input, `"${path}" holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  }
  return text;
}

/**
 * The file NODE_EXTRA_CA_CERTS names, which Node added to its default CAs at start-up: a `ca` of our own
 * replaces those, so the pre-flight names it again. Unreadable: left out, as Node itself leaves it out
 * (with a warning at start-up).
 */
function readNodeExtraCa(path: string | undefined): string | undefined {
  if (!path) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function readKnobs(env: NodeJS.ProcessEnv): TestKnobs {
  return {
    pollIntervalMs: Number(env.RAR_POLL_INTERVAL_MS) || undefined,
    relistPauseMs: env.RAR_RELIST_PAUSE_MS === undefined ? 5000 : Number(env.RAR_RELIST_PAUSE_MS),
    leaseRenewMs: Number(env.RAR_LEASE_RENEW_MS) || undefined,
    leaseDurationS: Number(env.RAR_LEASE_DURATION_S) || undefined,
  };
}

/**
 * The secrets readInputs registers, read again from the same inputs: for the post step, a fresh
 * process that knows none of the main step's. Best effort, and never a failure: inputs the main step
 * refused (it then held nothing) or a patch file a later step removed register nothing more.
 */
export function readInputSecrets(getInput: (name: string) => string, secret: (s: string) => void): void {
  registerAlertmanagerToken(getInput, secret);
  let config: Config;
  try {
    config = readConfig(getInput);
  } catch {
    return;
  }
  if (config.githubToken) secret(config.githubToken);
  try {
    readAuthPatch(config.authPatch, config.registry, secret);
  } catch {
    // the file is gone or no longer parses: nothing more to register
  }
}

/** Read and parse the file named by the `auth-patch` input (the file is read here, in the shell; parsing is core/authPatch.ts's). */
export function readAuthPatch(path: string, registry: readonly string[], mask: (secret: string) => void): AuthPatch {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new InputError('auth-patch', `cannot read "${path}"${code ? ` (${code})` : ''}`);
  }
  // Parse errors never quote the source (see parseAuthPatch); the secrets are masked as soon as they are
  // known, before the patch or the registry input can be refused (so a refused run registers them too).
  return { path, ...parseAuthPatch(text, registry, mask) };
}
