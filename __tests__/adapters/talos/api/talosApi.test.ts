// The Talos API adapter against the twin's gRPC server over real mutual TLS: each read, exact
// nanosecond instants, each error class, the talosconfig traps (Ed25519 label, CA, malformed
// contexts), the CLI fallback without a client certificate, and one connection for many calls.
import { createPrivateKey } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type Server, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Runner } from '../../../../src/adapters/exec.js';
import { TalosApi } from '../../../../src/adapters/talos/api/apiClient.js';
import { TalosConnection } from '../../../../src/adapters/talos/api/connection.js';
import { MAX_REFUSALS } from '../../../../src/adapters/talos/api/refusals.js';
import { openTalosClient, type OpenedTalos } from '../../../../src/adapters/talos/open.js';
import { encodePlain, messageType, toPlain } from '../../../../src/adapters/talos/api/proto.js';
import { loadTalosContext, relabelKey } from '../../../../src/adapters/talos/api/talosconfig.js';
import { Talosctl } from '../../../../src/adapters/talos/cli/talosctl.js';
import { InputError, ServerIdentityError, ToolError } from '../../../../src/core/errors.js';
import { clusterCerts, talosconfigYaml, talosKeyLabel } from '../../../../sim/talos/api/certs.js';
import { startApiServer } from '../../../../sim/talos/api/server.js';
import { TalosSim } from '../../../../sim/talos/index.js';
import { recordingHooks } from '../../../sim-talos/helpers.js';

const CRED = { username: 'ci-bot', password: 'token-1' };
const CP = '10.0.1.10';
const W13 = '10.0.1.1';
const W14 = '10.0.1.2';
/** a Talos older than ServicePIDs (v1.13.0) */
const OLD = '10.0.1.3';
const GONE = '10.0.9.9';
const CRI_TOML = '/etc/cri/conf.d/cri.toml';
const PART = '/etc/cri/conf.d/01-registries.part';
const NS_TEXT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/;

let sim: TalosSim;
let work: string;
let opened: OpenedTalos;
let api: TalosApi;

/** A talosconfig in the work directory; returns its path. */
function writeConfig(name: string, text: string): string {
  const p = join(work, name);
  writeFileSync(p, text);
  return p;
}

function apiFor(path: string, callTimeoutMs?: number): Promise<OpenedTalos> {
  return openTalosClient({ runner: new Runner(), path, callTimeoutMs });
}

beforeAll(async () => {
  sim = await TalosSim.start({ kube: recordingHooks() });
  sim.addNode({ name: 'cp-1', ip: CP, role: 'control-plane', credential: { 'ghcr.io': CRED } });
  sim.addNode({ name: 'w-13', ip: W13, role: 'worker', version: '1.13', credential: { 'ghcr.io': CRED } });
  sim.addNode({ name: 'w-14', ip: W14, role: 'worker', version: '1.14', credential: { 'ghcr.io': CRED } });
  sim.addNode({ name: 'w-old', ip: OLD, role: 'worker', credential: { 'ghcr.io': CRED } });
  sim.forgetResourceType(OLD, 'ServicePIDs.runtime.talos.dev');
  work = mkdtempSync(join(tmpdir(), 'talos-api-test-'));
  opened = await apiFor(sim.talosconfigPath);
  expect(opened.client).toBeInstanceOf(TalosApi);
  api = opened.client as TalosApi;
});

afterAll(async () => {
  opened?.close();
  await sim?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('reads', () => {
  it('Version: the server tag per node, one call per node with the `node` key', async () => {
    const before = sim.apiCalls.length;
    const r = await api.version([CP, W14]);
    expect([...r]).toEqual([
      [CP, { ok: true, value: 'v1.13.8' }],
      [W14, { ok: true, value: 'v1.14.0' }],
    ]);
    const calls = sim.apiCalls.slice(before);
    expect(calls.map((c) => [c.method, c.node]).sort()).toEqual([
      ['/machine.MachineService/Version', CP],
      ['/machine.MachineService/Version', W14],
    ]);
  });

  it('ServiceList: cri state, health and every event at the exact instant the node logged it', async () => {
    const c = sim.node(CP).containerd;
    // a sub-millisecond part (exactly representable) must come through as nanoseconds
    c.events[0].ts = Math.floor(c.events[0].ts) + 0.125;
    const r = (await api.criService([CP])).get(CP)!;
    if (!r.ok) throw new Error(r.error);
    expect(r.value).toMatchObject({ via: 'api', state: c.state, health: 'OK' });
    expect(r.value.events.map((e) => [e.state, e.message, e.at?.earliestMs, e.at?.latestMs])).toEqual(
      c.events.map((e) => [e.state, e.msg, e.ts, e.ts]),
    );
    for (const e of r.value.events) {
      expect(e.at?.via).toBe('api');
      expect(e.at?.text).toMatch(NS_TEXT);
      expect(e).not.toHaveProperty('agoMs');
    }
    const ms = c.events[0].ts;
    expect(r.value.events[0].at?.text).toBe(
      `${new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19)}.${String(Math.round((ms % 1000) * 1e6)).padStart(9, '0')}Z`,
    );
    expect(r.value.events[0].at?.text).toMatch(/\.\d{3}125000Z$/);
    expect(r.value.clientBeforeMs).toBeLessThanOrEqual(r.value.clientAfterMs);
  });

  it('ServicePIDs: the pid and the exact creation instant; undefined on a node older than the type', async () => {
    const r = await api.servicePids([CP, W14, OLD]);
    const p = sim.node(CP).containerd.servicePid!;
    expect(r.get(CP)).toEqual({
      ok: true,
      value: { pid: p.pid, created: expect.objectContaining({ earliestMs: p.created, latestMs: p.created, via: 'api' }) },
    });
    expect(r.get(W14)).toMatchObject({ ok: true, value: { pid: sim.node(W14).containerd.pid } });
    expect(r.has(OLD)).toBe(true);
    expect(r.get(OLD)).toBeUndefined();
  });

  it('EtcFileStatus: the later of created and updated, exact; a path without a status fails with not-found', async () => {
    const st = sim.node(W13).etcFileStatus;
    const s = st.get('cri/conf.d/cri.toml')!;
    // a status only ever created: its constructor stamped `updated` a hair before `created`
    st.set('cri/conf.d/cri.toml', { ...s, created: s.updated + 0.25 });
    const r = await api.etcFileStatus([W13, W14], [CRI_TOML, PART]);
    expect(r.get(W13)!.get(CRI_TOML)).toEqual({
      ok: true,
      value: {
        id: 'cri/conf.d/cri.toml',
        specVersion: s.specVersion,
        updated: expect.objectContaining({ earliestMs: s.updated + 0.25, latestMs: s.updated + 0.25 }),
      },
    });
    expect(r.get(W13)!.get(CRI_TOML)!.ok && r.get(W13)!.get(CRI_TOML)).toBeTruthy();
    // 1.14 merges registry auth into cri.toml: no 01-registries.part, so no status for it
    const missing = r.get(W14)!.get(PART)!;
    expect(missing.ok).toBe(false);
    if (!missing.ok)
      expect(missing.error).toMatch(/^\/cosi\.resource\.State\/Get for 10\.0\.1\.2 via .* failed \(not-found: .*doesn't exist\)$/);
  });

  it('TimeStatus: synced and epoch as the node has them', async () => {
    sim.setClock(W14, { synced: false, epoch: 2 });
    const r = await api.timeStatus([CP, W14]);
    expect(r.get(CP)).toEqual({ ok: true, value: { synced: true, epoch: 0 } });
    expect(r.get(W14)).toEqual({ ok: true, value: { synced: false, epoch: 2 } });
    sim.setClock(W14, { synced: true, epoch: 0 });
  });

  it('List: existence and the whole-second mtime as [s, s+999.999 ms]; a missing file exists:false; a directory is an error', async () => {
    const r = await api.listFiles([W13, W14], [CRI_TOML, PART, '/etc/cri/conf.d']);
    const mtime = sim.node(W13).files.get(CRI_TOML)!.mtimeMs;
    const s = Math.floor(mtime / 1000);
    expect(r.get(W13)!.get(CRI_TOML)).toEqual({
      ok: true,
      value: {
        path: CRI_TOML,
        exists: true,
        mtime: {
          earliestMs: s * 1000,
          latestMs: s * 1000 + 999.999,
          via: 'api',
          text: `${new Date(s * 1000).toISOString().slice(0, 19)}Z`,
        },
      },
    });
    expect(r.get(W14)!.get(PART)).toEqual({ ok: true, value: { path: PART, exists: false } });
    const dir = r.get(W13)!.get('/etc/cri/conf.d')!;
    expect(dir.ok).toBe(false);
    if (!dir.ok) expect(dir.error).toMatch(/List for 10\.0\.1\.1: \/etc\/cri\/conf\.d is a directory/);
  });

  it('Read: the file through the CRI TOML parser; a missing file is exists:false', async () => {
    expect(await api.readAuth(W14, CRI_TOML)).toEqual({
      ok: true,
      value: {
        path: CRI_TOML,
        exists: true,
        auth: { 'ghcr.io': { username: 'ci-bot', password: 'token-1', auth: '', identitytoken: '' } },
      },
    });
    expect(await api.readAuth(W14, '/etc/cri/conf.d/nothing.toml')).toEqual({
      ok: true,
      value: { path: '/etc/cri/conf.d/nothing.toml', exists: false, auth: {} },
    });
  });

  it('EtcdStatus and EtcdAlarmList: member id in hex, learner, alarms; a worker answers Unimplemented', async () => {
    sim.setEtcd(CP, { alarm: 'NOSPACE' });
    const id = sim.node(CP).etcd!.memberId;
    expect(await api.etcdStatus(CP)).toEqual([{ node: CP, memberId: id, learner: false, errors: '' }]);
    expect(await api.etcdAlarms(CP)).toEqual([{ node: CP, memberId: id, alarm: 'NOSPACE' }]);
    sim.setEtcd(CP, { alarm: null });
    expect(await api.etcdAlarms(CP)).toEqual([]);
    const e = await api.etcdStatus(W13).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ToolError);
    expect(e).toMatchObject({ tool: 'talos-api', kind: 'invalid', node: W13 });
    expect((e as Error).message).toContain('etcd status is only available on control plane nodes');
  });
});

describe('etcd membership', () => {
  it("EtcdMemberList: etcd's own list (an orphan, a learner), ids in hex, the same as talosctl reads", async () => {
    const orphan = sim.addEtcdMember({ id: '5e1f00d0c0ffee01', name: 'cp-0', address: '10.0.9.1' });
    const learner = sim.addEtcdMember({ name: 'cp-new', address: 'fd00::3', learner: true });
    try {
      const members = await api.etcdMembers(CP);
      expect(members).toEqual([
        {
          id: sim.node(CP).etcd!.memberId,
          name: 'cp-1',
          peerUrls: [`https://${CP}:2380`],
          clientUrls: [`https://${CP}:2379`],
          learner: false,
        },
        { id: orphan, name: 'cp-0', peerUrls: ['https://10.0.9.1:2380'], clientUrls: ['https://10.0.9.1:2379'], learner: false },
        { id: learner, name: 'cp-new', peerUrls: ['https://[fd00::3]:2380'], clientUrls: ['https://[fd00::3]:2379'], learner: true },
      ]);
      const cli = new Talosctl({ runner: new Runner(), talosconfig: sim.talosconfigPath, binary: join(sim.binDir, 'talosctl') });
      expect(await cli.etcdMembers(CP)).toEqual(members);
    } finally {
      sim.removeEtcdMember(orphan);
      sim.removeEtcdMember(learner);
    }
  });

  // The twin answers from the other members when query_local is unset, so the refusal below also
  // proves the adapter asks the node's own etcd, as talosctl does.
  it('EtcdMemberList: a worker answers Unimplemented; a control plane whose etcd is down cannot answer', async () => {
    await expect(api.etcdMembers(W13)).rejects.toMatchObject({ tool: 'talos-api', kind: 'invalid', node: W13 });
    sim.setEtcd(CP, { healthy: false });
    try {
      const e = await api.etcdMembers(CP).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ToolError);
      expect((e as Error).message).toContain('error building etcd client: context deadline exceeded');
    } finally {
      sim.setEtcd(CP, { healthy: true });
    }
  });

  it('the field numbers of EtcdMemberListRequest / EtcdMemberListResponse (api/machine/machine.proto)', () => {
    const req = encodePlain(messageType('machine.EtcdMemberListRequest'), { query_local: true });
    expect([...req]).toEqual([0x08, 0x01]); // query_local = 1
    // EtcdMember: id = 2 (varint), hostname = 3, peer_urls = 4, client_urls = 5, is_learner = 6
    const member = [0x10, 0x2a, 0x1a, 0x01, 0x61, 0x22, 0x01, 0x70, 0x2a, 0x01, 0x63, 0x30, 0x01];
    // EtcdMembers.members = 3; EtcdMemberListResponse.messages = 1
    const bytes = Buffer.from([0x0a, member.length + 2, 0x1a, member.length, ...member]);
    expect(toPlain(messageType('machine.EtcdMemberListResponse'), bytes)).toMatchObject({
      messages: [{ members: [{ id: '42', hostname: 'a', peer_urls: ['p'], client_urls: ['c'], is_learner: true }] }],
    });
  });
});

describe('errors', () => {
  it('a node apid cannot reach: transport, naming the node and the RPC', async () => {
    const r = (await api.version([GONE])).get(GONE)!;
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.error).toMatch(
        /^\/machine\.MachineService\/Version for 10\.0\.9\.9 via 127\.0\.0\.1:\d+ failed \(transport: rpc error: code = Unavailable desc = connection error: .*dial tcp 10\.0\.9\.9:50000: connect: connection refused/,
      );
  });

  it('an endpoint nobody listens on: transport for every node', async () => {
    const certs = clusterCerts();
    const p = writeConfig(
      'refused',
      talosconfigYaml({ context: 'x', endpoints: ['127.0.0.1:1'], ca: certs.ca.crt, client: certs.client('os:admin') }),
    );
    const o = await apiFor(p);
    try {
      const r = (await o.client.version([CP])).get(CP)!;
      expect(r.ok).toBe(false);
      if (!r.ok)
        expect(r.error).toMatch(
          /^\/machine\.MachineService\/Version for 10\.0\.1\.10 via 127\.0\.0\.1:1 failed \(transport: rpc error: code = Unavailable/,
        );
    } finally {
      o.close();
    }
  });

  it('a reader certificate may list but not read files: forbidden (PermissionDenied)', async () => {
    const certs = clusterCerts();
    const p = writeConfig(
      'reader',
      talosconfigYaml({ context: 'r', endpoints: [sim.endpoint], ca: certs.ca.crt, client: certs.client('os:reader') }),
    );
    const o = await apiFor(p);
    try {
      expect((await o.client.version([CP])).get(CP)).toEqual({ ok: true, value: 'v1.13.8' });
      const r = await o.client.readAuth(CP, CRI_TOML);
      expect(r.ok).toBe(false);
      if (!r.ok)
        expect(r.error).toMatch(
          /Read for 10\.0\.1\.10 via .* failed \(forbidden: rpc error: code = PermissionDenied desc = not authorized\)/,
        );
    } finally {
      o.close();
    }
  });

  it('a server that never answers: timeout at the per-call deadline', async () => {
    const silent: Server = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    const certs = clusterCerts();
    const p = writeConfig(
      'silent',
      talosconfigYaml({ context: 's', endpoints: [`127.0.0.1:${port}`], ca: certs.ca.crt, client: certs.client('os:admin') }),
    );
    const o = await apiFor(p, 300);
    try {
      const t0 = Date.now();
      const r = (await o.client.timeStatus([CP])).get(CP)!;
      expect(Date.now() - t0).toBeLessThan(5000);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error).toMatch(/State\/Get for 10\.0\.1\.10 via .* failed \(timeout: rpc error: code = DeadlineExceeded/);
    } finally {
      o.close();
      silent.close();
    }
  });

  it('fault rules of the twin apply to API calls as to talosctl commands', async () => {
    sim.failNext({ command: 'get', node: W14 }, { stderr: 'rpc error: code = PermissionDenied desc = not authorized\n', exitCode: 1 });
    const r = (await api.timeStatus([W14])).get(W14)!;
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain('(forbidden: rpc error: code = PermissionDenied desc = not authorized)');
    expect((await api.timeStatus([W14])).get(W14)!.ok).toBe(true);
  });
});

describe('server identity', () => {
  /** A twin presenting `server` (of the cluster CA unless said otherwise) on a port of its own; nothing routed. */
  async function impostor(server: { crt: string; key: string }): Promise<{ endpoint: string; stop(): void }> {
    const certs = clusterCerts();
    const api = startApiServer(
      { ...certs, server },
      {
        route: () => ({ ok: false, code: 14, details: 'unused' }),
        controlPlanes: () => [],
        etcdMembers: () => [],
        knowsType: () => true,
        record: () => undefined,
      },
    );
    const front: Server = createServer((socket) => api.inject(socket));
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    return {
      endpoint: `127.0.0.1:${(front.address() as { port: number }).port}`,
      stop: () => {
        api.close();
        front.close();
      },
    };
  }

  function configFor(name: string, endpoint: string, ca = clusterCerts().ca.crt): string {
    return writeConfig(name, talosconfigYaml({ context: name, endpoints: [endpoint], ca, client: clusterCerts().client('os:admin') }));
  }

  /** openTalosClient must refuse: a ServerIdentityError naming the endpoint, never the talosctl path. */
  async function refusedAtOpen(path: string, serverName?: string): Promise<ServerIdentityError> {
    const err = await openTalosClient({ runner: new Runner(), path, serverName }).then(
      (o) => {
        o.close();
        throw new Error(`opened (${o.describe}) instead of refusing the server certificate`);
      },
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ServerIdentityError);
    expect(err).not.toBeInstanceOf(ToolError);
    return err as ServerIdentityError;
  }

  it('a certificate of the cluster CA issued for another address is refused at open, naming the endpoint and the names it is valid for', async () => {
    const srv = await impostor(clusterCerts().serverAs('wrong-san'));
    try {
      const e = await refusedAtOpen(configFor('wrong-san', srv.endpoint));
      expect(e.endpoint).toBe(srv.endpoint);
      expect(e.serverName).toBe('127.0.0.1');
      expect(e.message).toBe(
        `the Talos API at ${srv.endpoint} presented a certificate that is not a valid server certificate for it: it is valid for 10.255.255.1, not 127.0.0.1`,
      );
    } finally {
      srv.stop();
    }
  });

  it('a dual-use certificate (serverAuth + clientAuth, no SAN, as a pre-1.3 talosconfig has) is refused at open', async () => {
    const srv = await impostor(clusterCerts().serverAs('dual-use'));
    try {
      const e = await refusedAtOpen(configFor('dual-use', srv.endpoint));
      expect(e.reasons).toEqual([
        expect.stringMatching(/^it is a client certificate too \(ExtKeyUsage serverAuth and clientAuth;/),
        'it names no IP address (no IP SANs), so it cannot be valid for 127.0.0.1',
      ]);
    } finally {
      srv.stop();
    }
  });

  it('a client certificate of the cluster CA (clientAuth only) is refused at open: a client key cannot pose as apid', async () => {
    const srv = await impostor(clusterCerts().client('os:reader'));
    try {
      const e = await refusedAtOpen(configFor('client-cert', srv.endpoint));
      expect(e.reasons).toContain('it is not a TLS server certificate (no ExtKeyUsage serverAuth)');
    } finally {
      srv.stop();
    }
  });

  it('a server certificate from another CA is refused at open, with the TLS verification error', async () => {
    const e = await refusedAtOpen(configFor('wrong-ca', sim.endpoint, clusterCerts('another-cluster').ca.crt));
    expect(e.reasons[0]).toMatch(/^it does not verify against the talosconfig's CA \([A-Z_]+\)$/);
  });

  it('talos-server-name: the certificate is checked for that name instead of the dialed address', async () => {
    const srv = await TalosSim.start({ kube: recordingHooks(), apiCertificate: 'wrong-san' });
    srv.addNode({ name: 'cp-1', ip: CP, role: 'control-plane', credential: { 'ghcr.io': CRED } });
    try {
      await refusedAtOpen(srv.talosconfigPath);
      const o = await openTalosClient({ runner: new Runner(), path: srv.talosconfigPath, serverName: 'talos-sim-apid' });
      try {
        expect(o.client).toBeInstanceOf(TalosApi);
        expect(o.describe).toContain('server certificate checked for talos-sim-apid');
        expect((await o.client.version([CP])).get(CP)).toEqual({ ok: true, value: 'v1.13.8' });
      } finally {
        o.close();
      }
      // an IP SAN given as the name works too; a name the certificate lacks does not
      const byIp = await openTalosClient({ runner: new Runner(), path: srv.talosconfigPath, serverName: '10.255.255.1' });
      byIp.close();
      const e = await refusedAtOpen(srv.talosconfigPath, 'apid.example.com');
      expect(e.message).toContain('(checked for the name apid.example.com)');
    } finally {
      await srv.stop();
    }
  });

  it('a certificate refused on the first connection fails every call with the ServerIdentityError, never a failed reading', async () => {
    const srv = await impostor(clusterCerts().serverAs('wrong-san'));
    const admin = clusterCerts().client('os:admin');
    // no verifyServer(): the gRPC channel's own first connection is refused
    const conn = new TalosConnection({
      endpoint: srv.endpoint,
      credentials: { ca: clusterCerts().ca.crt, crt: admin.crt, key: admin.key },
    });
    const client = new TalosApi(conn, new Talosctl({ runner: new Runner() }));
    try {
      const first = await client.version([CP]).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(first).toBeInstanceOf(ServerIdentityError);
      expect((first as Error).message).toContain('it is valid for 10.255.255.1, not 127.0.0.1');
      await expect(client.readAuth(CP, CRI_TOML)).rejects.toBe(first);
      await expect(client.servicePids([CP])).rejects.toBe(first);
    } finally {
      client.close();
      srv.stop();
    }
  });
});

// Apid's certificate is re-issued when the machine's addresses change (a VIP moving
// to another control plane while the one holding it reboots, a node back from its reboot before its
// certificate names the dialed address). A refusal on a reconnection fails that connection only: the
// call waits for the next dial within its own deadline; the run's ServerIdentityError comes on the
// first connection (above) or after MAX_REFUSALS refusals in a row. The certificate is never trusted
// and nothing falls back to talosctl.
describe('a certificate refused on a reconnection', () => {
  const start = async () => {
    const t = await TalosSim.start({ kube: recordingHooks(), rebootMs: 400 });
    t.addNode({ name: 'cp-1', ip: CP, role: 'control-plane', credential: { 'ghcr.io': CRED } });
    const ctx = loadTalosContext({ path: t.talosconfigPath });
    const conn = new TalosConnection({ endpoint: ctx.endpoints[0], credentials: ctx.credentials!, callTimeoutMs: 20_000 });
    await conn.verifyServer();
    const client = new TalosApi(conn, new Talosctl({ runner: new Runner() }));
    expect((await client.version([CP])).get(CP)?.ok).toBe(true);
    return { t, conn, client };
  };

  // Re-issued after the client's second refused dial (TalosSim.moveApiAddress({ dials })), counted, not
  // timed: a loaded machine's late timer must not decide the test. What the calls waited for is held to
  // the twin's records: no call answered between the move and the re-issue, every one answered after it,
  // on a connection the client dialled after the refused ones.
  const countReissue = (t: TalosSim) => {
    const at = { calls: -1, connections: -1 };
    const reissue = t.reissueApiCertificate.bind(t);
    t.reissueApiCertificate = (kind) => {
      at.calls = t.apiCalls.length;
      at.connections = t.apiConnections;
      reissue(kind);
    };
    return at;
  };

  it('re-issued after two refused dials: the calls that met it are answered once it is; no ServerIdentityError', async () => {
    const { t, client } = await start();
    try {
      const reissued = countReissue(t);
      const calls = t.apiCalls.length;
      const peers = new Set(t.apiCalls.map((c) => c.peer));
      const connections = t.apiConnections;
      t.moveApiAddress({ dials: 2 });
      const [v, auth, pids] = await Promise.all([client.version([CP]), client.readAuth(CP, CRI_TOML), client.servicePids([CP])]);
      expect(v.get(CP)).toEqual({ ok: true, value: 'v1.13.8' });
      expect(auth.ok).toBe(true);
      expect(pids.get(CP)?.ok).toBe(true);
      // the two refused dials happened, and nothing was answered until the re-issue
      expect(reissued.connections - connections).toBe(2);
      expect(reissued.calls).toBe(calls);
      // the three calls were answered after it, on a connection dialled after the refused ones
      const answered = t.apiCalls.slice(calls);
      expect(answered).toHaveLength(3);
      expect(t.apiConnections).toBeGreaterThan(reissued.connections);
      for (const c of answered) expect(peers.has(c.peer), c.peer).toBe(false);
      expect((await client.version([CP])).get(CP)?.ok).toBe(true);
    } finally {
      client.close();
      await t.stop();
    }
  });

  it('a Reboot that met the refused certificate is sent once, after the re-issue', async () => {
    const { t, client } = await start();
    try {
      const reissued = countReissue(t);
      const connections = t.apiConnections;
      const before = t.node(CP).bootID;
      t.moveApiAddress({ dials: 2 });
      await client.reboot(CP, 20_000, before);
      expect(reissued.connections - connections).toBe(2);
      expect(t.node(CP).bootID).not.toBe(before);
      const reboots = t.apiCalls.map((c, i) => ({ ...c, i })).filter((c) => c.method === '/machine.MachineService/Reboot');
      expect(reboots).toHaveLength(1);
      expect(reboots[0].i).toBeGreaterThanOrEqual(reissued.calls);
    } finally {
      client.close();
      await t.stop();
    }
  });

  it(`never re-issued: after ${MAX_REFUSALS} refusals in a row it is the run's ServerIdentityError, for the waiting call and every later one`, async () => {
    const { t, client } = await start();
    try {
      t.presentApiCertificate('wrong-san');
      const t0 = Date.now();
      const e = await client.version([CP]).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(ServerIdentityError);
      expect((e as Error).message).toContain('it is valid for 10.255.255.1, not 127.0.0.1');
      expect((e as Error).message).toContain(`refused on ${MAX_REFUSALS} reconnections in a row`);
      // one dial a second
      expect(Date.now() - t0).toBeGreaterThanOrEqual((MAX_REFUSALS - 2) * 1000);
      // a good certificate afterwards changes nothing: the refusal is the run's
      t.reissueApiCertificate('valid');
      await expect(client.readAuth(CP, CRI_TOML)).rejects.toBe(e);
      expect(t.commands).toEqual([]);
    } finally {
      client.close();
      await t.stop();
    }
  });

  // The deadline is 5 s: fewer refused dials than MAX_REFUSALS at the connection's 1 s interval (grpc's
  // jitter makes it 0.8 to 1.2 s), and after the re-issue the next call has most of it for the next dial
  // and its handshake (at 2.5 s that was about 1.3 s, which a loaded machine's event loop can spend).
  it("a call whose deadline comes while its dials are refused fails as a transport failure, not the run's refusal", async () => {
    const t = await TalosSim.start({ kube: recordingHooks() });
    t.addNode({ name: 'cp-1', ip: CP, role: 'control-plane', credential: { 'ghcr.io': CRED } });
    const ctx = loadTalosContext({ path: t.talosconfigPath });
    const conn = new TalosConnection({ endpoint: ctx.endpoints[0], credentials: ctx.credentials!, callTimeoutMs: 5000 });
    const client = new TalosApi(conn, new Talosctl({ runner: new Runner() }));
    try {
      await conn.verifyServer();
      expect((await client.version([CP])).get(CP)?.ok).toBe(true);
      t.presentApiCertificate('wrong-san');
      const r = (await client.version([CP])).get(CP);
      expect(r?.ok).toBe(false);
      expect(r?.ok === false && r.error).toMatch(
        /transport: .*the server certificate was refused on every dial until the call's deadline \(it is valid for 10\.255\.255\.1/,
      );
      t.reissueApiCertificate('valid');
      expect((await client.version([CP])).get(CP)?.ok).toBe(true);
    } finally {
      client.close();
      await t.stop();
    }
  });
});

/** A twin with one control plane, and the API client on its talosconfig (20 s a call; `signal`: the run's cancellation). */
async function startOneControlPlane(signal?: AbortSignal) {
  const t = await TalosSim.start({ kube: recordingHooks() });
  t.addNode({ name: 'cp-1', ip: CP, role: 'control-plane', credential: { 'ghcr.io': CRED } });
  const ctx = loadTalosContext({ path: t.talosconfigPath });
  const conn = new TalosConnection({ endpoint: ctx.endpoints[0], credentials: ctx.credentials!, callTimeoutMs: 20_000 });
  const client = new TalosApi(conn, new Talosctl({ runner: new Runner() }), { reboot: { signal } });
  return { t, conn, client };
}

describe('a call the twin holds (TalosSim.holdNextCall)', () => {
  const READ = '/machine.MachineService/Read';
  const bootIdRead = (req: Record<string, unknown>) => String(req.path).includes('boot_id');
  const start = startOneControlPlane;

  it('is served only once released; other calls on the same connection are served meanwhile', async () => {
    const { t, client } = await start();
    try {
      const hold = t.holdNextCall(READ, { node: CP, matches: bootIdRead });
      let answered = false;
      const read = client.bootId(CP, 20_000).then((id) => ((answered = true), id));
      await hold.reached;
      expect((await client.version([CP])).get(CP)?.ok).toBe(true);
      expect(answered).toBe(false);
      expect(t.apiCalls.filter((c) => c.method === READ)).toEqual([]);
      hold.release();
      expect(await read).toBe(t.node(CP).bootID);
      expect(t.apiCalls.filter((c) => c.method === READ).map((c) => c.code)).toEqual([grpc.status.OK]);
    } finally {
      client.close();
      await t.stop();
    }
  });

  it('one its client gave up on while it was held is never served (recorded CANCELLED)', async () => {
    // the client gives up on the run's cancellation, sent once the call is held (an event, not a
    // deadline that a loaded machine's dial and handshake could spend before the call arrived)
    const cancel = new AbortController();
    const { t, client } = await startOneControlPlane(cancel.signal);
    try {
      const hold = t.holdNextCall(READ, { node: CP, matches: bootIdRead });
      const read = client.bootId(CP, 20_000).then(
        () => undefined,
        (e: unknown) => e,
      );
      await hold.reached;
      cancel.abort();
      const err = await read;
      expect(err).toBeInstanceOf(ToolError);
      // the run's own cancellation, said as such: not an `unknown` failure of the node
      expect(err).toMatchObject({
        kind: 'cancelled',
        message: expect.stringMatching(/ failed \(cancelled: rpc error: code = Canceled desc = Cancelled on client\)$/),
      });
      const reads = () => t.apiCalls.filter((c) => c.method === READ).map((c) => c.code);
      await expect.poll(reads).toEqual([grpc.status.CANCELLED]);
      hold.release();
      // released, it is not served: a call served now would be recorded once the version read is
      expect((await client.version([CP])).get(CP)?.ok).toBe(true);
      expect(reads()).toEqual([grpc.status.CANCELLED]);
    } finally {
      client.close();
      await t.stop();
    }
  });
});

// The endpoint's connections drop while a call is served (the machine behind a VIP going away, apid
// restarting): the call gets no answer. A read is sent again on the next connection (reading twice
// changes nothing), so an evidence read is not lost to the drop and a node is not rebooted for want of
// it; a mutation is not (what it did is for its caller's lost-answer rule to find out).
describe('a connection that drops under a call', () => {
  const SERVICE_LIST = '/machine.MachineService/ServiceList';
  const APPLY = '/machine.MachineService/ApplyConfiguration';
  const start = async () => {
    const opened = await startOneControlPlane();
    expect((await opened.client.version([CP])).get(CP)?.ok).toBe(true);
    return opened;
  };

  it('a read whose connection dropped is sent again on the next one and answered', async () => {
    const { t, client } = await start();
    try {
      const connections = t.apiConnections;
      const calls = t.apiCalls.length;
      t.dropConnectionsDuringNext(SERVICE_LIST, CP);
      const r = (await client.criService([CP])).get(CP);
      expect(r?.ok, r?.ok === false ? r.error : '').toBe(true);
      expect(t.droppedCalls).toEqual([{ method: SERVICE_LIST, node: CP }]);
      // answered once, on a connection dialled after the drop
      expect(t.apiCalls.slice(calls).map((c) => c.method)).toEqual([SERVICE_LIST]);
      expect(t.apiConnections).toBeGreaterThan(connections);
    } finally {
      client.close();
      await t.stop();
    }
  });

  it('a read is sent again once only: dropped twice, it fails as a transport failure (a missing reading, so a reboot)', async () => {
    const { t, client } = await start();
    try {
      const calls = t.apiCalls.length;
      t.dropConnectionsDuringNext(SERVICE_LIST, CP);
      t.dropConnectionsDuringNext(SERVICE_LIST, CP);
      const r = (await client.criService([CP])).get(CP);
      expect(r?.ok).toBe(false);
      expect(r?.ok === false && r.error).toMatch(/ServiceList .*transport: .*(Connection dropped|Call cancelled)/);
      expect(t.droppedCalls).toHaveLength(2);
      expect(t.apiCalls.slice(calls)).toEqual([]);
    } finally {
      client.close();
      await t.stop();
    }
  });

  it('an ApplyConfiguration whose connection dropped is not sent again: it fails, the request seen once', async () => {
    const { t, conn, client } = await start();
    try {
      const calls = t.apiCalls.length;
      t.dropConnectionsDuringNext(APPLY, CP);
      // a dry run of the config the node has: were it sent again, the twin would record it
      const request = { data: Buffer.from(t.node(CP).machineConfig.text), mode: 'NO_REBOOT', dry_run: true };
      const e = await conn.unary('applyConfiguration', CP, request).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(ToolError);
      expect((e as ToolError).message).toMatch(/ApplyConfiguration .*(Call cancelled|Connection dropped)/);
      expect(t.droppedCalls).toEqual([{ method: APPLY, node: CP }]);
      expect(t.apiCalls.slice(calls).filter((c) => c.method === APPLY)).toEqual([]);
    } finally {
      client.close();
      await t.stop();
    }
  });
});

describe("the twin's routing", () => {
  /** A raw COSI Get with the metadata given, to see what apid answers to other routing keys. */
  async function rawGet(md: Record<string, string[]>): Promise<grpc.ServiceError | undefined> {
    const certs = clusterCerts();
    const admin = certs.client('os:admin');
    const client = new grpc.Client(
      sim.endpoint,
      grpc.credentials.createSsl(Buffer.from(certs.ca.crt), Buffer.from(admin.key), Buffer.from(admin.crt), {
        checkServerIdentity: () => undefined,
      }),
    );
    const meta = new grpc.Metadata();
    for (const [k, vs] of Object.entries(md)) for (const v of vs) meta.add(k, v);
    const req = messageType('cosi.resource.GetRequest');
    const res = messageType('cosi.resource.GetResponse');
    try {
      return await new Promise((resolve) =>
        client.makeUnaryRequest(
          '/cosi.resource.State/Get',
          (v: Record<string, unknown>) => encodePlain(req, v),
          (b: Buffer) => toPlain(res, b),
          { namespace: 'runtime', type: 'TimeStatuses.v1alpha1.talos.dev', id: 'node' },
          meta,
          (err) => resolve(err ?? undefined),
        ),
      );
    } finally {
      client.close();
    }
  }

  it('answers one node per call; refuses `nodes` on the COSI State API', async () => {
    expect(await rawGet({ node: [CP] })).toBeUndefined();
    expect(await rawGet({ nodes: [CP, W13] })).toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: 'one-2-many proxying is not supported for method /cosi.resource.State/Get',
    });
    // (grpc-js folds several values of one key into one comma-joined header, which apid takes as one
    // address; a client that sends several fields gets "node metadata must be single-valued")
  });
});

describe('one connection', () => {
  it('many concurrent calls share one HTTP/2 connection', async () => {
    const o = await apiFor(sim.talosconfigPath);
    try {
      const before = sim.apiCalls.length;
      const nodes = [CP, W13, W14, OLD];
      const all = await Promise.all(Array.from({ length: 50 }, () => o.client.criService(nodes)));
      for (const m of all) for (const n of nodes) expect(m.get(n)!.ok).toBe(true);
      const calls = sim.apiCalls.slice(before);
      expect(calls).toHaveLength(200);
      // every call came over the same client socket
      expect(new Set(calls.map((c) => c.peer)).size).toBe(1);
    } finally {
      o.close();
    }
  });

  it('bounds the calls in flight', async () => {
    const certs = clusterCerts();
    const admin = certs.client('os:admin');
    const conn = new TalosConnection({
      endpoint: sim.endpoint,
      credentials: { ca: certs.ca.crt, crt: admin.crt, key: admin.key },
      maxInFlight: 2,
    });
    try {
      const calls = Array.from({ length: 12 }, () => conn.unary('version', CP));
      expect([conn.active, conn.waiting]).toEqual([2, 10]);
      const res = await Promise.all(calls);
      expect(res).toHaveLength(12);
      expect([conn.active, conn.waiting]).toEqual([0, 0]);
    } finally {
      conn.close();
    }
  });
});

describe('talosconfig', () => {
  it('the twin writes the client key with the Talos label, which OpenSSL 3 refuses; the adapter relabels it', () => {
    const ctx = loadTalosContext({ path: sim.talosconfigPath });
    const raw = talosKeyLabel(clusterCerts().client('os:admin').key);
    expect(raw).toContain('-----BEGIN ED25519 PRIVATE KEY-----');
    expect(() => createPrivateKey(raw)).toThrow();
    expect(ctx.credentials!.key).toBe(relabelKey(raw));
    expect(createPrivateKey(ctx.credentials!.key).asymmetricKeyType).toBe('ed25519');
  });

  const certs = () => clusterCerts();
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const bad: Array<[string, () => string, RegExp]> = [
    [
      'crt not base64 PEM',
      () =>
        talosconfigYaml({
          context: 'c',
          endpoints: ['1.2.3.4'],
          ca: certs().ca.crt,
          client: { crt: '%%%', key: certs().client('os:admin').key },
        }),
      /crt is not base64 of a PEM CERTIFICATE/,
    ],
    [
      'ca garbage PEM',
      () =>
        talosconfigYaml({
          context: 'c',
          endpoints: ['1.2.3.4'],
          ca: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n',
          client: certs().client('os:admin'),
        }),
      /ca is not a parseable certificate/,
    ],
    [
      'key of another certificate',
      () =>
        talosconfigYaml({
          context: 'c',
          endpoints: ['1.2.3.4'],
          ca: certs().ca.crt,
          client: { crt: certs().client('os:admin').crt, key: certs().client('os:reader').key },
        }),
      /key does not belong to crt/,
    ],
    [
      'crt without key',
      () =>
        `context: c\ncontexts:\n  c:\n    endpoints: [1.2.3.4]\n    ca: ${b64(certs().ca.crt)}\n    crt: ${b64(certs().client('os:admin').crt)}\n`,
      /crt is set but key is empty/,
    ],
    ['no such context', () => `context: nope\ncontexts:\n  c:\n    endpoints: [1.2.3.4]\n`, /no such context/],
  ];
  for (const [what, text, message] of bad) {
    it(`a malformed context is an input error naming the file and the context: ${what}`, async () => {
      const p = writeConfig(`bad-${what.replace(/\W+/g, '-')}`, text());
      let err: unknown;
      try {
        await apiFor(p);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).input).toBe('talosconfig');
      expect((err as Error).message).toContain(p);
      expect((err as Error).message).toMatch(/context "(c|nope)"/);
      expect((err as Error).message).toMatch(message);
    });
  }

  it('a context without a client certificate reads through talosctl and says why', async () => {
    const cli = await TalosSim.start({ kube: recordingHooks(), api: false });
    try {
      const o = await openTalosClient({ runner: new Runner(), path: cli.talosconfigPath });
      expect(o.client).toBeInstanceOf(Talosctl);
      expect(o.describe).toMatch(/reading Talos through talosctl: .*talosconfig, context "sim": the context has no client certificate/);
      o.close();
    } finally {
      await cli.stop();
    }
    const omni = writeConfig(
      'omni',
      'context: omni\ncontexts:\n  omni:\n    endpoints: [https://omni.example.com]\n    auth:\n      siderov1:\n        identity: me@example.com\n',
    );
    const o = await openTalosClient({ runner: new Runner(), path: omni });
    expect(o.client).toBeInstanceOf(Talosctl);
    expect(o.describe).toContain('authenticates with `auth`');
  });
});

describe("an API error keeps the node's words", () => {
  it('the details are classified and kept as the node sent them: masking is for the sinks (src/action/masked.ts)', async () => {
    const o = await openTalosClient({ runner: new Runner(), path: sim.talosconfigPath });
    try {
      sim.failNext(
        { command: 'get', node: W14 },
        { stderr: 'rpc error: code = PermissionDenied desc = bad auth for worker-1 true\n', exitCode: 1 },
      );
      const r = (await o.client.timeStatus([W14])).get(W14)!;
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error).toContain('(forbidden: rpc error: code = PermissionDenied desc = bad auth for worker-1 true)');
    } finally {
      o.close();
    }
  });
});
