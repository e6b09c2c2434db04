// The twin's Talos API: the gRPC services apid routes (MachineService reads, COSI State Get) over
// mutual TLS, answering from the same simulated machines the fake talosctl reads. Routing as apid
// does it: the `node` metadata key names the target (exactly one value); an address apid cannot
// dial answers Unavailable with grpc-go's dial error; the COSI State API refuses `nodes`. Role
// checks as machined's authorizer: the client certificate's Organization is its role.
// Timestamps go out as google.protobuf.Timestamp, exact to the nanosecond of the state's value.
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import { stringify } from 'yaml';
import { RPC, encodePlain, messageType, toPlain } from '../../../src/adapters/talos/api/proto.js';
import { RESOURCES, type CosiResource, type ResourceDefinition } from '../commands/get.js';
import { walk } from '../commands/ls.js';
import { services } from '../commands/service.js';
import { SERVER_BUILDS } from '../commands/version.js';
import { configDiff } from '../configDiff.js';
import { immediateRefusal, parseConfigText, renderConfigText, validate } from '../machineconfig.js';
import type { NodeRuntime } from '../state.js';
import type { ServiceEvent, SimEtcdMember } from '../types.js';
import type { ClusterCerts } from './certs.js';

type Plain = Record<string, unknown>;

export type Route = { ok: true; rt: NodeRuntime } | { ok: false; code: grpc.status; details: string };

export interface ApiCallRecord {
  /** full method path */
  method: string;
  node: string;
  /** the client's address and port: one per connection */
  peer: string;
  /** gRPC status code of the answer */
  code: number;
  /** real clock, ms */
  at: number;
  /** an ApplyConfiguration with `dry_run`: answered with the diff, changes nothing */
  dryRun?: boolean;
}

export interface ApiHooks {
  /** the machine behind a `node` value, or the error apid answers (unreachable, a fault rule) */
  route(node: string, method: string, req: Plain): Route;
  controlPlanes(): NodeRuntime[];
  /** etcd's member list (the cluster's own record, not derived from the machines) */
  /** etcd's member list as `rt`'s etcd answers it (a lagging member answers an older copy) */
  etcdMembers(rt: NodeRuntime): SimEtcdMember[];
  /** false: the machine runs a Talos older than the resource type */
  knowsType(rt: NodeRuntime, type: string): boolean;
  record(rec: ApiCallRecord): void;
  /** the reboot sequence an API Reboot started (it may fail unseen: the answer was already sent) */
  rebootSequence?(rt: NodeRuntime): void;
  /** a read of the machine is about to be answered (the twin's held-write fault lands here) */
  answering?(rt: NodeRuntime, method: string, req: Plain): void;
  /** true: the connections drop while this call is served (TalosSim.dropConnectionsDuringNext), so it is never answered */
  dropsConnections?(method: string, node: string): boolean;
  /** a promise: the call waits, not yet served, until it settles (TalosSim.holdNextCall) */
  held?(method: string, node: string, req: Plain): Promise<void> | undefined;
  /** how the MachineConfig resource carries its body: `string` (Talos ≥ 1.5, annotated) or `document` (older) */
  configBodyForm?(rt: NodeRuntime): 'string' | 'document';
  /** called after an apply set the config: another writer (Omni, an operator's talosctl) may replace it at once */
  applied?(rt: NodeRuntime, before: NodeRuntime['node']['machineConfig']): void;
  /** the warnings ApplyConfiguration's validation returns on this machine */
  applyWarnings?(rt: NodeRuntime): string[];
}

export interface ApiServer {
  /** hands a TLS connection (sniffed on the shared port) to the gRPC server */
  inject(socket: Duplex): void;
  close(): void;
}

class ApiError extends Error {
  constructor(
    readonly code: grpc.status,
    readonly details: string,
  ) {
    super(details);
  }
}

/** machined's rules for the methods served here (internal/app/machined/pkg/system/services/machined.go). */
const ROLES: Record<string, string[]> = {
  [RPC.version.path]: ['os:admin', 'os:operator', 'os:reader'],
  [RPC.serviceList.path]: ['os:admin', 'os:operator', 'os:reader'],
  [RPC.list.path]: ['os:admin', 'os:operator', 'os:reader'],
  [RPC.read.path]: ['os:admin'],
  [RPC.etcdStatus.path]: ['os:admin', 'os:operator', 'os:reader', 'os:etcd:backup'],
  [RPC.etcdAlarmList.path]: ['os:admin', 'os:operator', 'os:reader', 'os:etcd:backup'],
  [RPC.etcdMemberList.path]: ['os:admin', 'os:operator', 'os:reader', 'os:etcd:backup'],
  [RPC.cosiGet.path]: ['os:admin', 'os:operator', 'os:reader'],
  // the handler lets a reader in only in maintenance mode, which the twin does not model
  [RPC.applyConfiguration.path]: ['os:admin'],
  [RPC.reboot.path]: ['os:admin', 'os:operator'],
};

/**
 * A call arrives for `node` (its metadata): served now, never (its connection drops), or once its hold
 * (TalosSim.holdNextCall) is released. A held call its client cancelled meanwhile is recorded CANCELLED
 * as it goes and never served, as apid would not answer it.
 */
function receive(
  hooks: ApiHooks,
  method: string,
  call: grpc.ServerUnaryCall<Plain, Plain> | grpc.ServerWritableStream<Plain, Plain>,
  serve: (node: string) => void,
): void {
  const node = nodeOf(call.metadata);
  // (TalosSim.dropConnectionsDuringNext: never answered)
  if (hooks.dropsConnections?.(method, node)) return;
  const held = hooks.held?.(method, node, call.request);
  if (!held) return serve(node);
  const peer = call.getPeer();
  const onCancelled = () => hooks.record({ method, node, peer, code: grpc.status.CANCELLED, at: Date.now() });
  call.once('cancelled', onCancelled);
  void held.then(() => {
    // (grpc-js also says `cancelled` when a served stream closes: only a call still held counts)
    call.off('cancelled', onCancelled);
    // grpc-js sets `cancelled` before it says so
    if (!call.cancelled) serve(node);
  });
}

/**
 * machined answers Reboot with a new actor id and runs the reboot sequence in a goroutine
 * (internal/app/machined/internal/server/v1alpha1/v1alpha1_server.go Reboot): the node keeps
 * answering, with its old boot id, while the sequence stops its services.
 */
const REBOOT_SEQUENCE_START_MS = 300;

/** ms on the node clock → Timestamp, exact (a fractional ms keeps its sub-ms digits to the ns). */
export function toTimestamp(ms: number): { seconds: number; nanos: number } {
  let seconds = Math.floor(ms / 1000);
  let nanos = Math.round((ms - seconds * 1000) * 1e6);
  if (nanos >= 1e9) {
    seconds += 1;
    nanos -= 1e9;
  }
  return { seconds, nanos };
}

function event(e: ServiceEvent): Plain {
  return { msg: e.msg, state: e.state, ts: toTimestamp(e.ts) };
}

export function startApiServer(certs: ClusterCerts, hooks: ApiHooks): ApiServer {
  const server = new grpc.Server();
  const unary = (rpc: keyof typeof RPC, fn: (rt: NodeRuntime, req: Plain) => Plain) => ({
    path: RPC[rpc].path,
    requestStream: false,
    responseStream: false,
    requestDeserialize: (b: Buffer) => toPlain(messageType(RPC[rpc].req), b),
    responseSerialize: (v: Plain) => encodePlain(messageType(RPC[rpc].res), v),
    handler: (call: grpc.ServerUnaryCall<Plain, Plain>, cb: grpc.sendUnaryData<Plain>) =>
      receive(hooks, RPC[rpc].path, call, (node) => {
        try {
          const rt = enter(hooks, RPC[rpc].path, call, node);
          hooks.answering?.(rt, RPC[rpc].path, call.request);
          const res = fn(rt, call.request);
          const dryRun = call.request?.dry_run === true ? { dryRun: true } : {};
          hooks.record({ method: RPC[rpc].path, node, peer: call.getPeer(), code: grpc.status.OK, at: Date.now(), ...dryRun });
          cb(null, res);
        } catch (e) {
          const err = asApiError(e);
          const dryRun = call.request?.dry_run === true ? { dryRun: true } : {};
          hooks.record({ method: RPC[rpc].path, node, peer: call.getPeer(), code: err.code, at: Date.now(), ...dryRun });
          cb({ code: err.code, details: err.details, metadata: new grpc.Metadata() });
        }
      }),
  });
  const streaming = (rpc: keyof typeof RPC, fn: (rt: NodeRuntime, req: Plain) => Plain[]) => ({
    path: RPC[rpc].path,
    requestStream: false,
    responseStream: true,
    requestDeserialize: (b: Buffer) => toPlain(messageType(RPC[rpc].req), b),
    responseSerialize: (v: Plain) => encodePlain(messageType(RPC[rpc].res), v),
    handler: (call: grpc.ServerWritableStream<Plain, Plain>) =>
      receive(hooks, RPC[rpc].path, call, (node) => {
        try {
          const rt = enter(hooks, RPC[rpc].path, call, node);
          hooks.answering?.(rt, RPC[rpc].path, call.request);
          for (const m of fn(rt, call.request)) call.write(m);
          hooks.record({ method: RPC[rpc].path, node, peer: call.getPeer(), code: grpc.status.OK, at: Date.now() });
          call.end();
        } catch (e) {
          const err = asApiError(e);
          hooks.record({ method: RPC[rpc].path, node, peer: call.getPeer(), code: err.code, at: Date.now() });
          call.emit('error', { code: err.code, details: err.details, metadata: new grpc.Metadata() });
        }
      }),
  });

  const machine = {
    Version: unary('version', (rt) => {
      const b = SERVER_BUILDS[rt.node.version];
      return { messages: [{ version: { tag: b.tag, sha: b.sha, go_version: b.go, os: 'linux', arch: 'amd64' } }] };
    }),
    ServiceList: unary('serviceList', (rt) => ({
      messages: [
        {
          services: services(rt).map((s) => ({
            id: s.id,
            state: s.state,
            events: { events: s.events.map(event) },
            health: { unknown: s.health.unknown, healthy: s.health.healthy, last_message: s.health.lastMessage },
          })),
        },
      ],
    })),
    List: streaming('list', (rt, req) => listFiles(rt, String(req.root || '/'))),
    Read: streaming('read', (rt, req) => readFile(rt, String(req.path))),
    Reboot: unary('reboot', (rt) => {
      setTimeout(() => (hooks.rebootSequence ? hooks.rebootSequence(rt) : void rt.reboot()), REBOOT_SEQUENCE_START_MS).unref();
      return { messages: [{ actor_id: randomUUID() }] };
    }),
    EtcdStatus: unary('etcdStatus', (rt) => {
      const e = etcdOf(rt, 'etcd status', 'failed to query etcd status');
      return {
        messages: [
          {
            member_status: {
              member_id: BigInt(`0x${e.memberId}`).toString(),
              protocol_version: rt.node.version === '1.14' ? '3.7.1' : '3.6.12',
              storage_version: rt.node.version === '1.14' ? '3.7.0' : '3.6.0',
              db_size: 20_000_000,
              db_size_in_use: 9_798_000,
              is_learner: e.learner,
              errors: e.errors ? e.errors.split(', ') : [],
            },
          },
        ],
      };
    }),
    EtcdAlarmList: unary('etcdAlarmList', (rt) => {
      etcdOf(rt, 'etcd alarm list', 'failed to list etcd alarms');
      // AlarmList is cluster-wide: every member answers with the alarms of all members
      const alarms = hooks
        .controlPlanes()
        .flatMap((cp) =>
          (cp.node.etcd?.alarms ?? []).map((alarm) => ({ member_id: BigInt(`0x${cp.node.etcd!.memberId}`).toString(), alarm })),
        );
      return { messages: [{ member_alarms: alarms }] };
    }),
    EtcdMemberList: unary('etcdMemberList', (rt, req) => {
      // QueryLocal asks the node's own etcd; otherwise a client over every control plane's etcd
      // (v1alpha1_server.go EtcdMemberList). Either way the list is etcd's, not the machines'.
      if (!rt.node.etcd) throw new ApiError(grpc.status.UNIMPLEMENTED, 'member list is only available on control plane nodes');
      if (req.query_local && !rt.node.etcd.healthy)
        throw new ApiError(grpc.status.UNKNOWN, 'error building etcd client: context deadline exceeded');
      const members = hooks.etcdMembers(rt);
      return {
        messages: [
          {
            legacy_members: members.map((m) => m.name),
            members: members.map((m) => ({
              id: BigInt(`0x${m.id}`).toString(),
              hostname: m.name,
              peer_urls: m.peerUrls,
              client_urls: m.clientUrls,
              is_learner: m.learner,
            })),
          },
        ],
      };
    }),
  };
  Object.assign(machine, {
    ApplyConfiguration: unary('applyConfiguration', (rt, req) => applyConfiguration(hooks, rt, req)),
  });
  const state = {
    Get: unary('cosiGet', (rt, req) => cosiGet(hooks, rt, req)),
  };
  server.addService(definition(machine), handlers(machine));
  server.addService(definition(state), handlers(state));

  const injector = server.createConnectionInjector(
    grpc.ServerCredentials.createSsl(
      Buffer.from(certs.ca.crt),
      [{ cert_chain: Buffer.from(certs.server.crt), private_key: Buffer.from(certs.server.key) }],
      true,
    ),
  );
  return {
    inject: (socket) => injector.injectConnection(socket),
    close: () => {
      injector.destroy();
      server.forceShutdown();
    },
  };
}

interface Method {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  handler: unknown;
  requestDeserialize: (b: Buffer) => Plain;
  responseSerialize: (v: Plain) => Buffer;
}

function definition(methods: Record<string, Method>): grpc.ServiceDefinition {
  const out: Record<string, unknown> = {};
  for (const [name, m] of Object.entries(methods)) {
    out[name] = {
      path: m.path,
      requestStream: m.requestStream,
      responseStream: m.responseStream,
      requestDeserialize: m.requestDeserialize,
      responseSerialize: m.responseSerialize,
      requestSerialize: () => Buffer.alloc(0),
      responseDeserialize: () => ({}),
    };
  }
  return out as grpc.ServiceDefinition;
}

function handlers(methods: Record<string, Method>): grpc.UntypedServiceImplementation {
  return Object.fromEntries(Object.entries(methods).map(([name, m]) => [name, m.handler])) as grpc.UntypedServiceImplementation;
}

function nodeOf(md: grpc.Metadata): string {
  const v = md.get('node');
  return v.length === 1 ? String(v[0]) : '';
}

/** apid's routing, then machined's authorizer. */
function enter(
  hooks: ApiHooks,
  method: string,
  call: grpc.ServerUnaryCall<Plain, Plain> | grpc.ServerWritableStream<Plain, Plain>,
  node: string,
): NodeRuntime {
  const md = call.metadata;
  const nodeValues = md.get('node');
  if (nodeValues.length > 1) throw new ApiError(grpc.status.INVALID_ARGUMENT, 'node metadata must be single-valued');
  if (nodeValues.length === 0) {
    if (md.get('nodes').length > 0 && method.startsWith('/cosi.resource.State/')) {
      throw new ApiError(grpc.status.INVALID_ARGUMENT, `one-2-many proxying is not supported for method ${method}`);
    }
    throw new ApiError(grpc.status.UNIMPLEMENTED, 'talos simulator: only calls with the `node` metadata key are simulated');
  }
  const r = hooks.route(node, method, call.request);
  if (!r.ok) throw new ApiError(r.code, r.details);
  const subject = call.getAuthContext()?.sslPeerCertificate?.subject as { O?: string | string[] } | undefined;
  const roles = ([] as string[]).concat(subject?.O ?? []);
  if (!roles.some((role) => ROLES[method]?.includes(role))) throw new ApiError(grpc.status.PERMISSION_DENIED, 'not authorized');
  return r.rt;
}

function asApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  return new ApiError(grpc.status.INTERNAL, `talos simulator: ${e instanceof Error ? e.message : String(e)}`);
}

function listFiles(rt: NodeRuntime, rootIn: string): Plain[] {
  const root = rootIn.length > 1 ? rootIn.replace(/\/+$/, '') : rootIn;
  const entries = walk(rt, root, 0, new Set());
  // the server lstats the root before walking; a missing root is a plain (Unknown) Go error
  if (!entries) throw new ApiError(grpc.status.UNKNOWN, `lstat ${root}: no such file or directory`);
  const rootIsDir = entries.some((e) => e.rel === '.');
  return entries.map((e) => ({
    name: e.rel === '.' || !rootIsDir ? root : `${root === '/' ? '' : root}/${e.rel}`,
    relative_name: e.rel,
    size: e.size,
    is_dir: e.dir,
    // ModTime().Unix(): whole seconds
    modified: Math.floor(e.mtimeMs / 1000),
  }));
}

function readFile(rt: NodeRuntime, path: string): Plain[] {
  const proc = rt.procFile(path);
  const entry = proc === undefined ? rt.listing().get(path) : undefined;
  if (proc === undefined && !entry) throw new ApiError(grpc.status.NOT_FOUND, `stat ${path}: no such file or directory`);
  if (entry?.dir) throw new ApiError(grpc.status.UNKNOWN, 'path must be a regular file');
  const bytes = Buffer.from(proc ?? entry?.file?.content ?? '');
  const chunks: Plain[] = [];
  for (let i = 0; i < bytes.length; i += 4096) chunks.push({ bytes: bytes.subarray(i, i + 4096) });
  return chunks;
}

function etcdOf(rt: NodeRuntime, api: string, failure: string) {
  const e = rt.node.etcd;
  if (!e) throw new ApiError(grpc.status.UNIMPLEMENTED, `${api} is only available on control plane nodes`);
  if (!e.healthy) throw new ApiError(grpc.status.UNKNOWN, `${failure}: context deadline exceeded`);
  return e;
}

/** ServicePIDSpec, EtcFileStatusSpec, time StatusSpec, ServiceSpec: the spec message of each type served. */
const SPEC_TYPES: Record<string, string> = {
  'ServicePIDs.runtime.talos.dev': 'talos.resource.definitions.runtime.ServicePIDSpec',
  'EtcFileStatuses.files.talos.dev': 'talos.resource.definitions.files.EtcFileStatusSpec',
  'TimeStatuses.v1alpha1.talos.dev': 'talos.resource.definitions.time.StatusSpec',
  'Services.v1alpha1.talos.dev': 'talos.resource.definitions.v1alpha1.ServiceSpec',
};

/**
 * machined's ApplyConfiguration (v1alpha1_server.go, 1.12.9+/1.13.3+/1.14): every call, a dry run
 * included, first cancels a pending try-mode rollback unless its own mode is TRY; then it decodes and
 * validates the whole config (InvalidArgument), refuses REBOOT on 1.14, refuses in NO_REBOOT/TRY a
 * v1alpha1 change outside what can be applied at once (CanApplyImmediate: machine.files, for one) and
 * answers AUTO as NO_REBOOT when it can; a dry run answers the diff only; otherwise SetConfig with the
 * bytes sent and return: the CRI files are written after the answer (NodeRuntime.applyNow), and on
 * 1.14 the cri restart follows that write. (The apply lock, TryLock, spans one call: the twin answers
 * a call in one turn, so two never overlap; failNext stands in for the refusal.)
 */
function applyConfiguration(hooks: ApiHooks, rt: NodeRuntime, req: Plain): Plain {
  const before = rt.node.machineConfig;
  let mode = String(req.mode);
  if (mode !== 'TRY') rt.cancelRollback();
  let next;
  try {
    next = {
      ...parseConfigText(Buffer.from((req.data as Buffer | undefined) ?? Buffer.alloc(0)).toString('utf8')),
      version: before.version,
    };
  } catch (e) {
    throw new ApiError(grpc.status.INVALID_ARGUMENT, (e as Error).message);
  }
  if (mode === 'REBOOT' && rt.node.version === '1.14')
    throw new ApiError(grpc.status.UNIMPLEMENTED, 'the REBOOT mode is not supported, please use AUTO or NO_REBOOT modes instead');
  const invalid = validate(next);
  if (invalid) throw new ApiError(grpc.status.INVALID_ARGUMENT, invalid);
  const refusal = immediateRefusal(before, next);
  if (refusal && (mode === 'NO_REBOOT' || mode === 'TRY')) throw new ApiError(grpc.status.INVALID_ARGUMENT, refusal);
  if (mode === 'AUTO') mode = refusal ? 'REBOOT' : 'NO_REBOOT';
  const details = {
    NO_REBOOT: 'Applied configuration without a reboot',
    TRY: 'Applied configuration without a reboot',
    STAGED: 'Staged configuration to be applied after the next reboot',
    REBOOT: 'Applied configuration with a reboot',
  }[mode];
  if (!details) throw new ApiError(grpc.status.INVALID_ARGUMENT, `incorrect mode '${mode}' specified for the apply config call`);
  if (req.dry_run) {
    return { messages: [{ mode, mode_details: `Dry run summary:\n${details} (skipped in dry-run).\n${configDiff(before, next)}` }] };
  }
  if (mode === 'STAGED') rt.applyStaged(next);
  else if (mode === 'REBOOT') {
    rt.applyStaged(next);
    void rt.reboot();
  } else {
    if (mode === 'TRY') rt.revertAfter(before, 60_000);
    rt.applyNow(next);
  }
  hooks.applied?.(rt, before);
  return { messages: [{ mode, warnings: hooks.applyWarnings?.(rt) ?? [], mode_details: details }] };
}

/**
 * The active MachineConfig in the form the machine's Talos serves it: annotated (`talos.dev/yaml-spec`)
 * with the YAML spec one string scalar holding the body and proto_spec a MachineConfigSpec; or, on
 * older machines, no annotations and the YAML spec the body itself (talosctl patch.go extractMachineConfigBody).
 */
function machineConfigResource(hooks: ApiHooks, rt: NodeRuntime, def: ResourceDefinition): Plain {
  const body = renderConfigText(rt.node.machineConfig);
  const annotated = (hooks.configBodyForm?.(rt) ?? 'string') === 'string';
  return {
    resource: {
      metadata: {
        namespace: def.namespace,
        type: def.type,
        id: 'v1alpha1',
        version: String(rt.node.machineConfig.version),
        phase: 'running',
        created: toTimestamp(rt.node.bootedAtMs),
        updated: toTimestamp(rt.node.bootedAtMs),
        annotations: annotated ? { 'talos.dev/yaml-spec': '1' } : {},
      },
      spec: annotated
        ? {
            proto_spec: encodePlain(messageType('resource.config.MachineConfigSpec'), { yaml_marshalled: Buffer.from(body) }),
            yaml_spec: stringify(body),
          }
        : { proto_spec: Buffer.alloc(0), yaml_spec: body },
    },
  };
}

function cosiGet(hooks: ApiHooks, rt: NodeRuntime, req: Plain): Plain {
  const type = String(req.type);
  const namespace = String(req.namespace);
  const id = String(req.id);
  // the access filter looks the type up among the node's resource definitions
  const def: ResourceDefinition | undefined = RESOURCES.find((r) => r.type.toLowerCase() === type.toLowerCase());
  if (!def || !hooks.knowsType(rt, def.type)) throw new ApiError(grpc.status.PERMISSION_DENIED, `resource type "${type}" is not supported`);
  if (namespace !== def.namespace) throw new ApiError(grpc.status.PERMISSION_DENIED, `namespace "${namespace}" is not supported`);
  if (def.type === 'MachineConfigs.config.talos.dev' && id === 'v1alpha1') return machineConfigResource(hooks, rt, def);
  const r: CosiResource | undefined = def.list(rt).find((x) => x.id === id);
  if (!r) throw new ApiError(grpc.status.NOT_FOUND, `resource ${def.type}(${namespace}/${id}@undefined) doesn't exist`);
  const spec = Object.fromEntries(r.spec);
  const protoFields = Object.fromEntries(r.spec.map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]));
  const specType = SPEC_TYPES[def.type];
  return {
    resource: {
      metadata: {
        namespace,
        type: def.type,
        id: r.id,
        version: String(r.version),
        owner: r.owner,
        phase: 'running',
        created: toTimestamp(r.created),
        updated: toTimestamp(r.updated),
      },
      spec: {
        proto_spec: specType ? encodePlain(messageType(specType), protoFields) : Buffer.alloc(0),
        yaml_spec: Object.entries(spec)
          .map(([k, v]) => `${k}: ${typeof v === 'string' ? JSON.stringify(v) : String(v)}\n`)
          .join(''),
      },
    },
  };
}
