// Chooses how the run reads Talos: over the API when the talosconfig context has a client
// certificate, else through talosctl (the CLI path, e.g. Omni's signed-request auth). On the API
// path the reboot goes over the API too; the machine-config patch goes through talosctl either way. The choice and its reason are returned for the log and the report.
import { existsSync } from 'node:fs';
import type { Runner } from '../exec.js';
import { Talosctl } from './cli/talosctl.js';
import type { TalosClient } from '../types.js';
import { loadTalosContext, talosconfigPath, type TalosconfigSource } from './api/talosconfig.js';

export interface OpenedTalos {
  client: TalosClient;
  /** one line for the log: which path, which endpoint or why not the API */
  describe: string;
  /** closes the API connection (a no-op on the CLI path); call once at the end of the run */
  close(): void;
}

export interface OpenTalosOptions extends TalosconfigSource {
  runner: Runner;
  /** per-call deadline of API reads */
  callTimeoutMs?: number;
  /** the `talos-server-name` input; see TalosConnectionOptions.serverName */
  serverName?: string;
}

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
  const cli = new Talosctl({ runner: opts.runner, talosconfig: opts.path });
  const path = talosconfigPath(opts);
  if (!opts.path && !existsSync(path)) {
    // talosctl has further defaults (e.g. the in-cluster /var/run/secrets/talos.dev/config): let it decide
    return {
      client: cli,
      describe: `reading Talos through talosctl: no talosconfig at ${path}${CLI_PRECISION}`,
      close: () => undefined,
    };
  }
  const ctx = loadTalosContext(opts);
  if (!ctx.credentials) {
    return {
      client: cli,
      describe: `reading Talos through talosctl: ${ctx.path}, context ${JSON.stringify(ctx.context)}: ${ctx.noCredentials}${CLI_PRECISION}`,
      close: () => undefined,
    };
  }
  const { TalosConnection, TalosApi } = await import('./api/apiPath.js');
  const conn = new TalosConnection({
    endpoint: ctx.endpoints[0],
    credentials: ctx.credentials,
    serverName: opts.serverName,
    callTimeoutMs: opts.callTimeoutMs,
    // the same masking as every talosctl and kubectl output (src/adapters/exec.ts)
    redact: (text) => opts.runner.redactor.redact(text),
  });
  try {
    await conn.verifyServer();
  } catch (e) {
    conn.close();
    throw e;
  }
  const api = new TalosApi(conn, cli, { signal: opts.runner.signal });
  const checkedFor = opts.serverName ? `, server certificate checked for ${conn.serverName}` : '';
  return {
    client: api,
    describe: `reading Talos through its API at ${conn.endpoint} (${ctx.path}, context ${JSON.stringify(ctx.context)}${checkedFor}); instants to the nanosecond; reboots through the API (MachineService.Reboot, then the boot id until it changes); patches through talosctl`,
    close: () => api.close(),
  };
}
