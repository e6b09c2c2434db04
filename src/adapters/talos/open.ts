// Chooses how the run reads Talos: over the API when the talosconfig context has a client
// certificate, else through talosctl (the CLI path, e.g. Omni's signed-request auth). On the API
// path the credential patch goes through ApplyConfiguration when it is one of the two credential
// forms (its form was read with the patch: src/core/authPatch.ts; applied by machineConfig/patch.ts), else
// through talosctl; the reboot goes over the API too. The
// choices and their reasons are returned for the log and the report.
import { existsSync } from 'node:fs';
import type { AuthPatch } from '../../core/authPatch.js';
import type { Runner } from '../exec.js';
import { Talosctl, TALOSCTL_REBOOT_GRACE } from './cli/talosctl.js';
import type { RebootGrace, TalosClient } from '../types.js';
import { API_REBOOT_GRACE_MS } from './api/rebootGrace.js';
import { loadTalosContext, talosconfigPath, type TalosconfigSource } from './api/talosconfig.js';

export interface OpenedTalos {
  client: TalosClient;
  /** one line for the log: which path, which endpoint or why not the API */
  describe: string;
  /** closes the API connection (a no-op on the CLI path); call once at the end of the run */
  close(): void;
  /**
   * What talosctl does in this run, when it does anything: every read and mutation (the CLI path), or
   * only the credential patch (a patch the API path does not apply). The action checks that talosctl is
   * on PATH before anything is mutated (src/action/talosctlOnPath.ts); `why` says why it is needed.
   */
  talosctl?: TalosctlNeed;
}

export interface TalosctlNeed {
  /** `reads`: everything goes through talosctl; `patch`: only the credential patch (apply mode) */
  for: 'reads' | 'patch';
  why: string;
}

export interface OpenTalosOptions extends TalosconfigSource {
  runner: Runner;
  /** per-call deadline of API reads */
  callTimeoutMs?: number;
  /** the `talos-server-name` input; see TalosConnectionOptions.serverName */
  serverName?: string;
  /** the auth patch, read and parsed once by the shell: its file for talosctl, its changes applied over the API when it is one of the credential forms */
  authPatch?: Pick<AuthPatch, 'path' | 'form'>;
  /** a line for the run's log (ApplyConfiguration's warnings, retries, no-ops) */
  log?: (line: string) => void;
  /** registers a secret of a machine config read back, for masking wherever text leaves the action */
  secret?: (value: string) => void;
}

/**
 * The shortest reboot grace of the two paths, known before one is chosen (the time-budget check before
 * any read: src/pipeline/run.ts): the API path's, whose reboot without the boot id is talosctl's.
 */
export const SHORTEST_REBOOT_GRACE: RebootGrace = {
  withBootIdMs: Math.min(API_REBOOT_GRACE_MS, TALOSCTL_REBOOT_GRACE.withBootIdMs),
  withoutBootIdMs: TALOSCTL_REBOOT_GRACE.withoutBootIdMs,
};

// What the fallback costs, said where the fallback is announced (README, "Two read paths").
const CLI_PRECISION =
  '. talosctl prints instants to the second, so a containerd start less than about 2 s after the config write cannot be ordered: such a node is rebooted, and a post-reboot proof may be undecided';

/**
 * Throws InputError('talosconfig') when the context's certificate, key or CA is present but
 * unusable, and ServerIdentityError when the endpoint's certificate is not apid's for it: before
 * anything is mutated. Neither falls back to talosctl: a server that cannot be trusted over the API
 * is the same server talosctl would reach. The gRPC stack (grpc-js, protobufjs) is loaded only when the
 * API path is chosen: it would otherwise more than double the action's start-up, which every run and
 * every input error pays (bench/startup.ts).
 */
export async function openTalosClient(opts: OpenTalosOptions): Promise<OpenedTalos> {
  const cli = new Talosctl({ runner: opts.runner, talosconfig: opts.path, patchFile: opts.authPatch?.path, secret: opts.secret });
  const path = talosconfigPath(opts);
  if (!opts.path && !existsSync(path)) {
    // talosctl has further defaults (e.g. the in-cluster /var/run/secrets/talos.dev/config): let it decide
    return {
      client: cli,
      describe: `reading Talos through talosctl: no talosconfig at ${path}${CLI_PRECISION}`,
      close: () => undefined,
      talosctl: { for: 'reads', why: `there is no talosconfig at ${path}` },
    };
  }
  const ctx = loadTalosContext(opts);
  if (!ctx.credentials) {
    return {
      client: cli,
      describe: `reading Talos through talosctl: ${ctx.path}, context ${JSON.stringify(ctx.context)}: ${ctx.noCredentials}${CLI_PRECISION}`,
      close: () => undefined,
      talosctl: { for: 'reads', why: `${ctx.path}, context ${JSON.stringify(ctx.context)}: ${ctx.noCredentials}` },
    };
  }
  const { TalosConnection, TalosApi } = await import('./api/apiPath.js');
  const conn = new TalosConnection({
    endpoint: ctx.endpoints[0],
    credentials: ctx.credentials,
    serverName: opts.serverName,
    callTimeoutMs: opts.callTimeoutMs,
  });
  try {
    await conn.verifyServer();
  } catch (e) {
    conn.close();
    throw e;
  }
  // the patch was read and checked by the inputs (src/core/authPatch.ts): its form says whether it is ours to apply
  const patch = opts.authPatch?.form;
  const apply = patch?.ours
    ? { changes: patch.changes, log: opts.log ?? (() => undefined), secret: opts.secret ?? (() => undefined) }
    : undefined;
  const notApplied = patch && !patch.ours ? patch.why : 'no auth patch given';
  const api = new TalosApi(conn, cli, { apply, notApplied, secret: opts.secret, reboot: { signal: opts.runner.signal } });
  const checkedFor = opts.serverName ? `, server certificate checked for ${conn.serverName}` : '';
  const patches = apply
    ? 'the credential patch through ApplyConfiguration (NO_REBOOT)'
    : `the credential patch through talosctl (${notApplied})`;
  return {
    client: api,
    describe: `reading Talos through its API at ${conn.endpoint} (${ctx.path}, context ${JSON.stringify(ctx.context)}${checkedFor}); instants to the nanosecond; ${patches}; reboots through the API (MachineService.Reboot, then the boot id until it changes)`,
    close: () => api.close(),
    talosctl: patch && !patch.ours ? { for: 'patch', why: patch.why } : undefined,
  };
}
