export const id = 894;
export const ids = [894];
export const modules = {

/***/ 5894:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {

__webpack_require__.r(__webpack_exports__);
/* harmony export */ __webpack_require__.d(__webpack_exports__, {
/* harmony export */   TalosConnection: () => (/* binding */ TalosConnection),
/* harmony export */   grpcCodeOf: () => (/* binding */ grpcCodeOf),
/* harmony export */   grpcDetailsOf: () => (/* binding */ grpcDetailsOf)
/* harmony export */ });
/* harmony import */ var node_net__WEBPACK_IMPORTED_MODULE_0__ = __webpack_require__(7030);
/* harmony import */ var node_net__WEBPACK_IMPORTED_MODULE_0___default = /*#__PURE__*/__webpack_require__.n(node_net__WEBPACK_IMPORTED_MODULE_0__);
/* harmony import */ var node_tls__WEBPACK_IMPORTED_MODULE_1__ = __webpack_require__(1692);
/* harmony import */ var node_tls__WEBPACK_IMPORTED_MODULE_1___default = /*#__PURE__*/__webpack_require__.n(node_tls__WEBPACK_IMPORTED_MODULE_1__);
/* harmony import */ var _grpc_grpc_js__WEBPACK_IMPORTED_MODULE_2__ = __webpack_require__(3033);
/* harmony import */ var _errors_js__WEBPACK_IMPORTED_MODULE_3__ = __webpack_require__(3916);
/* harmony import */ var _parse_talosErrors_js__WEBPACK_IMPORTED_MODULE_4__ = __webpack_require__(3348);
/* harmony import */ var _proto_js__WEBPACK_IMPORTED_MODULE_5__ = __webpack_require__(7034);
/* harmony import */ var _talosconfig_js__WEBPACK_IMPORTED_MODULE_6__ = __webpack_require__(6651);
// One gRPC channel to the talosconfig context's endpoint (apid), over mutual TLS, shared by every
// call of the run: grpc-js multiplexes the calls as streams of one HTTP/2 connection. Each call
// names exactly one target node with the `node` metadata key (apid's one-to-one routing; the
// deprecated `nodes` key is refused by the COSI State API) and carries its own deadline.
// Failures become ToolError with the cause classified from the gRPC status, as talosctl's
// printed `rpc error: code = … desc = …` is classified on the CLI path.







/** grpc-go's names for the status codes, as apid's errors print them. */
const CODE_NAMES = [
    'OK',
    'Canceled',
    'Unknown',
    'InvalidArgument',
    'DeadlineExceeded',
    'NotFound',
    'AlreadyExists',
    'PermissionDenied',
    'ResourceExhausted',
    'FailedPrecondition',
    'Aborted',
    'OutOfRange',
    'Unimplemented',
    'Internal',
    'Unavailable',
    'DataLoss',
    'Unauthenticated',
];
const SERVER_AUTH_OID = '1.3.6.1.5.5.7.3.1';
class TalosConnection {
    endpoint;
    client;
    callTimeoutMs;
    maxInFlight;
    inFlight = 0;
    queue = [];
    /** see TalosConnectionOptions.redact */
    redact;
    constructor(opts) {
        const { host, port } = (0,_talosconfig_js__WEBPACK_IMPORTED_MODULE_6__/* .splitEndpoint */ .gA)(opts.endpoint);
        this.endpoint = `${host.includes(':') ? `[${host}]` : host}:${port}`;
        this.callTimeoutMs = opts.callTimeoutMs ?? 30_000;
        this.maxInFlight = Math.max(1, opts.maxInFlight ?? 32);
        this.redact = opts.redact ?? ((t) => t);
        const c = opts.credentials;
        const creds = _grpc_grpc_js__WEBPACK_IMPORTED_MODULE_2__/* .credentials */ .z3.createSsl(Buffer.from(c.ca), Buffer.from(c.key), Buffer.from(c.crt), {
            // The chain is verified against the talosconfig CA by TLS itself; this is the identity check.
            checkServerIdentity: (_host, cert) => serverIdentity(cert, opts.serverName),
        });
        // The expected name is set explicitly (SNI and :authority) rather than left to the dialed
        // address, which need not be among the certificate's SANs (a load balancer, a tunnel). An IP
        // address is no TLS server name (RFC 6066, and Node warns with DEP0123 when one is sent), so a
        // dialed IP sends a fixed placeholder name: apid serves one certificate whatever the SNI, and the
        // identity check above never reads it (only an explicit `serverName` is matched).
        const name = opts.serverName ?? ((0,node_net__WEBPACK_IMPORTED_MODULE_0__.isIP)(host) ? IP_ENDPOINT_SERVER_NAME : host);
        this.client = new _grpc_grpc_js__WEBPACK_IMPORTED_MODULE_2__/* .Client */ .Kj(this.endpoint, creds, {
            'grpc.ssl_target_name_override': name,
            'grpc.default_authority': name,
            // our own channel: no subchannel shared with another client in the process
            'grpc.use_local_subchannel_pool': 1,
        });
    }
    close() {
        this.client.close();
    }
    /** calls started and not settled */
    get active() {
        return this.inFlight;
    }
    /** calls waiting for a slot */
    get waiting() {
        return this.queue.length;
    }
    /** One unary call to one node. */
    async unary(rpc, node, request = {}) {
        const m = _proto_js__WEBPACK_IMPORTED_MODULE_5__/* .RPC */ .yo[rpc];
        const reqType = (0,_proto_js__WEBPACK_IMPORTED_MODULE_5__/* .messageType */ .IR)(m.req);
        const resType = (0,_proto_js__WEBPACK_IMPORTED_MODULE_5__/* .messageType */ .IR)(m.res);
        return this.limited(() => new Promise((resolve, reject) => {
            this.client.makeUnaryRequest(m.path, (v) => (0,_proto_js__WEBPACK_IMPORTED_MODULE_5__/* .encodePlain */ .z3)(reqType, v), (b) => (0,_proto_js__WEBPACK_IMPORTED_MODULE_5__/* .toPlain */ .Ul)(resType, b), request, this.metadata(node), { deadline: Date.now() + this.callTimeoutMs }, (err, value) => (err ? reject(this.toolError(m.path, node, err)) : resolve(value ?? {})));
        }));
    }
    /** A server-streaming call to one node, collected whole (List of one path, Read of one file). */
    async stream(rpc, node, request) {
        const m = _proto_js__WEBPACK_IMPORTED_MODULE_5__/* .RPC */ .yo[rpc];
        const reqType = (0,_proto_js__WEBPACK_IMPORTED_MODULE_5__/* .messageType */ .IR)(m.req);
        const resType = (0,_proto_js__WEBPACK_IMPORTED_MODULE_5__/* .messageType */ .IR)(m.res);
        return this.limited(() => new Promise((resolve, reject) => {
            const out = [];
            const call = this.client.makeServerStreamRequest(m.path, (v) => (0,_proto_js__WEBPACK_IMPORTED_MODULE_5__/* .encodePlain */ .z3)(reqType, v), (b) => (0,_proto_js__WEBPACK_IMPORTED_MODULE_5__/* .toPlain */ .Ul)(resType, b), request, this.metadata(node), { deadline: Date.now() + this.callTimeoutMs });
            call.on('data', (d) => out.push(d));
            call.on('error', (err) => reject(this.toolError(m.path, node, err)));
            call.on('status', (s) => {
                if (s.code === _grpc_grpc_js__WEBPACK_IMPORTED_MODULE_2__/* .status */ .h5.OK)
                    resolve(out);
            });
        }));
    }
    metadata(node) {
        const md = new _grpc_grpc_js__WEBPACK_IMPORTED_MODULE_2__/* .Metadata */ .OS();
        md.set('node', node);
        return md;
    }
    async limited(fn) {
        if (this.inFlight >= this.maxInFlight)
            await new Promise((r) => this.queue.push(r));
        this.inFlight++;
        try {
            return await fn();
        }
        finally {
            this.inFlight--;
            this.queue.shift()?.();
        }
    }
    toolError(path, node, err) {
        const code = CODE_NAMES[err.code] ?? String(err.code);
        const text = `rpc error: code = ${code} desc = ${this.redact(String(err.details ?? ''))}`;
        const kind = (0,_parse_talosErrors_js__WEBPACK_IMPORTED_MODULE_4__/* .classifyTalosError */ .yC)(text);
        return new _errors_js__WEBPACK_IMPORTED_MODULE_3__/* .ToolError */ .v4({
            tool: 'talos-api',
            command: `${path} (node ${node} via ${this.endpoint})`,
            kind,
            exitCode: null,
            stderr: text,
            node,
            message: `${path} for ${node} via ${this.endpoint} failed (${kind}: ${text})`,
        });
    }
}
/** The gRPC status code name of a ToolError from this module (undefined for others). */
function grpcCodeOf(e) {
    return /^rpc error: code = (\w+) desc = /.exec(e.stderr)?.[1];
}
/** The status description of a ToolError from this module. */
function grpcDetailsOf(e) {
    return e.stderr.replace(/^rpc error: code = \w+ desc = /, '');
}
/** The TLS server name sent when the endpoint is an IP address (see the constructor). */
const IP_ENDPOINT_SERVER_NAME = 'talos-apid';
function serverIdentity(cert, serverName) {
    // apid's server certificate carries ExtKeyUsage ServerAuth only; the CA's client certificates
    // (talosconfig users, apid's own client side) carry ClientAuth only, so a client key of the same
    // CA cannot stand in for a server.
    const eku = cert.ext_key_usage ?? [];
    if (!eku.includes(SERVER_AUTH_OID)) {
        return new Error(`the server certificate (${String(cert.subject?.CN ?? 'no CN')}) is not a TLS server certificate (no ExtKeyUsage serverAuth)`);
    }
    return serverName === undefined ? undefined : (0,node_tls__WEBPACK_IMPORTED_MODULE_1__.checkServerIdentity)(serverName, cert);
}


/***/ }),

/***/ 7034:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {

/* harmony export */ __webpack_require__.d(__webpack_exports__, {
/* harmony export */   IR: () => (/* binding */ messageType),
/* harmony export */   Ul: () => (/* binding */ toPlain),
/* harmony export */   yo: () => (/* binding */ RPC),
/* harmony export */   z3: () => (/* binding */ encodePlain)
/* harmony export */ });
/* unused harmony export talosProto */
/* harmony import */ var protobufjs__WEBPACK_IMPORTED_MODULE_0__ = __webpack_require__(3928);
/* harmony import */ var protobufjs__WEBPACK_IMPORTED_MODULE_0___default = /*#__PURE__*/__webpack_require__.n(protobufjs__WEBPACK_IMPORTED_MODULE_0__);
// The subset of the Talos machine API and the COSI State API that the API adapter (and the twin's
// server) speak. Message and field numbers are copied from the published .proto files (sources in
// docs/talos-api.md); only the fields we read or send are declared: protobuf skips unknown fields,
// so a newer server's additions are harmless. Kept as text in a module (parsed once at run time)
// so the bundler ships it without asset files.

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
`;
// cosi-project/specification proto/v1alpha1/resource.proto and state.proto
const COSI = `
syntax = "proto3";
package cosi.resource;
message Metadata {
  string namespace = 1; string type = 2; string id = 3; string version = 4; string owner = 5; string phase = 6;
  google.protobuf.Timestamp created = 7; google.protobuf.Timestamp updated = 8;
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
let root;
/** The parsed subset; field names as in the .proto files (snake_case). */
function talosProto() {
    if (!root) {
        const r = new (protobufjs__WEBPACK_IMPORTED_MODULE_0___default().Root)();
        for (const src of [GOOGLE, COMMON, MACHINE, COSI, ...SPECS])
            protobufjs__WEBPACK_IMPORTED_MODULE_0___default().parse(src, r, { keepCase: true });
        r.resolveAll();
        root = r;
    }
    return root;
}
function messageType(name) {
    return talosProto().lookupType(name);
}
/** The RPCs the adapter calls: full method path, request and response message names. */
const RPC = {
    version: { path: '/machine.MachineService/Version', req: 'google.protobuf.Empty', res: 'machine.VersionResponse' },
    serviceList: { path: '/machine.MachineService/ServiceList', req: 'google.protobuf.Empty', res: 'machine.ServiceListResponse' },
    list: { path: '/machine.MachineService/List', req: 'machine.ListRequest', res: 'machine.FileInfo' },
    read: { path: '/machine.MachineService/Read', req: 'machine.ReadRequest', res: 'common.Data' },
    etcdStatus: { path: '/machine.MachineService/EtcdStatus', req: 'google.protobuf.Empty', res: 'machine.EtcdStatusResponse' },
    etcdAlarmList: { path: '/machine.MachineService/EtcdAlarmList', req: 'google.protobuf.Empty', res: 'machine.EtcdAlarmListResponse' },
    cosiGet: { path: '/cosi.resource.State/Get', req: 'cosi.resource.GetRequest', res: 'cosi.resource.GetResponse' },
};
/** Plain-object view of a decoded message: 64-bit integers as decimal strings, enums as names, defaults filled. */
function toPlain(type, bytes) {
    return type.toObject(type.decode(bytes), { longs: String, enums: String, bytes: Buffer, defaults: true, arrays: true });
}
/** The inverse of toPlain (64-bit integers may be decimal strings). */
function encodePlain(type, value) {
    return Buffer.from(type.encode(type.fromObject(value)).finish());
}


/***/ })

};
