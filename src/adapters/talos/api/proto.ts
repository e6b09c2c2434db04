// The subset of the Talos machine API and the COSI State API that the API adapter (and the twin's
// server) speak. Message and field numbers are copied from the published .proto files (sources in
// docs/talos-api.md); only the fields we read or send are declared: protobuf skips unknown fields,
// so a newer server's additions are harmless. Kept as text in a module (parsed once at run time)
// so the bundler ships it without asset files.
import protobuf from 'protobufjs';

const GOOGLE = `
syntax = "proto3";
package google.protobuf;
message Timestamp { int64 seconds = 1; int32 nanos = 2; }
message Empty {}
`;

// siderolabs/talos api/common/common.proto
const COMMON = `
syntax = "proto3";
package common;
message Metadata { string hostname = 1; string error = 2; }
message Data { Metadata metadata = 1; bytes bytes = 2; }
`;

// siderolabs/talos api/machine/machine.proto
const MACHINE = `
syntax = "proto3";
package machine;
message VersionInfo { string tag = 1; string sha = 2; string built = 3; string go_version = 4; string os = 5; string arch = 6; }
message Version { common.Metadata metadata = 1; VersionInfo version = 2; }
message VersionResponse { repeated Version messages = 1; }

message ServiceEvent { string msg = 1; string state = 2; google.protobuf.Timestamp ts = 3; }
message ServiceEvents { repeated ServiceEvent events = 1; }
message ServiceHealth { bool unknown = 1; bool healthy = 2; string last_message = 3; google.protobuf.Timestamp last_change = 4; }
message ServiceInfo { string id = 1; string state = 2; ServiceEvents events = 3; ServiceHealth health = 4; }
message ServiceList { common.Metadata metadata = 1; repeated ServiceInfo services = 2; }
message ServiceListResponse { repeated ServiceList messages = 1; }

message ListRequest { string root = 1; bool recurse = 2; int32 recursion_depth = 3; }
message FileInfo {
  common.Metadata metadata = 1; string name = 2; int64 size = 3; uint32 mode = 4; int64 modified = 5;
  bool is_dir = 6; string error = 7; string link = 8; string relative_name = 9;
}
message ReadRequest { string path = 1; }

message EtcdMemberStatus {
  string storage_version = 11; uint64 member_id = 10; string protocol_version = 1; int64 db_size = 2; int64 db_size_in_use = 3;
  uint64 leader = 4; uint64 raft_index = 5; uint64 raft_term = 6; uint64 raft_applied_index = 7; repeated string errors = 8; bool is_learner = 9;
}
message EtcdStatus { common.Metadata metadata = 1; EtcdMemberStatus member_status = 2; }
message EtcdStatusResponse { repeated EtcdStatus messages = 1; }
message EtcdMemberAlarm {
  enum AlarmType { NONE = 0; NOSPACE = 1; CORRUPT = 2; }
  uint64 member_id = 1; AlarmType alarm = 2;
}
message EtcdAlarm { common.Metadata metadata = 1; repeated EtcdMemberAlarm member_alarms = 2; }
message EtcdAlarmListResponse { repeated EtcdAlarm messages = 1; }
message EtcdMemberListRequest { bool query_local = 1; }
message EtcdMember { uint64 id = 2; string hostname = 3; repeated string peer_urls = 4; repeated string client_urls = 5; bool is_learner = 6; }
message EtcdMembers { common.Metadata metadata = 1; repeated string legacy_members = 2; repeated EtcdMember members = 3; }
message EtcdMemberListResponse { repeated EtcdMembers messages = 1; }
`;

// siderolabs/talos api/machine/machine.proto: the reboot (MachineService.Reboot) the API path sends
const MACHINE_REBOOT = `
syntax = "proto3";
package machine;
message RebootRequest { enum Mode { DEFAULT = 0; POWERCYCLE = 1; FORCE = 2; } Mode mode = 1; }
message Reboot { common.Metadata metadata = 1; string actor_id = 2; }
message RebootResponse { repeated Reboot messages = 1; }
`;

// cosi-project/specification proto/v1alpha1/resource.proto and state.proto
const COSI = `
syntax = "proto3";
package cosi.resource;
message Metadata {
  string namespace = 1; string type = 2; string id = 3; string version = 4; string owner = 5; string phase = 6;
  google.protobuf.Timestamp created = 7; google.protobuf.Timestamp updated = 8;
  map<string, string> annotations = 11;
}
message Spec { bytes proto_spec = 1; string yaml_spec = 2; }
message Resource { Metadata metadata = 1; Spec spec = 2; }
message GetOptions {}
message GetRequest { string namespace = 1; string type = 2; string id = 3; GetOptions options = 4; }
message GetResponse { Resource resource = 1; }
`;

// siderolabs/talos api/resource/definitions/{runtime,files,time,v1alpha1}/*.proto
const SPECS = [
  `syntax = "proto3"; package talos.resource.definitions.runtime; message ServicePIDSpec { int32 pid = 1; string mount_namespace = 2; }`,
  `syntax = "proto3"; package talos.resource.definitions.files; message EtcFileStatusSpec { string spec_version = 1; }`,
  `syntax = "proto3"; package talos.resource.definitions.time; message StatusSpec { bool synced = 1; int64 epoch = 2; bool sync_disabled = 3; }`,
  `syntax = "proto3"; package talos.resource.definitions.v1alpha1; message ServiceSpec { bool running = 1; bool healthy = 2; bool unknown = 3; }`,
];

// --- applying the machine config (ApplyConfiguration; the MachineConfig resource's spec) ---
// siderolabs/talos api/machine/machine.proto (ApplyConfiguration) and api/resource/config/config.proto
const APPLY = [
  `syntax = "proto3"; package machine;
message ApplyConfigurationRequest {
  enum Mode { REBOOT = 0; AUTO = 1; NO_REBOOT = 2; STAGED = 3; TRY = 4; }
  bytes data = 1; Mode mode = 4; bool dry_run = 5;
}
message ApplyConfiguration { common.Metadata metadata = 1; repeated string warnings = 2; ApplyConfigurationRequest.Mode mode = 3; string mode_details = 4; }
message ApplyConfigurationResponse { repeated ApplyConfiguration messages = 1; }`,
  `syntax = "proto3"; package resource.config; message MachineConfigSpec { bytes yaml_marshalled = 1; }`,
];
// --- end of applying the machine config ---

let root: protobuf.Root | undefined;

/** The parsed subset; field names as in the .proto files (snake_case). */
export function talosProto(): protobuf.Root {
  if (!root) {
    const r = new protobuf.Root();
    for (const src of [GOOGLE, COMMON, MACHINE, MACHINE_REBOOT, COSI, ...SPECS, ...APPLY]) protobuf.parse(src, r, { keepCase: true });
    r.resolveAll();
    root = r;
  }
  return root;
}

export function messageType(name: string): protobuf.Type {
  return talosProto().lookupType(name);
}

/** The RPCs the adapter calls: full method path, request and response message names. */
export const RPC = {
  version: { path: '/machine.MachineService/Version', req: 'google.protobuf.Empty', res: 'machine.VersionResponse' },
  serviceList: { path: '/machine.MachineService/ServiceList', req: 'google.protobuf.Empty', res: 'machine.ServiceListResponse' },
  list: { path: '/machine.MachineService/List', req: 'machine.ListRequest', res: 'machine.FileInfo' },
  read: { path: '/machine.MachineService/Read', req: 'machine.ReadRequest', res: 'common.Data' },
  etcdStatus: { path: '/machine.MachineService/EtcdStatus', req: 'google.protobuf.Empty', res: 'machine.EtcdStatusResponse' },
  etcdAlarmList: { path: '/machine.MachineService/EtcdAlarmList', req: 'google.protobuf.Empty', res: 'machine.EtcdAlarmListResponse' },
  etcdMemberList: {
    path: '/machine.MachineService/EtcdMemberList',
    req: 'machine.EtcdMemberListRequest',
    res: 'machine.EtcdMemberListResponse',
  },
  cosiGet: { path: '/cosi.resource.State/Get', req: 'cosi.resource.GetRequest', res: 'cosi.resource.GetResponse' },
  applyConfiguration: {
    path: '/machine.MachineService/ApplyConfiguration',
    req: 'machine.ApplyConfigurationRequest',
    res: 'machine.ApplyConfigurationResponse',
    mutates: true,
  },
  reboot: { path: '/machine.MachineService/Reboot', req: 'machine.RebootRequest', res: 'machine.RebootResponse', mutates: true },
} as const;

/** Whether `rpc` changes the machine: such a call is never sent again on its own (connection.ts). */
export function mutates(rpc: RpcName): boolean {
  return 'mutates' in RPC[rpc];
}

export type RpcName = keyof typeof RPC;

/** Plain-object view of a decoded message: 64-bit integers as decimal strings, enums as names, defaults filled. */
export function toPlain(type: protobuf.Type, bytes: Uint8Array): Record<string, unknown> {
  return type.toObject(type.decode(bytes), { longs: String, enums: String, bytes: Buffer, defaults: true, arrays: true });
}

/** The inverse of toPlain (64-bit integers may be decimal strings). */
export function encodePlain(type: protobuf.Type, value: Record<string, unknown>): Buffer {
  return Buffer.from(type.encode(type.fromObject(value)).finish());
}
