// An in-memory TalosClient for pipeline tests: the node state is plain data, and each reading is
// derived from it the way talosctl would report it (ages on the client clock, one-second mtimes).
import { createHash } from 'node:crypto';
import type { EtcdAlarm, EtcdMember, EtcdMemberStatus, RebootGrace, TalosClient } from '../../src/adapters/types.js';
import { RebootNotSentError, ToolError } from '../../src/core/errors.js';
import type { AuthFields } from '../../src/core/model/credential.js';
import type {
  CriServiceReading,
  EtcFileStatusReading,
  FileAuthReading,
  FileListing,
  Instant,
  Reading,
  ServicePidReading,
  TimeStatusReading,
} from '../../src/core/model/readings.js';
import type { TestClock } from './clock.js';

/** An event's instant as the talosctl adapter places a "(D ago)" age read at `now` (call taking no time). */
function printedAge(now: number, atMs: number): Instant {
  const ago = Math.round((now - atMs) / 1000) * 1000;
  return { earliestMs: now - ago - 500, latestMs: now - ago + 500, via: 'cli', text: `${ago / 1000}s ago` };
}

/** A node instant printed in whole seconds (RFC 3339 or ls -l), as the adapter bounds it. */
function printedSecond(atMs: number): Instant {
  const s = Math.floor(atMs / 1000) * 1000;
  return { earliestMs: s, latestMs: s + 999, via: 'cli', text: new Date(s).toISOString().replace('.000Z', 'Z') };
}

export interface FakeTalosNode {
  name: string;
  address: string;
  version: string;
  criPid: number;
  criStartedAtMs: number;
  /** path → mtime and the auth entries the file renders */
  files: Record<string, { mtimeMs: number; auth: Record<string, AuthFields> }>;
  synced: boolean;
  epoch: number;
  etcd?: { learner?: boolean; errors?: string; alarm?: string; unreachable?: boolean };
  /** until this instant cri reads as `criComingUp.as` instead of Running/OK (set by a reboot, see FakeTalos.criComingUp) */
  criComingUpUntilMs?: number;
  /** until this instant the node lists no cri service (set by a reboot, see FakeTalos.criUnlistedMs) */
  criUnlistedUntilMs?: number;
  /** until this instant no config file is listed, read or has an EtcFileStatus (set by a reboot, see FakeTalos.filesAfterRebootMs) */
  filesWrittenAtMs?: number;
}

export class FakeTalos implements TalosClient {
  /** the reboot's margins as the time budget counts them: talosctl's by default (a test sets the API path's) */
  rebootGrace: RebootGrace = { withBootIdMs: 60_000, withoutBootIdMs: 60_000 };
  readonly nodes = new Map<string, FakeTalosNode>();
  readonly calls: Array<{ method: string; addresses: string[] }> = [];
  /** what the credential patch renders, per host */
  patchRenders: Record<string, AuthFields> = {};
  rebootHook?: (node: FakeTalosNode) => void;
  /** set: the next reboot is refused as never sent (RebootNotSentError, as the boot id read before it raises it), with this as the reason */
  rebootNotSent?: string;
  /**
   * The boot id reads fail (`Unavailable`) for this long from the first one that fails, or, when the
   * reboot is sent without a boot id read before it, from the reboot call: then the fake reads it itself
   * as `talosctl reboot --wait` does, under the one `--timeout` that also bounds the wait for the new one.
   */
  bootIdFailsForMs?: number;
  /** what a boot id read fails with instead of `Unavailable` (e.g. a `forbidden` for an os:operator role) */
  bootIdFailsWith?: ToolError['kind'];
  private bootIdFailingSince?: number;
  /** the kernel's boot id per address (a reboot draws a new one) */
  readonly bootIds = new Map<string, string>();
  /** the boot id each reboot was sent with (undefined: without one) */
  readonly rebootsSentWith: Array<string | undefined> = [];
  patchFails?: string;
  /** containerd's start after the boot-time config write, in ms (negative: containerd first) */
  rebootGapMs = 6000;
  /**
   * After a reboot, cri is still coming up for `forMs` once the node is back: it reads as `as` (e.g.
   * Running with health "?", a cri (re)started a moment ago whose first health check has not run).
   */
  criComingUp?: { forMs: number; as: { state: string; health: string } };
  /**
   * After a reboot, the node answers for `criUnlistedMs` before it lists a cri service: Talos starts
   * apid in its Initialize sequence, long before machined loads cri (StartAllServices; on 1.14
   * cri.ServiceController, once cri.toml's EtcFileStatus exists), so the service reading fails.
   */
  criUnlistedMs?: number;
  /**
   * After a reboot, the node answers `filesAfterRebootMs` before machined has written the CRI files
   * of the rebuilt /etc (a tmpfs, written by its controllers once the machine config is loaded): until
   * then no config file is listed, read or has an EtcFileStatus, and cri, which Talos starts only
   * after them, is not listed. It is launched `rebootGapMs` after the write.
   */
  filesAfterRebootMs?: number;
  /** etcd members no fake machine runs (a voter whose Node was deleted, a member added by hand, a learner) */
  extraMembers: EtcdMember[] = [];
  /**
   * Talos writes the files after ApplyConfiguration returned: set, the patch's write (and the 1.14
   * restart after it) waits for the next call of this method and lands right before it answers.
   * Unset, the write lands within the patch call.
   */
  patchWriteLandsOn?: 'readAuth' | 'listFiles' | 'etcFileStatus' | 'criService';
  private pendingWrite?: () => void;

  /** Lands a held patch write when `method` is the one it waits for. */
  private land(method: string): void {
    if (this.pendingWrite && method === this.patchWriteLandsOn) {
      const write = this.pendingWrite;
      this.pendingWrite = undefined;
      write();
    }
  }

  constructor(private readonly clock: TestClock) {}

  /** The file as the node has it now: none before a reboot's write (filesAfterRebootMs). */
  private file(n: FakeTalosNode | undefined, path: string) {
    if (!n || this.clock.now() < (n.filesWrittenAtMs ?? -Infinity)) return undefined;
    return n.files[path];
  }

  add(n: FakeTalosNode): void {
    this.nodes.set(n.address, n);
  }

  private each<T>(method: string, addresses: string[], f: (n: FakeTalosNode) => T): Map<string, Reading<T>> {
    this.calls.push({ method, addresses });
    const out = new Map<string, Reading<T>>();
    for (const a of addresses) {
      const n = this.nodes.get(a);
      out.set(a, n ? { ok: true, value: f(n) } : { ok: false, error: `${a}: rpc error: code = Unavailable` });
    }
    return out;
  }

  async version(addresses: string[]) {
    return this.each('version', addresses, (n) => n.version);
  }

  async criService(addresses: string[]) {
    this.land('criService');
    const now = this.clock.now();
    const read = this.each('criService', addresses, (n): CriServiceReading => {
      const comingUp = this.criComingUp && now < (n.criComingUpUntilMs ?? -Infinity) ? this.criComingUp.as : undefined;
      return {
        state: comingUp?.state ?? 'Running',
        health: comingUp?.health ?? 'OK',
        // newest first, as talosctl prints them; the launch is logged right after "Creating service runner"
        events: [
          ...(comingUp ? [] : [{ state: 'Running', message: 'Health check successful', at: printedAge(now, n.criStartedAtMs + 1000) }]),
          {
            state: 'Running',
            message: `Process Process(["/bin/containerd"]) started with PID ${n.criPid}`,
            at: printedAge(now, n.criStartedAtMs),
          },
          { state: 'Preparing', message: 'Creating service runner', at: printedAge(now, n.criStartedAtMs - 2) },
          { state: 'Preparing', message: 'Running pre state', at: printedAge(now, n.criStartedAtMs - 3) },
          { state: 'Starting', message: 'Starting service', at: printedAge(now, n.criStartedAtMs - 5) },
        ],
        clientBeforeMs: now,
        clientAfterMs: now,
      };
    });
    for (const a of addresses) {
      if (now < (this.nodes.get(a)?.criUnlistedUntilMs ?? -Infinity)) {
        // the API adapter's text for a ServiceList without cri (src/adapters/talos/api/apiClient.ts)
        read.set(a, { ok: false, error: `/machine.MachineService/ServiceList on ${a}: the node lists no service "cri"` });
      }
    }
    return read;
  }

  async servicePids(addresses: string[]) {
    const m = this.each('servicePids', addresses, (n): ServicePidReading => ({ pid: n.criPid, created: printedSecond(n.criStartedAtMs) }));
    return m as Map<string, Reading<ServicePidReading> | undefined>;
  }

  async listFiles(addresses: string[], paths: string[]) {
    this.land('listFiles');
    this.calls.push({ method: 'listFiles', addresses });
    const out = new Map<string, Map<string, Reading<FileListing>>>();
    for (const a of addresses) {
      const n = this.nodes.get(a)!;
      const per = new Map<string, Reading<FileListing>>();
      for (const p of paths) {
        const f = this.file(n, p);
        per.set(p, {
          ok: true,
          value: f
            ? { path: p, exists: true, lastModText: new Date(f.mtimeMs).toISOString(), mtime: printedSecond(f.mtimeMs) }
            : { path: p, exists: false },
        });
      }
      out.set(a, per);
    }
    return out;
  }

  async etcFileStatus(addresses: string[], paths: string[]) {
    this.land('etcFileStatus');
    this.calls.push({ method: 'etcFileStatus', addresses });
    const out = new Map<string, Map<string, Reading<EtcFileStatusReading>>>();
    for (const a of addresses) {
      const n = this.nodes.get(a)!;
      const per = new Map<string, Reading<EtcFileStatusReading>>();
      for (const p of paths) {
        const f = this.file(n, p);
        if (f) per.set(p, { ok: true, value: { id: p.replace('/etc/', ''), updated: printedSecond(f.mtimeMs) } });
      }
      out.set(a, per);
    }
    return out;
  }

  async timeStatus(addresses: string[]) {
    return this.each('timeStatus', addresses, (n): TimeStatusReading => ({ synced: n.synced, epoch: n.epoch }));
  }

  async readAuth(address: string, path: string): Promise<Reading<FileAuthReading>> {
    this.calls.push({ method: 'readAuth', addresses: [address] });
    this.land('readAuth');
    const f = this.file(this.nodes.get(address), path);
    return { ok: true, value: f ? { path, exists: true, auth: structuredClone(f.auth) } : { path, exists: false, auth: {} } };
  }

  async patchMachineConfig(address: string): Promise<void> {
    this.calls.push({ method: 'patchMachineConfig', addresses: [address] });
    if (this.patchFails) {
      throw new ToolError({
        tool: 'talosctl',
        command: 'talosctl patch machineconfig',
        kind: 'transport',
        exitCode: 1,
        stderr: this.patchFails,
        node: address,
      });
    }
    const n = this.nodes.get(address)!;
    const write = () => {
      const now = this.clock.now();
      for (const f of Object.values(n.files)) {
        const next = { ...f.auth, ...this.patchRenders };
        // Talos rewrites a file only when its content changes, so a no-op apply keeps the mtime.
        if (JSON.stringify(next) !== JSON.stringify(f.auth)) {
          f.auth = next;
          f.mtimeMs = now;
        }
      }
      if (/^v1\.1[4-9]/.test(n.version) && Object.values(n.files).some((f) => f.mtimeMs === now)) {
        // Talos 1.14 restarts cri itself a few seconds after cri.toml changes.
        n.criPid += 100;
        n.criStartedAtMs = now + 5000;
      }
    };
    if (this.patchWriteLandsOn) this.pendingWrite = write;
    else write();
  }

  private bootIdNow(address: string): string {
    return this.bootIds.get(address) ?? `talos-boot-${address}-0`;
  }

  /** Whether a boot id read fails now (bootIdFailsForMs), the failing window starting at the first. */
  private bootIdFailing(): boolean {
    if (this.bootIdFailsForMs === undefined) return false;
    this.bootIdFailingSince ??= this.clock.now();
    return this.clock.now() < this.bootIdFailingSince + this.bootIdFailsForMs;
  }

  async bootId(address: string, timeoutMs: number): Promise<string> {
    this.calls.push({ method: 'bootId', addresses: [address] });
    if (this.bootIdFailing()) {
      const kind = this.bootIdFailsWith ?? 'transport';
      if (kind === 'timeout') this.clock.t += timeoutMs;
      const stderr =
        kind === 'forbidden'
          ? 'rpc error: code = PermissionDenied desc = not authorized'
          : 'rpc error: code = Unavailable desc = connection refused';
      throw new ToolError({ tool: 'talos-api', command: '/machine.MachineService/Read', kind, exitCode: null, stderr, node: address });
    }
    return this.bootIdNow(address);
  }

  async reboot(address: string, timeoutMs: number, bootBefore?: string): Promise<void> {
    this.calls.push({ method: 'reboot', addresses: [address] });
    this.rebootsSentWith.push(bootBefore);
    if (this.rebootNotSent !== undefined) {
      const why = this.rebootNotSent;
      this.rebootNotSent = undefined;
      throw new RebootNotSentError(address, `/machine.MachineService/Reboot (node ${address}): not sent: ${why}`);
    }
    // Without a boot id read before it, the reboot reads it itself, under the one deadline that also
    // bounds the wait for the new boot id (talosctl's tracker: one context.WithTimeout for all of it).
    // (An os:operator role cannot read it: talosctl then follows the reboot without it.)
    const started = this.clock.now();
    const timedOut = (): ToolError =>
      new ToolError({
        tool: 'talos-api',
        command: `/machine.MachineService/Reboot (node ${address})`,
        kind: 'timeout',
        exitCode: null,
        stderr: `the node did not answer with a new boot id within ${timeoutMs / 1000}s (context deadline exceeded)`,
        node: address,
      });
    if (bootBefore === undefined && this.bootIdFailsWith !== 'forbidden' && this.bootIdFailing()) {
      const readable = this.bootIdFailingSince! + this.bootIdFailsForMs!;
      if (readable >= started + timeoutMs) {
        this.clock.t = started + timeoutMs;
        throw timedOut();
      }
      this.clock.t = readable;
    }
    const n = this.nodes.get(address)!;
    const now = this.clock.now();
    for (const f of Object.values(n.files)) f.mtimeMs = now + 1000;
    n.criStartedAtMs = now + 1000 + this.rebootGapMs;
    n.criPid = 1000 + Math.floor(Math.random() * 1000);
    this.bootIds.set(address, `talos-boot-${address}-${now}`);
    this.clock.t += 30_000;
    // (The deadline is modelled in the boot id scenarios only: other tests pass tiny timeouts to size a budget.)
    if (this.bootIdFailsForMs !== undefined && this.clock.now() > started + timeoutMs) {
      // it rebooted, but after the deadline of the wait for it
      this.rebootHook?.(n);
      throw timedOut();
    }
    if (this.criComingUp) n.criComingUpUntilMs = this.clock.t + this.criComingUp.forMs;
    if (this.criUnlistedMs !== undefined) n.criUnlistedUntilMs = this.clock.t + this.criUnlistedMs;
    if (this.filesAfterRebootMs !== undefined) {
      n.filesWrittenAtMs = this.clock.t + this.filesAfterRebootMs;
      for (const f of Object.values(n.files)) f.mtimeMs = n.filesWrittenAtMs;
      n.criStartedAtMs = n.filesWrittenAtMs + this.rebootGapMs;
      n.criUnlistedUntilMs = Math.max(n.criUnlistedUntilMs ?? -Infinity, n.criStartedAtMs);
    }
    this.rebootHook?.(n);
  }

  async etcdStatus(address: string): Promise<EtcdMemberStatus[]> {
    this.calls.push({ method: 'etcdStatus', addresses: [address] });
    const e = this.nodes.get(address)?.etcd ?? {};
    if (e.unreachable)
      throw new ToolError({
        tool: 'talosctl',
        command: 'talosctl etcd status',
        kind: 'transport',
        exitCode: 1,
        stderr: 'Unavailable',
        node: address,
      });
    return [{ node: address, memberId: memberIdOf(address), learner: !!e.learner, errors: e.errors ?? '' }];
  }

  async etcdAlarms(address: string): Promise<EtcdAlarm[]> {
    this.calls.push({ method: 'etcdAlarms', addresses: [address] });
    const e = this.nodes.get(address)?.etcd ?? {};
    return e.alarm ? [{ node: address, memberId: memberIdOf(address), alarm: e.alarm }] : [];
  }

  /** One member per control-plane machine (named after it, advertising its address), then `extraMembers`. */
  async etcdMembers(address: string): Promise<EtcdMember[]> {
    this.calls.push({ method: 'etcdMembers', addresses: [address] });
    if (this.nodes.get(address)?.etcd?.unreachable)
      throw new ToolError({
        tool: 'talosctl',
        command: 'talosctl etcd members',
        kind: 'transport',
        exitCode: 1,
        stderr: 'Unavailable',
        node: address,
      });
    const machines = [...this.nodes.values()].filter((n) => n.etcd);
    return [
      ...machines.map((n) => ({
        id: memberIdOf(n.address),
        name: n.name,
        peerUrls: [`https://${n.address}:2380`],
        clientUrls: [`https://${n.address}:2379`],
        learner: !!n.etcd?.learner,
      })),
      ...this.extraMembers,
    ];
  }

  mutatingCalls(): string[] {
    return this.calls
      .filter((c) => c.method === 'patchMachineConfig' || c.method === 'reboot')
      .map((c) => `${c.method} ${c.addresses.join(',')}`);
  }
}

/** Each machine is its own etcd member: a stable 16-hex-digit id per address (the quorum gate checks they differ). */
function memberIdOf(address: string): string {
  return createHash('sha256').update(address).digest('hex').slice(0, 16);
}
