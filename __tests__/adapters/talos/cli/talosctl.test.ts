import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ToolError } from '../../../../src/core/errors.js';
import { Runner, type CommandRecord } from '../../../../src/adapters/exec.js';
import { Talosctl } from '../../../../src/adapters/talos/cli/talosctl.js';
import { Redactor, secretForms } from '../../../../src/core/redact.js';
import { cosiDoc, cosiStream, goTabwriter, lsOutput, renderLastMod, serviceOutput } from './talosOutput.js';

const FAKE = join(import.meta.dirname, 'talosctl-fake', 'fake-talosctl.mjs');
const TALOSCONFIG = '/tmp/adapter-test/talosconfig';
const REFUSED = (ip: string): string =>
  `rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp ${ip}:50000: connect: connection refused"`;
const PID_MSG = (pid: number): string =>
  `Process Process(["/bin/containerd" "--address" "/run/containerd/containerd.sock" "--config" "/etc/cri/containerd.toml"]) started with PID ${pid}`;

interface Rule {
  match: string;
  stdout?: string;
  stderr?: string;
  exit?: number;
  sleepMs?: number;
}

interface Logged {
  argv: string[];
  env: { TZ: string | null; NO_COLOR: string | null };
}

const dirs: string[] = [];

function setup(rules: Rule[], opts: { talosconfig?: string | null; callTimeoutMs?: number; listDirectories?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'fake-talosctl-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'scenario.json'), JSON.stringify({ rules }));
  writeFileSync(join(dir, 'calls.jsonl'), '');
  process.env.FAKE_TALOSCTL_DIR = dir;
  const runner = new Runner();
  const records: CommandRecord[] = [];
  runner.onCommand((r) => records.push(r));
  const talos = new Talosctl({
    runner,
    binary: FAKE,
    talosconfig: opts.talosconfig === null ? undefined : (opts.talosconfig ?? TALOSCONFIG),
    callTimeoutMs: opts.callTimeoutMs ?? 20_000,
    listDirectories: opts.listDirectories,
    patchFile: '/tmp/auth.yaml',
  });
  const calls = (): Logged[] =>
    readFileSync(join(dir, 'calls.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Logged);
  return { talos, runner, records, calls };
}

/** the argv after the global flags the adapter always adds */
function globalsOk(c: Logged, nodes: string): string[] {
  expect(c.argv.slice(0, 4)).toEqual(['--talosconfig', TALOSCONFIG, '--nodes', nodes]);
  expect(c.env).toEqual({ TZ: 'UTC', NO_COLOR: '1' });
  return c.argv.slice(4);
}

const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** a rule regex: exactly these --nodes, then this command */
const on = (nodes: string, command: string): string => `--nodes ${esc(nodes)} ${esc(command)}$`;

beforeAll(() => {
  chmodSync(FAKE, 0o755);
});

afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  delete process.env.FAKE_TALOSCTL_DIR;
});

const VERSION_CLIENT =
  'Client:\n\tTag:         v1.13.8\n\tSHA:         3de49322\n\tBuilt:       \n\tGo version:  go1.26.5\n\tOS/Arch:     linux/amd64\nServer:\n';
const versionBlock = (node: string, tag: string): string =>
  `\tNODE:        ${node}\n\tTag:         ${tag}\n\tSHA:         3de49322\n\tBuilt:       \n\tGo version:  go1.26.5\n\tOS/Arch:     linux/amd64\n\tEnabled:     RBAC\n`;

describe('Talosctl: invocation', () => {
  it('passes --talosconfig and the joined --nodes, runs with TZ=UTC, asks all addresses in one call', async () => {
    const { talos, calls } = setup([
      {
        match: on('10.0.0.11,10.0.0.12', 'version'),
        stdout: VERSION_CLIENT + versionBlock('10.0.0.11', 'v1.13.8') + versionBlock('10.0.0.12', 'v1.14.0-rc.1'),
      },
    ]);
    const res = await talos.version(['10.0.0.11', '10.0.0.12', '10.0.0.11']);
    expect([...res]).toEqual([
      ['10.0.0.11', { ok: true, value: 'v1.13.8' }],
      ['10.0.0.12', { ok: true, value: 'v1.14.0-rc.1' }],
    ]);
    const log = calls();
    expect(log).toHaveLength(1);
    expect(globalsOk(log[0], '10.0.0.11,10.0.0.12')).toEqual(['version']);
  });

  it('leaves --talosconfig out when none is given', async () => {
    const { talos, calls } = setup(
      [{ match: '^--nodes 10.0.0.11 version$', stdout: VERSION_CLIENT + versionBlock('10.0.0.11', 'v1.13.8') }],
      { talosconfig: null },
    );
    await talos.version(['10.0.0.11']);
    expect(calls()[0].argv).toEqual(['--nodes', '10.0.0.11', 'version']);
  });

  it('refuses an address that talosctl would split', async () => {
    const { talos, calls } = setup([]);
    await expect(talos.version(['10.0.0.11,10.0.0.12'])).rejects.toThrow(/invalid Talos node address/);
    await expect(talos.etcdStatus('')).rejects.toThrow(/invalid Talos node address/);
    expect(calls()).toEqual([]);
  });

  it('an empty address list runs nothing', async () => {
    const { talos, calls } = setup([]);
    expect((await talos.criService([])).size).toBe(0);
    expect(calls()).toEqual([]);
  });

  it('a missing binary is a usage ToolError naming the fix', async () => {
    const runner = new Runner();
    const talos = new Talosctl({ runner, binary: '/nonexistent/talosctl' });
    const err = await talos.etcdAlarms('10.0.0.11').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).kind).toBe('usage');
    expect((err as ToolError).message).toContain('not found');
    const r = await talos.version(['10.0.0.11']);
    expect(r.get('10.0.0.11')).toMatchObject({ ok: false });
  });

  it('kills a call that outlives its deadline', async () => {
    const { talos, records } = setup(
      [
        { match: 'etcd status$', sleepMs: 30_000, stdout: 'never' },
        { match: 'read ', sleepMs: 30_000, stdout: 'never' },
        { match: 'service cri$', sleepMs: 30_000, stdout: 'never' },
      ],
      // Long enough for the fake (a node process) to start and log its call on a loaded 2-core machine:
      // the three calls go side by side, so the test waits out one deadline, and each process has all
      // of it (2.5 s for three one after another was a process start on a loaded runner, at most 2.5 s).
      { callTimeoutMs: 6000 },
    );
    const t0 = Date.now();
    const [err, read, svc] = await Promise.all([
      talos.etcdStatus('10.0.0.11').catch((e: unknown) => e),
      talos.readAuth('10.0.0.11', '/etc/cri/conf.d/cri.toml'),
      talos.criService(['10.0.0.11']),
    ]);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).kind).toBe('timeout');
    expect((err as ToolError).node).toBe('10.0.0.11');
    expect(read.ok).toBe(false);
    expect(!read.ok && read.error).toMatch(/no answer within \d+ ms/);
    expect(svc.get('10.0.0.11')).toMatchObject({ ok: false });
    // killed at the deadline, not after the fake's 30 s sleep: a hang bound, with 24 s over the work
    expect(Date.now() - t0).toBeLessThan(30_000);
    // each call's process was started and killed by a signal (exit code null) no sooner than its
    // deadline: the runner's own records, whether or not a loaded machine got the fake as far as
    // logging its call before the kill (it did not, within 2.5 s, beside two test passes); side by
    // side, they end in any order
    expect(records.map((r) => [r.command.replace(/^.* --nodes 10\.0\.0\.11 /, ''), r.exitCode]).sort()).toEqual([
      ['etcd status', null],
      ['read /etc/cri/conf.d/cri.toml', null],
      ['service cri', null],
    ]);
    for (const r of records) expect(r.durationMs).toBeGreaterThanOrEqual(6000 - 1);
  });
});

describe('Talosctl: batch reads', () => {
  it('version: a node listed in the WARNING multi-error (exit 0) fails alone', async () => {
    const { talos, calls } = setup([
      {
        match: on('10.0.0.11,10.0.0.12', 'version'),
        stdout: VERSION_CLIENT + versionBlock('10.0.0.11', 'v1.13.8'),
        stderr: `WARNING: 1 error occurred:\n\t* 10.0.0.12: ${REFUSED('10.0.0.12')}\n\n\n`,
      },
    ]);
    const res = await talos.version(['10.0.0.11', '10.0.0.12']);
    expect(res.get('10.0.0.11')).toEqual({ ok: true, value: 'v1.13.8' });
    const bad = res.get('10.0.0.12')!;
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error).toContain('(transport: rpc error: code = Unavailable');
    expect(!bad.ok && bad.error).toContain('for 10.0.0.12');
    expect(calls()).toHaveLength(1);
  });

  it('criService: per-node readings bracketed by the runner clock of that call', async () => {
    const stdout = serviceOutput([
      {
        node: '10.0.0.11',
        state: 'Running',
        health: 'OK',
        events: [
          ['Running', 'Health check successful', 205_000],
          ['Running', PID_MSG(1893), 211_000],
        ],
      },
      {
        node: '10.0.0.12',
        state: 'Running',
        health: 'Fail',
        lastHealthMessage: 'connection refused',
        events: [['Running', PID_MSG(1901), -4000]],
      },
    ]);
    const { talos, records, calls } = setup([{ match: on('10.0.0.11,10.0.0.12', 'service cri'), stdout }]);
    const before = Date.now();
    const res = await talos.criService(['10.0.0.11', '10.0.0.12']);
    const after = Date.now();
    expect(globalsOk(calls()[0], '10.0.0.11,10.0.0.12')).toEqual(['service', 'cri']);
    const a = res.get('10.0.0.11')!;
    const b = res.get('10.0.0.12')!;
    if (!a.ok || !b.ok) throw new Error('expected readings');
    // the age was printed somewhere in the call's window, rounded to the second: the bounds keep both
    expect(a.value.events[1]).toEqual({
      state: 'Running',
      message: PID_MSG(1893),
      at: {
        earliestMs: a.value.clientBeforeMs - 211_000 - 500,
        latestMs: a.value.clientAfterMs - 211_000 + 500,
        via: 'cli',
        text: '3m31s ago',
      },
    });
    expect(b.value).toMatchObject({ health: 'Fail', lastHealthMessage: 'connection refused', events: [{ at: { text: '-4s ago' } }] });
    expect(b.value.events[0].at.latestMs).toBe(b.value.clientAfterMs + 4000 + 500);
    expect(a.value.clientBeforeMs).toBe(records[0].startedAtMs);
    expect(a.value.clientAfterMs).toBeGreaterThanOrEqual(a.value.clientBeforeMs);
    expect(a.value.clientBeforeMs).toBeGreaterThanOrEqual(before);
    expect(a.value.clientAfterMs).toBeLessThanOrEqual(after);
    expect(b.value.clientBeforeMs).toBe(a.value.clientBeforeMs);
  });

  it('criService: a whole-call failure without node names falls back to one call per address', async () => {
    const stdout11 = serviceOutput([{ node: '10.0.0.11', state: 'Running', health: 'OK', events: [['Running', PID_MSG(7), 1000]] }]);
    const { talos, calls } = setup([
      { match: on('10.0.0.11,10.0.0.12', 'service cri'), stderr: `error listing services: ${REFUSED('192.168.1.1')}\n`, exit: 1 },
      { match: on('10.0.0.11', 'service cri'), stdout: stdout11 },
      {
        match: on('10.0.0.12', 'service cri'),
        stderr: `error listing services: 1 error occurred:\n\t* 10.0.0.12: ${REFUSED('10.0.0.12')}\n\n\n`,
        exit: 1,
      },
    ]);
    const res = await talos.criService(['10.0.0.11', '10.0.0.12']);
    expect(res.get('10.0.0.11')).toMatchObject({ ok: true, value: { state: 'Running' } });
    expect(res.get('10.0.0.12')).toMatchObject({ ok: false });
    expect([...res.keys()]).toEqual(['10.0.0.11', '10.0.0.12']);
    // the single-address retries run concurrently
    expect(
      calls()
        .map((c) => c.argv[3])
        .sort(),
    ).toEqual(['10.0.0.11', '10.0.0.11,10.0.0.12', '10.0.0.12']);
  });

  it('criService: unparseable output is an unparseable reading, not a guess', async () => {
    const { talos } = setup([{ match: on('10.0.0.11', 'service cri'), stdout: 'NODE   SERVICE   STATE\n10.0.0.11   cri   Running\n' }]);
    const r = (await talos.criService(['10.0.0.11'])).get('10.0.0.11')!;
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toContain('unparseable');
  });

  it('criService: an output without its EVENTS section is unparseable, not "no start event"', async () => {
    // A running cri service always has events (its runner logs Preparing/Starting/Running): a block
    // without them was cut short, and reading it as "no start event" would fall back to ServicePID alone.
    const stdout = serviceOutput([
      { node: '10.0.0.11', state: 'Running', health: 'OK', events: [] },
      { node: '10.0.0.12', state: 'Running', health: 'OK', events: [['Running', PID_MSG(7), 1000]] },
    ]);
    const { talos } = setup([{ match: on('10.0.0.11,10.0.0.12', 'service cri'), stdout }]);
    const res = await talos.criService(['10.0.0.11', '10.0.0.12']);
    const r = res.get('10.0.0.11')!;
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toContain('unparseable');
    expect(!r.ok && r.error).toContain('EVENTS');
    expect(res.get('10.0.0.12')).toMatchObject({ ok: true, value: { events: [{ at: { via: 'cli', text: '1s ago' } }] } });
  });

  it('servicePids: errors listed without names in --nodes order (get) are matched to the silent nodes', async () => {
    const doc = (node: string, pid: number): string =>
      cosiDoc({
        node,
        namespace: 'runtime',
        type: 'ServicePIDs.runtime.talos.dev',
        id: 'cri',
        created: '2026-11-20T10:11:12Z',
        updated: '2026-11-20T10:11:12Z',
        spec: [`pid: ${pid}`, 'mountNamespace: x'],
      });
    const { talos, calls } = setup([
      {
        match: on('a,b,c,d', 'get servicepids cri -o yaml'),
        stdout: cosiStream([doc('a', 11), doc('d', 44)]),
        stderr:
          '2 errors occurred:\n' +
          "\t* rpc error: code = NotFound desc = resource ServicePIDs.runtime.talos.dev(runtime/cri@undefined) doesn't exist\n" +
          '\t* rpc error: code = PermissionDenied desc = resource type "ServicePIDs.runtime.talos.dev" is not supported\n\n\n',
        exit: 1,
      },
    ]);
    const res = await talos.servicePids(['a', 'b', 'c', 'd']);
    const created = Date.parse('2026-11-20T10:11:12Z');
    expect(res.get('a')).toEqual({
      ok: true,
      value: { pid: 11, created: { earliestMs: created, latestMs: created + 999, via: 'cli', text: '2026-11-20T10:11:12Z' } },
    });
    expect(res.get('b')).toMatchObject({ ok: false });
    expect(res.get('b')!.ok === false && (res.get('b') as { error: string }).error).toContain('not-found');
    // c is a Talos 1.12 node: the type does not exist there
    expect(res.has('c')).toBe(true);
    expect(res.get('c')).toBeUndefined();
    expect(res.get('d')).toMatchObject({ ok: true, value: { pid: 44 } });
    expect(calls()).toHaveLength(1);
    expect(globalsOk(calls()[0], 'a,b,c,d')).toEqual(['get', 'servicepids', 'cri', '-o', 'yaml']);
  });

  it('servicePids: a first node without the type fails the whole call; one call per address sorts it out', async () => {
    const notRegistered = 'rpc error: code = NotFound desc = resource "servicepids" is not registered\n';
    const { talos, calls } = setup([
      { match: on('old,new', 'get servicepids cri -o yaml'), stderr: notRegistered, exit: 1 },
      { match: on('old', 'get servicepids cri -o yaml'), stderr: notRegistered, exit: 1 },
      {
        match: on('new', 'get servicepids cri -o yaml'),
        stdout: cosiDoc({
          node: 'new',
          namespace: 'runtime',
          type: 'ServicePIDs.runtime.talos.dev',
          id: 'cri',
          created: '2026-11-20T10:11:12Z',
          updated: '2026-11-20T10:11:12Z',
          spec: ['pid: 5', 'mountNamespace: x'],
        }),
      },
    ]);
    const res = await talos.servicePids(['old', 'new']);
    expect(res.has('old') && res.get('old') === undefined).toBe(true);
    expect(res.get('new')).toMatchObject({ ok: true, value: { pid: 5 } });
    expect(calls()).toHaveLength(3);
  });

  it('timeStatus and etcFileStatus read COSI YAML; /etc paths map to EtcFileStatus ids', async () => {
    const ts = (node: string, synced: boolean, epoch: number): string =>
      cosiDoc({
        node,
        namespace: 'runtime',
        type: 'TimeStatuses.v1alpha1.talos.dev',
        id: 'node',
        created: '2026-11-01T00:00:00Z',
        updated: '2026-11-01T00:00:05Z',
        spec: [`synced: ${synced}`, `epoch: ${epoch}`, 'syncDisabled: false'],
      });
    const efs = (node: string, id: string, updated: string): string =>
      cosiDoc({
        node,
        namespace: 'files',
        type: 'EtcFileStatuses.files.talos.dev',
        id,
        created: '2026-11-01T00:00:00Z',
        updated,
        spec: ['specVersion: "2"'],
      });
    const { talos, calls } = setup([
      { match: on('a,b', 'get timestatuses node -o yaml'), stdout: cosiStream([ts('a', true, 0), ts('b', false, 2)]) },
      {
        match: on('a,b', 'get etcfilestatuses cri/conf.d/cri.toml -o yaml'),
        stdout: cosiStream([
          efs('a', 'cri/conf.d/cri.toml', '2026-11-20T10:00:00Z'),
          efs('b', 'cri/conf.d/cri.toml', '2026-11-21T10:00:00Z'),
        ]),
      },
      {
        match: on('a,b', 'get etcfilestatuses cri/conf.d/01-registries.part -o yaml'),
        stdout: efs('a', 'cri/conf.d/01-registries.part', '2026-11-20T09:59:59Z'),
        stderr:
          "1 error occurred:\n\t* rpc error: code = NotFound desc = resource EtcFileStatuses.files.talos.dev(files/cri/conf.d/01-registries.part@undefined) doesn't exist\n\n\n",
        exit: 1,
      },
    ]);
    const time = await talos.timeStatus(['a', 'b']);
    expect(time.get('a')).toEqual({ ok: true, value: { synced: true, epoch: 0 } });
    expect(time.get('b')).toEqual({ ok: true, value: { synced: false, epoch: 2 } });

    const paths = ['/etc/cri/conf.d/cri.toml', '/etc/cri/conf.d/01-registries.part', '/var/lib/x'];
    const files = await talos.etcFileStatus(['a', 'b'], paths);
    expect([...files.get('a')!.keys()]).toEqual(paths);
    expect(files.get('a')!.get('/etc/cri/conf.d/cri.toml')).toEqual({
      ok: true,
      value: {
        id: 'cri/conf.d/cri.toml',
        updated: {
          earliestMs: Date.parse('2026-11-20T10:00:00Z'),
          latestMs: Date.parse('2026-11-20T10:00:00Z') + 999,
          via: 'cli',
          text: '2026-11-20T10:00:00Z',
        },
        specVersion: '2',
      },
    });
    expect(files.get('b')!.get('/etc/cri/conf.d/cri.toml')).toMatchObject({
      ok: true,
      value: { updated: { earliestMs: Date.parse('2026-11-21T10:00:00Z') } },
    });
    expect(files.get('a')!.get('/etc/cri/conf.d/01-registries.part')).toMatchObject({ ok: true });
    expect(files.get('b')!.get('/etc/cri/conf.d/01-registries.part')).toMatchObject({ ok: false });
    expect(files.get('b')!.get('/var/lib/x')).toMatchObject({ ok: false });
    // one call per /etc path, all nodes in each
    expect(
      calls()
        .map((c) => c.argv.slice(4).join(' '))
        .sort(),
    ).toEqual([
      'get etcfilestatuses cri/conf.d/01-registries.part -o yaml',
      'get etcfilestatuses cri/conf.d/cri.toml -o yaml',
      'get timestatuses node -o yaml',
    ]);
  });
});

describe('Talosctl: listFiles', () => {
  const HOUR = 3_600_000;

  it('one path: keeps the rows of the nodes that answered, a missing file on another is exists:false (header-only failure form)', async () => {
    const now = Date.now();
    const t11 = now - 5 * HOUR;
    const t12 = now - 400 * 24 * HOUR;
    const path = '/etc/cri/conf.d/cri.toml';
    const { talos, calls } = setup([
      {
        match: on('10.0.0.11,10.0.0.12,10.0.0.13', `ls -l ${path}`),
        stdout: lsOutput([
          {
            node: '10.0.0.11',
            mode: '-rw-------',
            size: 2514,
            lastMod: renderLastMod(t11, now),
            label: 'system_u:object_r:etc_t:s0',
            name: 'cri.toml',
          },
          {
            node: '10.0.0.12',
            mode: '-rw-------',
            size: 2514,
            lastMod: renderLastMod(t12, now),
            label: 'system_u:object_r:etc_t:s0',
            name: 'cri.toml',
          },
        ]),
        stderr: `1 error occurred:\n rpc error: code = Unknown desc = lstat ${path}: no such file or directory\n`,
        exit: 1,
      },
    ]);
    const res = await talos.listFiles(['10.0.0.11', '10.0.0.12', '10.0.0.13'], [path]);
    expect(calls()).toHaveLength(1);
    expect(globalsOk(calls()[0], '10.0.0.11,10.0.0.12,10.0.0.13')).toEqual(['ls', '-l', path]);
    expect(res.get('10.0.0.11')!.get(path)).toEqual({
      ok: true,
      value: {
        path,
        exists: true,
        lastModText: renderLastMod(t11, now),
        mtime: {
          earliestMs: Math.floor(t11 / 1000) * 1000,
          latestMs: Math.floor(t11 / 1000) * 1000 + 999,
          via: 'cli',
          text: renderLastMod(t11, now),
        },
      },
    });
    expect(res.get('10.0.0.12')!.get(path)).toEqual({
      ok: true,
      value: {
        path,
        exists: true,
        lastModText: renderLastMod(t12, now),
        mtime: {
          earliestMs: Math.floor(t12 / 60_000) * 60_000,
          latestMs: Math.floor(t12 / 60_000) * 60_000 + 59_999,
          via: 'cli',
          text: renderLastMod(t12, now),
        },
      },
    });
    expect(res.get('10.0.0.13')!.get(path)).toEqual({ ok: true, value: { path, exists: false } });
  });

  it('single node, missing file: header-only stdout, streaming error, exit 1', async () => {
    const path = '/etc/cri/conf.d/01-registries.part';
    const { talos } = setup([
      {
        match: on('10.0.0.11', `ls -l ${path}`),
        stdout: 'NODE   MODE   UID   GID   SIZE(B)   LASTMOD   LABEL   NAME\n',
        stderr: `1 error occurred:\n rpc error: code = Unknown desc = lstat ${path}: no such file or directory\n`,
        exit: 1,
      },
    ]);
    expect((await talos.listFiles(['10.0.0.11'], [path])).get('10.0.0.11')!.get(path)).toEqual({
      ok: true,
      value: { path, exists: false },
    });
  });

  it('several paths in one directory: one ls of the directory; absent entries are exists:false', async () => {
    const now = Date.now();
    const cri = '/etc/cri/conf.d/cri.toml';
    const part = '/etc/cri/conf.d/01-registries.part';
    const tA = now - 2 * HOUR;
    const tB = now - 30 * 60_000;
    const { talos, calls } = setup([
      {
        match: on('a,b', 'ls -l /etc/cri/conf.d'),
        stdout: lsOutput([
          { node: 'a', mode: 'drwxr-xr-x', size: 140, lastMod: renderLastMod(tA, now), name: '.' },
          {
            node: 'a',
            mode: '-rw-------',
            size: 300,
            lastMod: renderLastMod(tA - 1000, now),
            label: 'system_u:object_r:etc_t:s0',
            name: '00-base.part',
          },
          {
            node: 'a',
            mode: '-rw-------',
            size: 420,
            lastMod: renderLastMod(tA, now),
            label: 'system_u:object_r:etc_t:s0',
            name: '01-registries.part',
          },
          {
            node: 'a',
            mode: '-rw-------',
            size: 2514,
            lastMod: renderLastMod(tA + 1000, now),
            label: 'system_u:object_r:etc_t:s0',
            name: 'cri.toml',
          },
          { node: 'a', mode: 'drwxr-xr-x', size: 60, lastMod: renderLastMod(tA, now), name: 'hosts' },
          { node: 'b', mode: 'drwxr-xr-x', size: 100, lastMod: renderLastMod(tB, now), name: '.' },
          {
            node: 'b',
            mode: '-rw-------',
            size: 2514,
            lastMod: renderLastMod(tB, now),
            label: 'system_u:object_r:etc_t:s0',
            name: 'cri.toml',
          },
        ]),
      },
    ]);
    const res = await talos.listFiles(['a', 'b'], [cri, part]);
    expect(calls()).toHaveLength(1);
    expect(globalsOk(calls()[0], 'a,b')).toEqual(['ls', '-l', '/etc/cri/conf.d']);
    expect(res.get('a')!.get(cri)).toMatchObject({
      ok: true,
      value: { exists: true, mtime: { earliestMs: Math.floor((tA + 1000) / 1000) * 1000 } },
    });
    expect(res.get('a')!.get(part)).toMatchObject({
      ok: true,
      value: { exists: true, mtime: { earliestMs: Math.floor(tA / 1000) * 1000 } },
    });
    expect(res.get('b')!.get(cri)).toMatchObject({
      ok: true,
      value: { exists: true, mtime: { earliestMs: Math.floor(tB / 1000) * 1000 } },
    });
    expect(res.get('b')!.get(part)).toEqual({ ok: true, value: { path: part, exists: false } });
    expect([...res.get('a')!.keys()]).toEqual([cri, part]);
  });

  it('several paths: listDirectories=false lists each path', async () => {
    const now = Date.now();
    const { talos, calls } = setup(
      [
        {
          match: on('a', 'ls -l /etc/cri/conf.d/cri.toml'),
          stdout: lsOutput([{ node: 'a', mode: '-rw-------', size: 1, lastMod: renderLastMod(now - 1000, now), name: 'cri.toml' }]),
        },
        {
          match: on('a', 'ls -l /etc/cri/conf.d/01-registries.part'),
          stdout: lsOutput([
            { node: 'a', mode: '-rw-------', size: 1, lastMod: renderLastMod(now - 1000, now), name: '01-registries.part' },
          ]),
        },
      ],
      { listDirectories: false },
    );
    const res = await talos.listFiles(['a'], ['/etc/cri/conf.d/cri.toml', '/etc/cri/conf.d/01-registries.part']);
    expect(calls()).toHaveLength(2);
    expect([...res.get('a')!.values()].every((r) => r.ok && r.value.exists)).toBe(true);
  });

  it('different errors on several silent nodes: asks each alone', async () => {
    const now = Date.now();
    const path = '/etc/cri/conf.d/cri.toml';
    const { talos, calls } = setup([
      {
        match: on('a,b,c', `ls -l ${path}`),
        stdout: lsOutput([{ node: 'a', mode: '-rw-------', size: 1, lastMod: renderLastMod(now - 1000, now), name: 'cri.toml' }]),
        stderr: `2 errors occurred:\n rpc error: code = Unknown desc = lstat ${path}: no such file or directory\n ${REFUSED('c')}\n`,
        exit: 1,
      },
      {
        match: on('b', `ls -l ${path}`),
        stdout: 'NODE   MODE   UID   GID   SIZE(B)   LASTMOD   LABEL   NAME\n',
        stderr: `1 error occurred:\n rpc error: code = Unknown desc = lstat ${path}: no such file or directory\n`,
        exit: 1,
      },
      {
        match: on('c', `ls -l ${path}`),
        stdout: 'NODE   MODE   UID   GID   SIZE(B)   LASTMOD   LABEL   NAME\n',
        stderr: `1 error occurred:\n ${REFUSED('c')}\n`,
        exit: 1,
      },
    ]);
    const res = await talos.listFiles(['a', 'b', 'c'], [path]);
    expect(res.get('a')!.get(path)).toMatchObject({ ok: true, value: { exists: true } });
    expect(res.get('b')!.get(path)).toEqual({ ok: true, value: { path, exists: false } });
    const c = res.get('c')!.get(path)!;
    expect(c.ok).toBe(false);
    expect(!c.ok && c.error).toContain('transport');
    expect(
      calls()
        .map((x) => x.argv[3])
        .sort(),
    ).toEqual(['a,b,c', 'b', 'c']);
  });

  it('a symlinked entry in a directory listing is listed again by its path', async () => {
    const now = Date.now();
    const { talos, calls } = setup([
      {
        match: on('a', 'ls -l /etc/cri/conf.d'),
        stdout: lsOutput([
          { node: 'a', mode: 'drwxr-xr-x', size: 1, lastMod: renderLastMod(now - 5000, now), name: '.' },
          { node: 'a', mode: 'Lrwxrwxrwx', size: 20, lastMod: renderLastMod(now - 9_000_000, now), name: 'cri.toml -> /run/cri/cri.toml' },
        ]),
      },
      {
        match: on('a', 'ls -l /etc/cri/conf.d/cri.toml'),
        stdout: lsOutput([{ node: 'a', mode: '-rw-------', size: 5, lastMod: renderLastMod(now - 7000, now), name: 'cri.toml' }]),
      },
    ]);
    const res = await talos.listFiles(['a'], ['/etc/cri/conf.d/cri.toml', '/etc/cri/conf.d/01-registries.part']);
    expect(res.get('a')!.get('/etc/cri/conf.d/cri.toml')).toMatchObject({
      ok: true,
      value: { exists: true, mtime: { earliestMs: Math.floor((now - 7000) / 1000) * 1000 } },
    });
    expect(res.get('a')!.get('/etc/cri/conf.d/01-registries.part')).toMatchObject({ ok: true, value: { exists: false } });
    expect(calls()).toHaveLength(2);
  });
});

describe('Talosctl: single-node calls', () => {
  const SECRET = 'hunter2-registry-token';
  const criToml = `## /etc/cri/conf.d/00-base.part (sha256:00)\n## /etc/cri/conf.d/01-registries.part (sha256:01)\n\n[plugins]\n  [plugins.'io.containerd.cri.v1.images']\n    [plugins.'io.containerd.cri.v1.images'.registry.configs]\n      [plugins.'io.containerd.cri.v1.images'.registry.configs.'ghcr.io']\n        [plugins.'io.containerd.cri.v1.images'.registry.configs.'ghcr.io'.auth]\n          auth = ''\n          identitytoken = ''\n          password = '${SECRET}'\n          username = 'ci-bot'\n`;

  it('readAuth parses the file in memory; nothing of it reaches argv, logs or errors', async () => {
    const { talos, records, calls } = setup([
      { match: on('10.0.0.11', 'read /etc/cri/conf.d/cri.toml'), stdout: criToml },
      { match: on('10.0.0.12', 'read /etc/cri/conf.d/cri.toml'), stdout: `password = '${SECRET}\n` },
    ]);
    const ok = await talos.readAuth('10.0.0.11', '/etc/cri/conf.d/cri.toml');
    expect(ok).toEqual({
      ok: true,
      value: {
        path: '/etc/cri/conf.d/cri.toml',
        exists: true,
        auth: { 'ghcr.io': { username: 'ci-bot', password: SECRET, auth: '', identitytoken: '' } },
      },
    });
    expect(globalsOk(calls()[0], '10.0.0.11')).toEqual(['read', '/etc/cri/conf.d/cri.toml']);
    const bad = await talos.readAuth('10.0.0.12', '/etc/cri/conf.d/cri.toml');
    expect(bad.ok).toBe(false);
    expect(JSON.stringify(bad)).not.toContain(SECRET);
    expect(!bad.ok && bad.error).toContain('unparseable');
    expect(JSON.stringify(records)).not.toContain(SECRET);
    expect(JSON.stringify(calls())).not.toContain(SECRET);
  });

  it("patchMachineConfig: an error echoing the patch keeps talosctl's words, classified from them; masked where it is shown", async () => {
    const echo = Buffer.from(`ci-bot:${SECRET}`).toString('base64');
    const { talos } = setup([
      {
        match: on('10.0.0.12', 'patch machineconfig --mode=no-reboot --patch-file /tmp/auth.yaml'),
        stderr: `error applying new configuration: 1 error occurred:\n\t* 10.0.0.12: rpc error: code = InvalidArgument desc = failed to decode patch: password: ${SECRET} auth: ${echo}\n\n\n`,
        exit: 1,
      },
    ]);
    const err = await talos.patchMachineConfig('10.0.0.12').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    const e = err as ToolError;
    expect(e.kind).toBe('invalid');
    expect(e.stderr).toContain(`failed to decode patch: password: ${SECRET}`);
    // what every sink does with it (src/action/masked.ts): no form of the credential is left
    const mask = new Redactor(secretForms([{ username: 'ci-bot', password: SECRET, auth: '', identitytoken: '' }]));
    expect(mask.redact(e.message)).toContain('failed to decode patch: password: ***');
    for (const text of [e.message, e.stderr, String(e), JSON.stringify(e)].map((t) => mask.redact(t))) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(echo);
    }
  });

  it('readAuth: NotFound is a missing file; PermissionDenied is a failed reading', async () => {
    const { talos } = setup([
      {
        match: on('10.0.0.11', 'read /etc/cri/conf.d/01-registries.part'),
        stderr: 'error reading: rpc error: code = NotFound desc = stat /etc/cri/conf.d/01-registries.part: no such file or directory\n',
        exit: 1,
      },
      {
        match: on('10.0.0.12', 'read /etc/cri/conf.d/cri.toml'),
        stderr: 'error reading file: rpc error: code = PermissionDenied desc = not authorized\n',
        exit: 1,
      },
    ]);
    expect(await talos.readAuth('10.0.0.11', '/etc/cri/conf.d/01-registries.part')).toEqual({
      ok: true,
      value: { path: '/etc/cri/conf.d/01-registries.part', exists: false, auth: {} },
    });
    const denied = await talos.readAuth('10.0.0.12', '/etc/cri/conf.d/cri.toml');
    expect(denied.ok).toBe(false);
    expect(!denied.ok && denied.error).toContain('forbidden');
  });

  it('patchMachineConfig: success is on stderr, the exit code decides', async () => {
    const { talos, calls } = setup([
      {
        match: on('10.0.0.11', 'patch machineconfig --mode=no-reboot --patch-file /tmp/auth.yaml'),
        stderr: 'patched MachineConfigs.config.talos.dev/v1alpha1 at the node 10.0.0.11\nApplied configuration without a reboot\n',
      },
      {
        match: on('10.0.0.12', 'patch machineconfig --mode=no-reboot --patch-file /tmp/auth.yaml'),
        stderr:
          'error applying new configuration: 1 error occurred:\n\t* 10.0.0.12: rpc error: code = FailedPrecondition desc = another apply configuration is already in progress\n\n\n',
        exit: 1,
      },
    ]);
    await expect(talos.patchMachineConfig('10.0.0.11')).resolves.toBeUndefined();
    expect(globalsOk(calls()[0], '10.0.0.11')).toEqual(['patch', 'machineconfig', '--mode=no-reboot', '--patch-file', '/tmp/auth.yaml']);
    const err = await talos.patchMachineConfig('10.0.0.12').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect(err).toMatchObject({ tool: 'talosctl', kind: 'conflict', node: '10.0.0.12', exitCode: 1 });
    expect((err as ToolError).command).toBe(
      `${FAKE} --talosconfig ${TALOSCONFIG} --nodes 10.0.0.12 patch machineconfig --mode=no-reboot --patch-file /tmp/auth.yaml`,
    );
    expect((err as ToolError).message).toContain('another apply configuration is already in progress');
  });

  it('reboot: --wait --timeout as a Go duration; exit 0 is success, the last line says why it failed', async () => {
    const { talos, calls } = setup([
      {
        match: on('10.0.0.11', 'reboot --wait --timeout 10m0s'),
        stderr: '"10.0.0.11": waiting for actor ID\n"10.0.0.11": post check passed\n',
      },
      {
        match: on('10.0.0.12', 'reboot --wait --timeout 1m30s'),
        stderr:
          '"10.0.0.12": unavailable, retrying...\n"10.0.0.12": error: reboot sequence completed\n"10.0.0.12": context deadline exceeded\n',
        exit: 1,
      },
    ]);
    await expect(talos.reboot('10.0.0.11', 600_000)).resolves.toBeUndefined();
    expect(globalsOk(calls()[0], '10.0.0.11')).toEqual(['reboot', '--wait', '--timeout', '10m0s']);
    const err = await talos.reboot('10.0.0.12', 89_500).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect(err).toMatchObject({ kind: 'timeout', node: '10.0.0.12' });
  });

  it('bootId: `talosctl read /proc/sys/kernel/random/boot_id`, trimmed; a failure keeps its kind (PermissionDenied: forbidden)', async () => {
    const { talos, calls } = setup([
      { match: on('10.0.0.11', 'read /proc/sys/kernel/random/boot_id'), stdout: '8f1c2b7e-3d4a-4b6c-9e0f-1a2b3c4d5e6f\n' },
      {
        match: on('10.0.0.12', 'read /proc/sys/kernel/random/boot_id'),
        stderr: 'error reading: rpc error: code = PermissionDenied desc = not authorized\n',
        exit: 1,
      },
      { match: on('10.0.0.13', 'read /proc/sys/kernel/random/boot_id'), stderr: `error reading: ${REFUSED('10.0.0.13')}\n`, exit: 1 },
    ]);
    expect(await talos.bootId('10.0.0.11', 5000)).toBe('8f1c2b7e-3d4a-4b6c-9e0f-1a2b3c4d5e6f');
    expect(globalsOk(calls()[0], '10.0.0.11')).toEqual(['read', '/proc/sys/kernel/random/boot_id']);
    expect(await talos.bootId('10.0.0.12', 5000).catch((e: unknown) => e)).toMatchObject({ kind: 'forbidden', node: '10.0.0.12' });
    expect(await talos.bootId('10.0.0.13', 5000).catch((e: unknown) => e)).toMatchObject({ kind: 'transport', node: '10.0.0.13' });
  });

  it('etcdStatus and etcdAlarms parse the tables; an empty alarm list is no alarm', async () => {
    const status = goTabwriter(
      'NODE\tMEMBER\tDB SIZE\tIN USE\tLEADER\tRAFT INDEX\tRAFT TERM\tRAFT APPLIED INDEX\tLEARNER\tPROTOCOL\tSTORAGE\tERRORS\n' +
        '10.0.0.11\t8a3c7f2e1b4d9c60\t20 MB\t9.8 MB (48.99%)\t8a3c7f2e1b4d9c60\t123456\t7\t123456\tfalse\t3.6.0\t3.6.0\t\n',
    );
    const { talos, calls } = setup([
      { match: on('10.0.0.11', 'etcd status'), stdout: status },
      { match: on('10.0.0.11', 'etcd alarm list'), stdout: '' },
      { match: on('10.0.0.12', 'etcd alarm list'), stdout: goTabwriter('NODE\tMEMBER\tALARM\n10.0.0.12\t00000000000000ff\tNOSPACE\n') },
    ]);
    expect(await talos.etcdStatus('10.0.0.11')).toEqual([{ node: '10.0.0.11', memberId: '8a3c7f2e1b4d9c60', learner: false, errors: '' }]);
    expect(await talos.etcdAlarms('10.0.0.11')).toEqual([]);
    expect(await talos.etcdAlarms('10.0.0.12')).toEqual([{ node: '10.0.0.12', memberId: '00000000000000ff', alarm: 'NOSPACE' }]);
    expect(calls().map((c) => globalsOk(c, c.argv[3]).join(' '))).toEqual(['etcd status', 'etcd alarm list', 'etcd alarm list']);
  });

  it('etcdMembers: `etcd members` on the one address, parsed into members', async () => {
    const members = goTabwriter(
      'NODE\tID\tHOSTNAME\tPEER URLS\tCLIENT URLS\tLEARNER\n' +
        '10.0.0.11\t8a3c7f2e1b4d9c60\tcp-1\thttps://10.0.0.11:2380\thttps://10.0.0.11:2379\tfalse\n' +
        '10.0.0.11\t5e1f00d0c0ffee01\tcp-0\thttps://10.0.0.9:2380\thttps://10.0.0.9:2379\tfalse\n',
    );
    const { talos, calls } = setup([
      { match: on('10.0.0.11', 'etcd members'), stdout: members },
      { match: on('10.0.0.12', 'etcd members'), stdout: 'NODE   ID   NAME\n' },
      {
        match: on('10.0.0.21', 'etcd members'),
        stderr:
          'error getting members: 1 error occurred:\n\t* 10.0.0.21: rpc error: code = Unimplemented desc = member list is only available on control plane nodes\n\n\n',
        exit: 1,
      },
    ]);
    expect(await talos.etcdMembers('10.0.0.11')).toEqual([
      {
        id: '8a3c7f2e1b4d9c60',
        name: 'cp-1',
        peerUrls: ['https://10.0.0.11:2380'],
        clientUrls: ['https://10.0.0.11:2379'],
        learner: false,
      },
      { id: '5e1f00d0c0ffee01', name: 'cp-0', peerUrls: ['https://10.0.0.9:2380'], clientUrls: ['https://10.0.0.9:2379'], learner: false },
    ]);
    expect(globalsOk(calls()[0], '10.0.0.11')).toEqual(['etcd', 'members']);
    await expect(talos.etcdMembers('10.0.0.12')).rejects.toMatchObject({ kind: 'unparseable', node: '10.0.0.12' });
    await expect(talos.etcdMembers('10.0.0.21')).rejects.toMatchObject({ kind: 'invalid', node: '10.0.0.21', exitCode: 1 });
  });

  it('etcdStatus: unparseable output and a worker node are ToolErrors', async () => {
    const { talos } = setup([
      { match: on('10.0.0.11', 'etcd status'), stdout: 'MEMBER   HEALTHY\nabc      yes\n' },
      {
        match: on('10.0.0.21', 'etcd status'),
        stderr:
          'error getting status: 1 error occurred:\n\t* 10.0.0.21: rpc error: code = Unimplemented desc = etcd status is only available on control plane nodes\n\n\n',
        exit: 1,
      },
    ]);
    await expect(talos.etcdStatus('10.0.0.11')).rejects.toMatchObject({ kind: 'unparseable', node: '10.0.0.11' });
    await expect(talos.etcdStatus('10.0.0.21')).rejects.toMatchObject({ kind: 'invalid', node: '10.0.0.21', exitCode: 1 });
  });
});
