// TalosClient over the Talos API (gRPC through apid): every read, one call per node and resource,
// all on one connection. Timestamps come back as google.protobuf.Timestamp (nanoseconds), so the
// instants here are exact, except a file's `modified`, which the server sends in whole seconds.
// The credential patch goes through ApplyConfiguration (applyConfig.ts) when it is one of the two
// credential forms (plan mode shows the action's own change list for it, applying nothing), and the
// reboot over the API (reboot.ts: boot id, Reboot, boot id again); any other patch, and a reboot the
// certificate's role cannot follow (no Read), are delegated to the CLI adapter given at construction
// (`patch` keeps Talos's own patch semantics; `reboot --wait` tracks the boot id).
import { reorder, unique } from '../../../core/async.js';
import { ToolError } from '../../../core/errors.js';
import type {
  CriServiceReading,
  EtcFileStatusReading,
  FileAuthReading,
  FileListing,
  Instant,
  Reading,
  ServiceEvent,
  ServicePidReading,
  TimeStatusReading,
} from '../../../core/model/readings.js';
import type { ConfigPreview } from '../../../core/model/record.js';
import { parseCriRegistryAuth } from '../criToml.js';
import { ParseError } from '../../parseError.js';
import type { EtcdAlarm, EtcdMember, EtcdMemberStatus, RebootGrace, TalosClient } from '../../types.js';
import type { CredentialChange } from '../../../core/authPatch.js';
import { type ApplyOptions, applyCredential, previewCredential, readConfig } from './applyConfig.js';
import { credentialFormsOf, MachineConfigError } from '../machineConfig/documents.js';
import type { CredentialForms } from '../../../core/model/credential.js';
import { type TalosConnection, grpcDetailsOf } from './connection.js';
import { RPC } from './proto.js';
import {
  decodeSpec,
  failed,
  first,
  memberHex,
  perNode,
  perNodePath,
  refused,
  required,
  rfc3339Seconds,
  timestamp,
  unparseable,
  type Plain,
} from './answers.js';
import { readBootId, rebootOverApi, type ApiRebootOptions } from './reboot.js';
import { API_REBOOT_GRACE_MS } from './rebootGrace.js';
import { COSI, etcFileId, isMissingFile, isUnregisteredType, recordedAt } from '../resources.js';
import { scalarText } from '../../../core/text.js';

interface CosiDoc {
  created?: Instant;
  updated?: Instant;
  spec: Plain;
}

export class TalosApi implements TalosClient {
  constructor(
    private readonly conn: TalosConnection,
    /** the CLI adapter that performs the mutations */
    private readonly mutations: Pick<TalosClient, 'patchMachineConfig' | 'reboot' | 'rebootGrace'>,
    /**
     * `apply`: set when the auth patch is one of the credential forms (it is applied over the API);
     * `reboot`: the reboot's cancellation (the runner's signal) and polling
     */
    private readonly opts: {
      apply?: ApplyOptions & { changes: CredentialChange[] };
      /** when `apply` is unset: why the patch is not applied over the API (plan mode says it) */
      notApplied?: string;
      /** registers a secret of a machine config read (readCredentialForms), for masking */
      secret?: (value: string) => void;
      reboot?: ApiRebootOptions;
    } = {},
  ) {
    // absent when the patch is applied here: applyConfig.ts writes every form the node carries
    if (!opts.apply) this.readCredentialForms = (address) => this.credentialForms(address);
  }

  /**
   * Our own reboot when the boot id before it was read (reboot.ts: no margin past `timeoutMs`); the
   * CLI adapter's, which this client hands the reboot to, when the role may not read it.
   */
  get rebootGrace(): RebootGrace {
    return { withBootIdMs: API_REBOOT_GRACE_MS, withoutBootIdMs: this.mutations.rebootGrace.withoutBootIdMs };
  }

  /** see TalosClient.readCredentialForms: set only when talosctl applies the patch with Talos's merge */
  readonly readCredentialForms?: (address: string) => Promise<CredentialForms>;

  close(): void {
    this.conn.close();
  }

  // --- reads -----------------------------------------------------------------------------------

  async version(addresses: string[]): Promise<Map<string, Reading<string>>> {
    return perNode(addresses, async (node) => {
      const res = await this.conn.unary('version', node);
      const tag = (first(res, 'messages')?.version as Plain | undefined)?.tag;
      if (typeof tag !== 'string' || tag === '') throw unparseable('/machine.MachineService/Version', node, 'no version tag');
      return tag;
    });
  }

  async criService(addresses: string[]): Promise<Map<string, Reading<CriServiceReading>>> {
    return perNode(addresses, async (node) => {
      const clientBeforeMs = Date.now();
      const res = await this.conn.unary('serviceList', node);
      const clientAfterMs = Date.now();
      const services = (first(res, 'messages')?.services ?? []) as Plain[];
      const cri = services.find((s) => s.id === 'cri');
      if (!cri) throw unparseable('/machine.MachineService/ServiceList', node, 'the node lists no service "cri"');
      const health = (cri.health ?? {}) as Plain;
      const events = (((cri.events ?? {}) as Plain).events ?? []) as Plain[];
      return {
        via: 'api',
        state: scalarText(cri.state),
        health: health.unknown ? '?' : health.healthy ? 'OK' : 'Fail',
        lastHealthMessage: scalarText(health.last_message) || undefined,
        events: events.map((e): ServiceEvent => ({
          state: scalarText(e.state),
          message: scalarText(e.msg),
          at: required(
            timestamp(e.ts as Plain | undefined),
            '/machine.MachineService/ServiceList',
            node,
            `the cri event "${scalarText(e.msg)}" has no timestamp`,
          ),
        })),
        clientBeforeMs,
        clientAfterMs,
      };
    });
  }

  async servicePids(addresses: string[]): Promise<Map<string, Reading<ServicePidReading> | undefined>> {
    const out = new Map<string, Reading<ServicePidReading> | undefined>();
    await Promise.all(
      unique(addresses).map(async (node) => {
        try {
          const r = await this.cosiGet(node, 'servicePid', COSI.servicePid.id);
          const created = required(r.created, '/cosi.resource.State/Get', node, 'ServicePIDs cri has no metadata.created');
          out.set(node, { ok: true, value: { pid: Number(r.spec.pid), created } });
        } catch (e) {
          // A node older than the type answers through its access filter (docs/talos-api.md).
          if (e instanceof ToolError && isUnregisteredType(e.stderr)) out.set(node, undefined);
          else out.set(node, failed(e));
        }
      }),
    );
    return reorder(out, addresses);
  }

  async timeStatus(addresses: string[]): Promise<Map<string, Reading<TimeStatusReading>>> {
    return perNode(addresses, async (node) => {
      const r = await this.cosiGet(node, 'timeStatus', COSI.timeStatus.id);
      return { synced: Boolean(r.spec.synced), epoch: Number(r.spec.epoch ?? 0) };
    });
  }

  async etcFileStatus(addresses: string[], paths: string[]): Promise<Map<string, Map<string, Reading<EtcFileStatusReading>>>> {
    return perNodePath(addresses, paths, async (node, path) => {
      const id = etcFileId(path);
      if (id === undefined)
        throw refused('/cosi.resource.State/Get', node, 'usage', `${path} is not a file under /etc, so it has no EtcFileStatus`);
      const r = await this.cosiGet(node, 'etcFileStatus', id);
      const updated = required(
        recordedAt(r.created, r.updated),
        '/cosi.resource.State/Get',
        node,
        `EtcFileStatus ${id} has no created/updated timestamps`,
      );
      return { id, updated, specVersion: r.spec.spec_version === undefined ? undefined : scalarText(r.spec.spec_version) };
    });
  }

  async listFiles(addresses: string[], paths: string[]): Promise<Map<string, Map<string, Reading<FileListing>>>> {
    return perNodePath(addresses, paths, async (node, path) => {
      let entries: Plain[];
      try {
        entries = await this.conn.stream('list', node, { root: path });
      } catch (e) {
        // the server's lstat of the root fails before anything is streamed: the path is not there
        if (e instanceof ToolError && isMissingFile(grpcDetailsOf(e))) return { path, exists: false };
        throw e;
      }
      const entry = entries.find((f) => f.name === path) ?? (entries.length === 1 ? entries[0] : undefined);
      if (!entry) throw unparseable('/machine.MachineService/List', node, `no entry for ${path}`);
      if (entry.error) throw refused('/machine.MachineService/List', node, 'server', `${path}: ${scalarText(entry.error)}`);
      if (entry.is_dir) throw refused('/machine.MachineService/List', node, 'invalid', `${path} is a directory, not a file`);
      const s = Number(entry.modified);
      // whole seconds (ModTime().Unix()): the write happened somewhere in [s, s+1)
      return { path, exists: true, mtime: { earliestMs: s * 1000, latestMs: s * 1000 + 999.999, via: 'api', text: rfc3339Seconds(s) } };
    });
  }

  async readAuth(address: string, path: string): Promise<Reading<FileAuthReading>> {
    let chunks: Plain[];
    try {
      chunks = await this.conn.stream('read', address, { path });
    } catch (e) {
      if (e instanceof ToolError && e.kind === 'not-found') return { ok: true, value: { path, exists: false, auth: {} } };
      return failed(e);
    }
    const text = Buffer.concat(chunks.map((c) => (c.bytes as Buffer | undefined) ?? Buffer.alloc(0))).toString('utf8');
    try {
      return { ok: true, value: { path, exists: true, auth: parseCriRegistryAuth(text) } };
    } catch (e) {
      // the ParseError names a line and column only; the file text holds the credential
      if (e instanceof ParseError)
        return { ok: false, error: `/machine.MachineService/Read ${path} for ${address}: unparseable: ${e.message}` };
      throw e;
    }
  }

  async etcdStatus(address: string): Promise<EtcdMemberStatus[]> {
    const res = await this.conn.unary('etcdStatus', address);
    return ((res.messages ?? []) as Plain[]).map((m) => {
      const s = (m.member_status ?? {}) as Plain;
      return {
        node: address,
        memberId: memberHex(s.member_id),
        learner: Boolean(s.is_learner),
        errors: ((s.errors ?? []) as string[]).join(', '),
      };
    });
  }

  async etcdAlarms(address: string): Promise<EtcdAlarm[]> {
    const res = await this.conn.unary('etcdAlarmList', address);
    return ((res.messages ?? []) as Plain[]).flatMap((m) =>
      ((m.member_alarms ?? []) as Plain[]).map((a) => ({ node: address, memberId: memberHex(a.member_id), alarm: String(a.alarm) })),
    );
  }

  async etcdMembers(address: string): Promise<EtcdMember[]> {
    // query_local: the node's own etcd answers, as `talosctl etcd members` asks (docs/talos-api.md)
    const res = await this.conn.unary('etcdMemberList', address, { query_local: true });
    const messages = (res.messages ?? []) as Plain[];
    if (messages.length !== 1) throw unparseable(RPC.etcdMemberList.path, address, `${messages.length} messages, expected one`);
    const members = ((messages[0].members ?? []) as Plain[]).map((m) => ({
      id: memberHex(m.id),
      name: scalarText(m.hostname),
      peerUrls: ((m.peer_urls ?? []) as unknown[]).map(scalarText),
      clientUrls: ((m.client_urls ?? []) as unknown[]).map(scalarText),
      learner: Boolean(m.is_learner),
    }));
    // a running etcd is always a member of its own list
    if (members.length === 0) throw unparseable(RPC.etcdMemberList.path, address, 'an empty member list');
    return members;
  }

  // --- mutations ---------------------------------------------------------------------------------

  /**
   * plan mode: the action's own change list for the node's config (read, never applied: no dry run),
   * when openTalosClient found the patch in a form of ours; else why there is none.
   */
  async previewCredentialPatch(address: string): Promise<ConfigPreview> {
    if (!this.opts.apply) {
      return {
        shown: false,
        why: `talosctl would apply the patch (${this.opts.notApplied ?? 'not one of the credential forms'}) with Talos's own merge, which the action does not predict`,
      };
    }
    return previewCredential(this.conn, address, this.opts.apply.changes, this.opts.apply);
  }

  /** The forms the node's config carries, for the patch talosctl applies with Talos's merge (readCredentialForms). */
  private async credentialForms(address: string): Promise<CredentialForms> {
    const body = await readConfig(this.conn, address, { secret: this.opts.secret ?? (() => undefined) });
    try {
      return credentialFormsOf(body);
    } catch (e) {
      if (e instanceof MachineConfigError) throw unparseable(RPC.cosiGet.path, address, e.message);
      throw e;
    }
  }

  patchMachineConfig(address: string): Promise<void> {
    if (this.opts.apply) return applyCredential(this.conn, address, this.opts.apply.changes, this.opts.apply);
    return this.mutations.patchMachineConfig(address);
  }

  /** `Read` of /proc/sys/kernel/random/boot_id (reboot.ts); `forbidden` for a role that may not Read (os:operator). */
  bootId(address: string, timeoutMs: number): Promise<string> {
    return readBootId(this.conn, address, timeoutMs, this.opts.reboot?.signal);
  }

  /**
   * MachineService.Reboot, resolved when the node answers with a boot id other than `bootBefore`
   * (reboot.ts); `timeoutMs` bounds the wait from the Reboot's answer. Without `bootBefore` (the role
   * may not read it) talosctl follows the reboot through events.
   */
  async reboot(address: string, timeoutMs: number, bootBefore?: string): Promise<void> {
    if (bootBefore === undefined) return this.mutations.reboot(address, timeoutMs);
    await rebootOverApi(this.conn, address, timeoutMs, bootBefore, this.opts.reboot ?? {});
  }

  // --- machinery -------------------------------------------------------------------------------

  private async cosiGet(node: string, kind: keyof typeof COSI, id: string): Promise<CosiDoc> {
    const def = COSI[kind];
    const res = await this.conn.unary('cosiGet', node, { namespace: def.namespace, type: def.type, id });
    const resource = res.resource as Plain | undefined;
    const md = (resource?.metadata ?? {}) as Plain;
    if (md.id !== id || md.type !== def.type) {
      throw unparseable(
        '/cosi.resource.State/Get',
        node,
        `expected ${def.type} ${JSON.stringify(id)}, got ${String(md.type)} ${JSON.stringify(md.id)}`,
      );
    }
    const spec = (resource?.spec ?? {}) as Plain;
    return {
      created: timestamp(md.created as Plain | undefined),
      updated: timestamp(md.updated as Plain | undefined),
      spec: decodeSpec(node, def.spec, spec),
    };
  }
}
