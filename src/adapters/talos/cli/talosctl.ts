// TalosClient over the talosctl binary (pinned to the cluster's minor, 1.13.x: the output formats
// and error wrapping are the client's, see docs/talos-facts.md#t1-client-formats). It reads and reports;
// it never decides. How each call is run, attributed per node and its failure classified is calls.ts's;
// the file listings are files.ts's; the output formats are parse/'s.
import { unique } from '../../../core/async.js';
import type {
  CriServiceReading,
  EtcFileStatusReading,
  FileAuthReading,
  FileListing,
  Reading,
  ServicePidReading,
  TimeStatusReading,
} from '../../../core/model/readings.js';
import type { Runner } from '../../exec.js';
import { ParseError } from '../../parseError.js';
import type { EtcdAlarm, EtcdMember, EtcdMemberStatus, RebootGrace, TalosClient } from '../../types.js';
import { parseCriRegistryAuth } from '../criToml.js';
import { BOOT_ID_PATH, COSI, etcFileId, isUnregisteredType } from '../resources.js';
import { classifyTalosError } from '../talosErrors.js';
import { TalosctlCalls } from './calls.js';
import { TalosctlFiles } from './files.js';
import { parseCosiYaml, etcFileStatusFrom, servicePidFrom, timeStatusFrom } from './parse/cosiYaml.js';
import { parseEtcdAlarms, parseEtcdMembers, parseEtcdStatus } from './parse/etcd.js';
import { formatGoDuration } from './parse/goDuration.js';
import { parseServiceView, unreadableCriView } from './parse/service.js';
import { parseVersion } from './parse/version.js';
import { machineConfigBodyOfGet } from './parse/machineConfigGet.js';
import { credentialFormsOf, MachineConfigError } from '../machineConfig/documents.js';
import { configSecrets } from '../machineConfig/secrets.js';
import type { CredentialForms } from '../../../core/model/credential.js';

export interface TalosctlOptions {
  runner: Runner;
  talosconfig?: string;
  /** the auth patch file `patch machineconfig --patch-file` applies (the run's one patch); without it patchMachineConfig refuses */
  patchFile?: string;
  /** registers a secret of a machine config read (readCredentialForms), for masking wherever text leaves the action */
  secret?: (value: string) => void;
  /** default `talosctl` (looked up on PATH) */
  binary?: string;
  /** our deadline for every call except reboot; default 60 s */
  callTimeoutMs?: number;
  /** `reboot --timeout` when the caller passes no positive timeout; default 30 min (talosctl's own default) */
  rebootTimeoutMs?: number;
  /** cover several paths in one directory with one `ls -l DIR` (default true) */
  listDirectories?: boolean;
  /** how many single-address retries of a batch run at once; default 4 */
  fallbackConcurrency?: number;
}

/**
 * `(D ago)` is `time.Since(ts).Round(time.Second)`: the true age at the printing moment is within
 * ±500 ms of D, and the printing moment is somewhere in the call's runner window. So an event lies in
 * [before − D − 500 ms, after − D + 500 ms]; a slow call widens the bounds rather than moving them.
 */
const AGE_ROUNDING_MS = 500;

/**
 * How long talosctl gets past its own `reboot --timeout` to report it before we kill it. Part of what
 * one node may take (src/rules/budget.ts).
 */
export const REBOOT_GRACE_MS = 60_000;

/** talosctl's reboot runs until `--timeout` plus the grace, whether or not our boot id read preceded it. */
export const TALOSCTL_REBOOT_GRACE: RebootGrace = { withBootIdMs: REBOOT_GRACE_MS, withoutBootIdMs: REBOOT_GRACE_MS };

export class Talosctl implements TalosClient {
  readonly rebootGrace = TALOSCTL_REBOOT_GRACE;
  private readonly calls: TalosctlCalls;
  private readonly files: TalosctlFiles;
  private readonly patchFile?: string;
  private readonly secret: (value: string) => void;
  private readonly rebootTimeoutMs: number;

  constructor(opts: TalosctlOptions) {
    this.calls = new TalosctlCalls({
      runner: opts.runner,
      binary: opts.binary ?? 'talosctl',
      globals: opts.talosconfig ? ['--talosconfig', opts.talosconfig] : [],
      callTimeoutMs: opts.callTimeoutMs ?? 60_000,
      fallbackConcurrency: Math.max(1, opts.fallbackConcurrency ?? 4),
    });
    this.files = new TalosctlFiles(this.calls, { listDirectories: opts.listDirectories ?? true });
    this.patchFile = opts.patchFile;
    this.secret = opts.secret ?? (() => undefined);
    this.rebootTimeoutMs = opts.rebootTimeoutMs ?? 30 * 60_000;
  }

  // ---------------------------------------------------------------------------------------------
  // batch reads
  // ---------------------------------------------------------------------------------------------

  async version(addresses: string[]): Promise<Map<string, Reading<string>>> {
    return this.calls.batch<Reading<string>>(
      addresses,
      ['version'],
      (stdout) => new Map(parseVersion(stdout).map((v) => [v.node, { ok: true, value: v.tag }])),
      (node, message, cause, call) => this.calls.failed(call, node, cause, message),
    );
  }

  async criService(addresses: string[]): Promise<Map<string, Reading<CriServiceReading>>> {
    return this.calls.batch<Reading<CriServiceReading>>(
      addresses,
      ['service', 'cri'],
      (stdout, call) => {
        const out = new Map<string, Reading<CriServiceReading>>();
        for (const v of parseServiceView(stdout)) {
          if (v.id !== 'cri') throw new ParseError('service', `expected service cri, got ${JSON.stringify(v.id)}`);
          const unreadable = unreadableCriView(v);
          if (unreadable !== undefined) {
            out.set(v.node, this.calls.failed(call, v.node, 'unparseable', `unparseable output: ${unreadable}`));
            continue;
          }
          out.set(v.node, {
            ok: true,
            value: {
              state: v.state,
              health: v.health,
              lastHealthMessage: v.lastHealthMessage,
              // talosctl printed each age at some runner instant in [before, after], rounded to the second
              events: v.events.map((ev) => ({
                state: ev.state,
                message: ev.message,
                at: {
                  earliestMs: call.result.startedAtMs - ev.agoMs - AGE_ROUNDING_MS,
                  latestMs: call.result.endedAtMs - ev.agoMs + AGE_ROUNDING_MS,
                  via: 'cli' as const,
                  text: `${ev.ageText} ago`,
                },
              })),
              // the "(D ago)" ages were computed by talosctl somewhere inside this window
              clientBeforeMs: call.result.startedAtMs,
              clientAfterMs: call.result.endedAtMs,
            },
          });
        }
        return out;
      },
      (node, message, cause, call) => this.calls.failed(call, node, cause, message),
    );
  }

  async servicePids(addresses: string[]): Promise<Map<string, Reading<ServicePidReading> | undefined>> {
    return this.calls.batch<Reading<ServicePidReading> | undefined>(
      addresses,
      ['get', COSI.servicePid.cliName, COSI.servicePid.id, '-o', 'yaml'],
      (stdout) => new Map(parseCosiYaml(stdout).map((r) => [r.node, { ok: true, value: servicePidFrom(expectId(r, COSI.servicePid.id)) }])),
      (node, message, cause, call) => (isUnregisteredType(message) ? undefined : this.calls.failed(call, node, cause, message)),
      true,
    );
  }

  async timeStatus(addresses: string[]): Promise<Map<string, Reading<TimeStatusReading>>> {
    return this.calls.batch<Reading<TimeStatusReading>>(
      addresses,
      ['get', COSI.timeStatus.cliName, COSI.timeStatus.id, '-o', 'yaml'],
      (stdout) => new Map(parseCosiYaml(stdout).map((r) => [r.node, { ok: true, value: timeStatusFrom(expectId(r, COSI.timeStatus.id)) }])),
      (node, message, cause, call) => this.calls.failed(call, node, cause, message),
      true,
    );
  }

  async etcFileStatus(addresses: string[], paths: string[]): Promise<Map<string, Map<string, Reading<EtcFileStatusReading>>>> {
    const nodes = unique(addresses);
    const out = new Map(nodes.map((n) => [n, new Map<string, Reading<EtcFileStatusReading>>()]));
    const perPath = await Promise.all(
      unique(paths).map(async (path): Promise<[string, Map<string, Reading<EtcFileStatusReading>>]> => {
        const id = etcFileId(path);
        if (id === undefined) {
          return [
            path,
            new Map(nodes.map((n) => [n, { ok: false, error: `${path} is not a file under /etc, so it has no EtcFileStatus` }])),
          ];
        }
        const readings = await this.calls.batch<Reading<EtcFileStatusReading>>(
          nodes,
          ['get', COSI.etcFileStatus.cliName, id, '-o', 'yaml'],
          (stdout) => new Map(parseCosiYaml(stdout).map((r) => [r.node, { ok: true, value: etcFileStatusFrom(expectId(r, id)) }])),
          (node, message, cause, call) => this.calls.failed(call, node, cause, message),
          true,
        );
        return [path, readings];
      }),
    );
    for (const [path, readings] of perPath) for (const n of nodes) out.get(n)!.set(path, readings.get(n)!);
    return out;
  }

  async listFiles(addresses: string[], paths: string[]): Promise<Map<string, Map<string, Reading<FileListing>>>> {
    return this.files.listFiles(addresses, paths);
  }

  // ---------------------------------------------------------------------------------------------
  // single-node calls
  // ---------------------------------------------------------------------------------------------

  async readAuth(address: string, path: string): Promise<Reading<FileAuthReading>> {
    // talosctl read refuses several nodes (`command "read" is not supported with multiple nodes`)
    // The file's text holds the credential: it is compared in memory, and no message quotes it.
    const call = await this.calls.call([address], ['read', path]);
    if (call.result.exitCode === 0 && !call.result.timedOut) {
      try {
        return { ok: true, value: { path, exists: true, auth: parseCriRegistryAuth(call.result.stdout) } };
      } catch (e) {
        // the ParseError names a line and column only; the file text holds the credential
        if (e instanceof ParseError) return { ok: false, error: `${call.command} on ${address}: unparseable: ${e.message}` };
        throw e;
      }
    }
    const first = this.calls.errorItems(call)[0];
    if (!call.result.timedOut && first?.cause === 'not-found') return { ok: true, value: { path, exists: false, auth: {} } };
    return this.calls.failed(call, address, this.calls.causeOf(call), first?.message ?? '');
  }

  /**
   * The credential forms the node's active config carries (`get machineconfig v1alpha1 -o yaml`): this
   * client always patches through Talos's merge. The config's secrets are registered before anything
   * could quote them; the output is never logged (only the command line is).
   */
  async readCredentialForms(address: string): Promise<CredentialForms> {
    const call = await this.calls.call([address], ['get', 'machineconfig', 'v1alpha1', '-o', 'yaml']);
    if (call.result.exitCode !== 0 || call.result.timedOut) throw this.calls.toolError(call, this.calls.causeOf(call), address);
    const body = this.calls.parseOrThrow(call, address, () => machineConfigBodyOfGet(call.result.stdout));
    try {
      for (const s of configSecrets(body)) this.secret(s);
      return credentialFormsOf(body);
    } catch (e) {
      if (e instanceof MachineConfigError) throw this.calls.unparseable(call, address, e.message);
      throw e;
    }
  }

  async patchMachineConfig(address: string): Promise<void> {
    if (this.patchFile === undefined) throw new Error('talosctl: opened without an auth patch file, so there is no patch to apply');
    const patchFile = this.patchFile;
    // Success is printed on stderr (`patched … at the node …` / `Applied configuration without a reboot`);
    // only the exit code says whether it worked.
    const call = await this.calls.call([address], ['patch', 'machineconfig', '--mode=no-reboot', '--patch-file', patchFile]);
    if (call.result.exitCode !== 0 || call.result.timedOut) throw this.calls.toolError(call, this.calls.causeOf(call), address);
  }

  /** `talosctl read /proc/sys/kernel/random/boot_id`, trimmed, within `timeoutMs` */
  async bootId(address: string, timeoutMs: number): Promise<string> {
    const call = await this.calls.call([address], ['read', BOOT_ID_PATH], timeoutMs);
    if (call.result.exitCode !== 0 || call.result.timedOut) throw this.calls.toolError(call, this.calls.causeOf(call), address);
    return call.result.stdout.trim();
  }

  /**
   * `talosctl reboot --wait`: its tracker reads the boot id itself before the Reboot, under the same
   * `--timeout`; the pipeline read it a moment before (bootId, within its own bound), so that read
   * answers at once and the timeout is, within a call, the wait from the Reboot. The boot id read before
   * is not taken: talosctl has no flag for it.
   */
  async reboot(address: string, timeoutMs: number): Promise<void> {
    const t = timeoutMs > 0 ? timeoutMs : this.rebootTimeoutMs;
    // talosctl parses --timeout with time.ParseDuration; whole seconds keep the flag readable in logs
    const flag = formatGoDuration(Math.ceil(t / 1000) * 1000);
    const call = await this.calls.call([address], ['reboot', '--wait', '--timeout', flag], t + REBOOT_GRACE_MS);
    // exit 0 is talosctl's statement that the node came back Ready with a different boot id
    if (call.result.exitCode === 0 && !call.result.timedOut) return;
    let cause = this.calls.causeOf(call);
    if (!call.result.timedOut) {
      // The tracker prints progress (`"<node>": unavailable, retrying...`) before the error, so the
      // last line, not the first, says why it failed.
      const last = call.result.stderr.trim().split('\n').filter(Boolean).slice(-1)[0] ?? '';
      const lastCause = classifyTalosError(last);
      if (lastCause !== 'unknown') cause = lastCause;
    }
    throw this.calls.toolError(call, cause, address);
  }

  async etcdStatus(address: string): Promise<EtcdMemberStatus[]> {
    const call = await this.calls.call([address], ['etcd', 'status']);
    if (call.result.exitCode !== 0 || call.result.timedOut) throw this.calls.toolError(call, this.calls.causeOf(call), address);
    const rows = this.calls.parseOrThrow(call, address, () => parseEtcdStatus(call.result.stdout));
    const mine = rows.filter((r) => r.node === undefined || r.node === address);
    if (mine.length === 0) throw this.calls.unparseable(call, address, `no member status for ${address}`);
    return mine.map((r) => ({ node: r.node ?? address, memberId: r.memberId, learner: r.learner, errors: r.errors }));
  }

  async etcdAlarms(address: string): Promise<EtcdAlarm[]> {
    const call = await this.calls.call([address], ['etcd', 'alarm', 'list']);
    if (call.result.exitCode !== 0 || call.result.timedOut) throw this.calls.toolError(call, this.calls.causeOf(call), address);
    const rows = this.calls.parseOrThrow(call, address, () => parseEtcdAlarms(call.result.stdout));
    return rows.map((r) => ({ node: r.node ?? address, memberId: r.memberId, alarm: r.alarm }));
  }

  async etcdMembers(address: string): Promise<EtcdMember[]> {
    // `etcd members` asks the node's own etcd (QueryLocal); the list is etcd's, one row per member
    const call = await this.calls.call([address], ['etcd', 'members']);
    if (call.result.exitCode !== 0 || call.result.timedOut) throw this.calls.toolError(call, this.calls.causeOf(call), address);
    const rows = this.calls.parseOrThrow(call, address, () => parseEtcdMembers(call.result.stdout));
    const mine = rows.filter((r) => r.node === undefined || r.node === address);
    // a running etcd always lists itself: no row for this node is no answer from it
    if (mine.length === 0) throw this.calls.unparseable(call, address, `no etcd members listed by ${address}`);
    return mine.map((r) => ({ id: r.id, name: r.hostname, peerUrls: r.peerUrls, clientUrls: r.clientUrls, learner: r.learner }));
  }
}

function expectId<T extends { metadata: { id: string; type: string } }>(r: T, id: string): T {
  if (r.metadata.id !== id)
    throw new ParseError('get -o yaml', `expected ${r.metadata.type} ${JSON.stringify(id)}, got ${JSON.stringify(r.metadata.id)}`);
  return r;
}
