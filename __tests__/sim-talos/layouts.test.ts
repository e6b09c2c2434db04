// Byte-level layouts of the fake talosctl (client v1.13.8), run as a child process found on PATH.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TalosSim } from '../../sim/talos/index.js';
import { checkAgos, goSeconds, lsTimeUTC, recordingHooks, roundSec, talosctl } from './helpers.js';

const CRED = { 'ghcr.io': { username: 'ci-bot', password: 'token-1' } };
const CP = '10.0.0.11';
const W = '10.0.0.21';
const DEAD = '10.0.0.99';
const PROC = 'Process(["/bin/containerd" "--address" "/run/containerd/containerd.sock" "--config" "/etc/cri/containerd.toml"])';
const UNAVAILABLE = (ip: string) =>
  `rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp ${ip}:50000: connect: connection refused"`;

let sim: TalosSim;

beforeAll(async () => {
  sim = await TalosSim.start({ kube: recordingHooks() });
  sim.addNode({ name: 'cp-1', ip: CP, role: 'control-plane', credential: CRED });
  sim.addNode({ name: 'w-1', ip: W, role: 'worker', credential: CRED });
  sim.addNode({ name: 'w-old', ip: '10.0.0.23', role: 'worker', credential: CRED, bootedAgoMs: 200 * 24 * 3600 * 1000 });
});

afterAll(async () => {
  await sim.stop();
});

const newestFirst = (ip: string) => [...sim.node(ip).containerd.events].reverse().map((e) => e.ts);

describe('service cri', () => {
  it('prints the single-service view with a 9-character label column and newest event first', async () => {
    const r = await talosctl(sim, ['-n', CP, 'service', 'cri']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const pid = sim.node(CP).containerd.pid;
    expect(checkAgos(r.stdout, newestFirst(CP), r.t0, r.t1)).toBe(
      `NODE     ${CP}\n` +
        'ID       cri\n' +
        'STATE    Running\n' +
        'HEALTH   OK\n' +
        'EVENTS   [Running]: Health check successful (D ago)\n' +
        `         [Running]: Process ${PROC} started with PID ${pid} (D ago)\n` +
        '         [Preparing]: Creating service runner (D ago)\n' +
        '         [Preparing]: Running pre state (D ago)\n' +
        '         [Waiting]: Waiting for network (D ago)\n' +
        '         [Waiting]: Waiting for volumes /var/lib, /var/lib/cni, /var/lib/containerd, /var/run, /var/run/lock, /etc/cni, /etc/kubernetes, /usr/libexec/kubernetes, /opt to be mounted, network (D ago)\n' +
        '         [Starting]: Starting service (D ago)\n',
    );
    // 10 days of uptime in hours, never days (checkAgos above checked the value against the clock)
    expect(r.stdout).toMatch(/started with PID \d+ \((239|240)h\d{1,2}m\d{1,2}s ago\)/);
  });

  it('widens the label column to 22 when a LAST HEALTH MESSAGE is shown', async () => {
    // a containerd launched 0.1 s ago has not been probed yet (first probe after 1 s): its check is
    // held until the call has answered, however long the call takes on a loaded runner
    const ip = '10.0.0.24';
    sim.addNode({ name: 'w-fresh', ip, role: 'worker', credential: CRED, bootedAgoMs: 8000, criStartedAgoMs: 100, criHealthHeld: true });
    const r = await talosctl(sim, ['-n', ip, 'service', 'cri']);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.slice(0, 5)).toEqual([
      `NODE                  ${ip}`,
      'ID                    cri',
      'STATE                 Running',
      'HEALTH                ?',
      'LAST HEALTH MESSAGE   Unknown',
    ]);
    expect(lines[5]).toMatch(/^EVENTS {16}\[Running\]: Process .* started with PID \d+ \(\d+s ago\)$/); // 0s unless the machine is slow
    // once the check answers: healthy, and the label column back to 9
    sim.releaseCriHealth(ip);
    const after = await talosctl(sim, ['-n', ip, 'service', 'cri']);
    expect(after.stdout.split('\n').slice(0, 4)).toEqual([`NODE     ${ip}`, 'ID       cri', 'STATE    Running', 'HEALTH   OK']);
  });

  it('prints the other nodes and a WARNING multierror when one node is unreachable', async () => {
    const r = await talosctl(sim, ['-n', `${CP},${DEAD}`, 'service', 'cri']);
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith(`NODE     ${CP}\nID       cri\n`)).toBe(true);
    expect(r.stderr).toBe(`WARNING: 1 error occurred:\n\t* ${DEAD}: ${UNAVAILABLE(DEAD)}\n\n\n`);
  });

  it('fails with the multierror and empty stdout when no node answers', async () => {
    const r = await talosctl(sim, ['-n', DEAD, 'service', 'cri']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`error listing services: 1 error occurred:\n\t* ${DEAD}: ${UNAVAILABLE(DEAD)}\n\n\n`);
  });

  it("refuses service cri restart with Talos's exact text", async () => {
    const r = await talosctl(sim, ['-n', CP, 'service', 'cri', 'restart']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `error starting service: 1 error occurred:\n\t* ${CP}: rpc error: code = Unknown desc = service "cri" doesn't support restart operation via API\n\n\n`,
    );
    const rec = sim.commands.at(-1);
    expect(rec).toMatchObject({ command: 'service', mutating: true, exitCode: 1, nodes: [CP] });
  });

  it('lists services with LAST CHANGE durations', async () => {
    const r = await talosctl(sim, ['-n', W, 'service']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    // the LAST CHANGE column is as wide as its widest cell (12 to 14 characters) plus the 3 of padding
    expect(lines[0]).toMatch(/^NODE {8}SERVICE {6}STATE {5}HEALTH {3}LAST CHANGE {4,6}LAST EVENT$/);
    const row = lines.find((l) => l.includes(' cri ')) ?? '';
    expect(row).toMatch(/^10\.0\.0\.21 {3}cri {10}Running {3}OK {7}\d+h\d+m\d+s ago +Health check successful$/);
    expect(row.indexOf('Health check successful')).toBe(lines[0].indexOf('LAST EVENT'));
    // the last change, about 10 days ago, as a client rendering between the spawn and the exit prints it
    const since = goSeconds(/OK {7}(\S+) ago/.exec(row)![1]);
    const last = sim.node(W).containerd.events.at(-1)!.ts;
    expect(since).toBeGreaterThanOrEqual(roundSec(r.t0 - last));
    expect(since).toBeLessThanOrEqual(roundSec(r.t1 - last));
    expect(since).toBeGreaterThan(239 * 3600);
    expect(lines.some((l) => l.includes('etcd'))).toBe(false);
  });
});

describe('ls -l', () => {
  it('renders MODE, sizes and LASTMOD without a year under 180 days (client zone UTC)', async () => {
    const r = await talosctl(sim, ['-n', CP, 'ls', '-l', '/etc/cri/conf.d/cri.toml']);
    expect(r.code).toBe(0);
    const f = sim.node(CP).files.get('/etc/cri/conf.d/cri.toml');
    if (!f) throw new Error('no cri.toml');
    const when = lsTimeUTC(f.mtimeMs, r.t0);
    const size = String(Buffer.byteLength(f.content));
    const header = ['NODE', 'MODE', 'UID', 'GID', 'SIZE(B)', 'LASTMOD', 'LABEL', 'NAME'];
    const row = [CP, '-rw-------', '0', '0', size, when, 'system_u:object_r:etc_t:s0', 'cri.toml'];
    const widths = header.map((h, i) => Math.max(h.length, row[i].length) + 3);
    const line = (cells: string[]) => cells.map((c, i) => (i < cells.length - 1 ? c.padEnd(widths[i]) : c)).join('');
    expect(r.stdout).toBe(`${line(header)}\n${line(row)}\n`);
    expect(when).toMatch(/^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d$/);
  });

  it('uses `Jan _2 2006 15:04` for files older than 180 days', async () => {
    const r = await talosctl(sim, ['-n', '10.0.0.23', 'ls', '-l', '/etc/cri/conf.d/cri.toml']);
    expect(r.code).toBe(0);
    const f = sim.node('10.0.0.23').files.get('/etc/cri/conf.d/cri.toml');
    const when = lsTimeUTC(f?.mtimeMs ?? 0, r.t0);
    expect(when).toMatch(/^[A-Z][a-z]{2} [ \d]\d \d{4} \d\d:\d\d$/);
    expect(r.stdout.split('\n')[1]).toContain(`   ${when}   system_u:object_r:etc_t:s0   cri.toml`);
  });

  it('renders LASTMOD in the client time zone', async () => {
    const utc = await talosctl(sim, ['-n', CP, 'ls', '-l', '/etc/cri/conf.d/cri.toml']);
    const tokyo = await talosctl(sim, ['-n', CP, 'ls', '-l', '/etc/cri/conf.d/cri.toml'], { TZ: 'Asia/Tokyo' });
    const mtime = sim.node(CP).files.get('/etc/cri/conf.d/cri.toml')?.mtimeMs ?? 0;
    expect(utc.stdout).toContain(lsTimeUTC(mtime, utc.t0));
    expect(tokyo.stdout).toContain(lsTimeUTC(mtime + 9 * 3600 * 1000, tokyo.t0));
  });

  it('lists a directory: `.` first, then the children in lexical order', async () => {
    const r = await talosctl(sim, ['-n', CP, 'ls', '-l', '/etc/cri/conf.d/']);
    expect(r.code).toBe(0);
    const names = r.stdout
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((l) => l.split(/\s+/).at(-1));
    expect(names).toEqual(['.', '00-base.part', '01-registries.part', '20-customization.part', 'base-spec.json', 'cri.toml', 'hosts']);
  });

  it('prints the header alone on stdout and the stream multierror on stderr for a missing file', async () => {
    const r = await talosctl(sim, ['-n', CP, 'ls', '-l', '/etc/cri/conf.d/x']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('NODE   MODE   UID   GID   SIZE(B)   LASTMOD   LABEL   NAME\n');
    expect(r.stderr).toBe('1 error occurred:\n rpc error: code = Unknown desc = lstat /etc/cri/conf.d/x: no such file or directory\n');
  });

  it('keeps the rows of answering nodes and exits 1 when one node fails', async () => {
    const r = await talosctl(sim, ['-n', `${CP},${DEAD}`, 'ls', '-l', '/etc/cri/conf.d/cri.toml']);
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n')).toHaveLength(3);
    expect(r.stdout).toContain(`${CP}   -rw-------`);
    expect(r.stderr).toBe(`1 error occurred:\n ${UNAVAILABLE(DEAD)}\n`);
  });
});

describe('read', () => {
  it('returns the boot id with its trailing newline', async () => {
    const r = await talosctl(sim, ['-n', CP, 'read', '/proc/sys/kernel/random/boot_id']);
    expect(r).toMatchObject({ code: 0, stdout: `${sim.node(CP).bootID}\n`, stderr: '' });
  });

  it('returns cri.toml with the ## header lines of the merged parts', async () => {
    const r = await talosctl(sim, ['-n', CP, 'read', '/etc/cri/conf.d/cri.toml']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^## \/etc\/cri\/conf\.d\/00-base\.part \(sha256:[0-9a-f]{64}\)\n## \/etc\/cri\/conf\.d\/01-registries\.part \(sha256:[0-9a-f]{64}\)\n## \/etc\/cri\/conf\.d\/20-customization\.part \(sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\)\n\nversion = 3\n/,
    );
    expect(r.stdout).toContain(
      "        [plugins.'io.containerd.cri.v1.images'.registry.configs.'ghcr.io']\n" +
        "          [plugins.'io.containerd.cri.v1.images'.registry.configs.'ghcr.io'.auth]\n" +
        "            auth = ''\n            identitytoken = ''\n            password = 'token-1'\n            username = 'ci-bot'\n",
    );
  });

  it('answers NotFound for a missing file', async () => {
    const r = await talosctl(sim, ['-n', CP, 'read', '/etc/cri/conf.d/nope']);
    expect(r).toMatchObject({ code: 1, stdout: '' });
    expect(r.stderr).toBe('error reading: rpc error: code = NotFound desc = stat /etc/cri/conf.d/nope: no such file or directory\n');
  });

  it('is refused with several nodes, with the usage text after the error', async () => {
    const r = await talosctl(sim, ['-n', `${CP},${W}`, 'read', '/proc/sys/kernel/random/boot_id']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(
      r.stderr.startsWith(
        'command "read" is not supported with multiple nodes\n\nUsage:\n  talosctl read <path> [flags]\n\nAliases:\n  read, cat\n\nFlags:\n',
      ),
    ).toBe(true);
    expect(r.stderr.endsWith('in order.\n\n')).toBe(true);
  });
});

describe('version', () => {
  it('prints the client block, then one server block per node (Built: + 7 spaces)', async () => {
    const r = await talosctl(sim, ['-n', CP, 'version']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(
      'Client:\n\tTag:         v1.13.8\n\tSHA:         3de49322\n\tBuilt:       \n\tGo version:  go1.26.5\n\tOS/Arch:     linux/amd64\n' +
        `Server:\n\tNODE:        ${CP}\n\tTag:         v1.13.8\n\tSHA:         3de49322\n\tBuilt:       \n\tGo version:  go1.26.5\n\tOS/Arch:     linux/amd64\n\tEnabled:     RBAC\n`,
    );
  });

  it('prints the answering nodes and a WARNING when one of several fails', async () => {
    const r = await talosctl(sim, ['-n', `${W},${DEAD}`, 'version', '--short']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `Client:\nTalos v1.13.8\nServer:\n\tNODE:        ${W}\n\tTag:         v1.13.8\n\tSHA:         3de49322\n\tBuilt:       \n\tGo version:  go1.26.5\n\tOS/Arch:     linux/amd64\n\tEnabled:     RBAC\n`,
    );
    expect(r.stderr).toBe(`WARNING: 1 error occurred:\n\t* ${DEAD}: ${UNAVAILABLE(DEAD)}\n\n\n`);
  });

  it('keeps the client block on stdout when the node fails', async () => {
    const r = await talosctl(sim, ['-n', DEAD, 'version']);
    expect(r.code).toBe(1);
    expect(r.stdout.endsWith('Server:\n')).toBe(true);
    expect(r.stderr).toBe(`error getting version: 1 error occurred:\n\t* ${DEAD}: ${UNAVAILABLE(DEAD)}\n\n\n`);
  });
});

describe('etcd', () => {
  it('prints the 1.13 status header with the member row (empty ERRORS keeps trailing padding)', async () => {
    const r = await talosctl(sim, ['-n', CP, 'etcd', 'status']);
    expect(r.code).toBe(0);
    const id = sim.node(CP).etcd?.memberId ?? '';
    // the RAFT INDEX cell (the sixth; cells are two or more spaces apart), not the first long number:
    // a member id is hex, and now and then all of its digits are decimal ones
    const raft = r.stdout.split('\n')[1].split(/\s{2,}/)[5] ?? '';
    const header = [
      'NODE',
      'MEMBER',
      'DB SIZE',
      'IN USE',
      'LEADER',
      'RAFT INDEX',
      'RAFT TERM',
      'RAFT APPLIED INDEX',
      'LEARNER',
      'PROTOCOL',
      'STORAGE',
      'ERRORS',
    ];
    const row = [CP, id, '20 MB', '9.8 MB (48.99%)', id, raft, '3', raft, 'false', '3.6.12', '3.6.0', ''];
    const widths = header.map((h, i) => Math.max(h.length, row[i].length) + 3);
    const line = (cells: string[]) => cells.map((c, i) => (i < cells.length - 1 ? c.padEnd(widths[i]) : c)).join('');
    expect(r.stdout).toBe(`${line(header)}\n${line(row)}\n`);
    expect(r.stdout.split('\n')[1].endsWith('3.6.0     ')).toBe(true);
  });

  it('prints the answering member and a WARNING for a worker in the same call', async () => {
    const r = await talosctl(sim, ['-n', `${CP},${W}`, 'etcd', 'status']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toHaveLength(3);
    expect(r.stdout.split('\n')[1].startsWith(`${CP}   ${sim.node(CP).etcd?.memberId}   20 MB`)).toBe(true);
    expect(r.stderr).toBe(
      `WARNING: 1 error occurred:\n\t* ${W}: rpc error: code = Unimplemented desc = etcd status is only available on control plane nodes\n\n\n`,
    );
  });

  it('answers Unimplemented on a worker', async () => {
    const r = await talosctl(sim, ['-n', W, 'etcd', 'status']);
    expect(r).toMatchObject({ code: 1, stdout: '' });
    expect(r.stderr).toBe(
      `error getting status: 1 error occurred:\n\t* ${W}: rpc error: code = Unimplemented desc = etcd status is only available on control plane nodes\n\n\n`,
    );
  });

  it('prints nothing for an empty alarm list and the table once an alarm exists', async () => {
    const none = await talosctl(sim, ['-n', CP, 'etcd', 'alarm', 'list']);
    expect(none).toMatchObject({ code: 0, stdout: '', stderr: '' });
    sim.setEtcd(CP, { alarm: 'NOSPACE' });
    try {
      const one = await talosctl(sim, ['-n', CP, 'etcd', 'alarm', 'list']);
      const id = sim.node(CP).etcd?.memberId;
      expect(one.stdout).toBe(`NODE        MEMBER             ALARM\n${CP}   ${id}   NOSPACE\n`);
    } finally {
      sim.setEtcd(CP, { alarm: null });
    }
  });
});

describe('etcd membership (its own list, not derived from the machines)', () => {
  it('`etcd members` prints the 1.13 table: an orphan voter, an unstarted member (empty cells keep their padding), a learner', async () => {
    const own = sim.node(CP).etcd?.memberId ?? '';
    const orphan = sim.addEtcdMember({ id: '00000000000000a1', name: 'cp-0', address: '10.0.0.9' });
    const unstarted = sim.addEtcdMember({ id: '00000000000000a2', name: 'cp-x', address: '10.0.0.8', started: false });
    const learner = sim.addEtcdMember({ id: '00000000000000a3', name: 'cp-new', address: 'fd00::3', learner: true });
    try {
      const r = await talosctl(sim, ['-n', CP, 'etcd', 'members']);
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout).toBe(
        'NODE        ID                 HOSTNAME   PEER URLS                CLIENT URLS              LEARNER\n' +
          `${CP}   ${own}   cp-1       https://${CP}:2380   https://${CP}:2379   false\n` +
          `${CP}   ${orphan}   cp-0       https://10.0.0.9:2380    https://10.0.0.9:2379    false\n` +
          `${CP}   ${unstarted}              https://10.0.0.8:2380                             false\n` +
          `${CP}   ${learner}   cp-new     https://[fd00::3]:2380   https://[fd00::3]:2379   true\n`,
      );
    } finally {
      for (const id of [orphan, unstarted, learner]) sim.removeEtcdMember(id);
    }
  });

  it('`etcd members` on a worker answers Unimplemented; with its etcd down, a control plane cannot answer', async () => {
    const w = await talosctl(sim, ['-n', W, 'etcd', 'members']);
    expect(w).toMatchObject({ code: 1, stdout: '' });
    expect(w.stderr).toBe(
      `error getting members: 1 error occurred:\n\t* ${W}: rpc error: code = Unimplemented desc = member list is only available on control plane nodes\n\n\n`,
    );
    sim.setEtcd(CP, { healthy: false });
    try {
      const down = await talosctl(sim, ['-n', CP, 'etcd', 'members']);
      expect(down.stderr).toBe(
        `error getting members: 1 error occurred:\n\t* ${CP}: rpc error: code = Unknown desc = error building etcd client: context deadline exceeded\n\n\n`,
      );
    } finally {
      sim.setEtcd(CP, { healthy: true });
    }
  });

  it('`etcd remove-member` takes the hex id, prints nothing, and the member is gone; an unknown id is NotFound', async () => {
    const orphan = sim.addEtcdMember({ id: '00000000000000b1', name: 'cp-0', address: '10.0.0.9' });
    const bad = await talosctl(sim, ['-n', CP, 'etcd', 'remove-member', 'cp-0']);
    expect(bad).toMatchObject({ code: 1, stdout: '' });
    expect(bad.stderr).toContain(
      'error parsing member ID: error parsing etcd member id: strconv.ParseUint: parsing "cp-0": invalid syntax',
    );
    const r = await talosctl(sim, ['-n', CP, 'etcd', 'remove-member', orphan]);
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(sim.etcdMembers().map((m) => m.id)).not.toContain(orphan);
    expect(sim.commands.at(-1)).toMatchObject({ path: 'etcd remove-member', mutating: true, exitCode: 0 });
    const again = await talosctl(sim, ['-n', CP, 'etcd', 'remove-member', orphan]);
    expect(again.stderr).toBe(
      `1 error occurred:\n\t* ${CP}: rpc error: code = NotFound desc = failed to remove member 177: etcdserver: member not found\n\n\n`,
    );
  });
});

describe('get (COSI)', () => {
  it('prints servicepids as YAML in the COSI layout', async () => {
    const r = await talosctl(sim, ['-n', CP, 'get', 'servicepids', 'cri', '-o', 'yaml']);
    expect(r.code).toBe(0);
    const c = sim.node(CP).containerd;
    const at = new Date(Math.floor(c.startedAtMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    expect(r.stdout).toBe(
      `node: ${CP}\nmetadata:\n    namespace: runtime\n    type: ServicePIDs.runtime.talos.dev\n    id: cri\n    version: 1\n    owner:\n    phase: running\n` +
        `    created: ${at}\n    updated: ${at}\nspec:\n    pid: ${c.pid}\n    mountNamespace: ${c.mountNamespace}\n`,
    );
  });

  it('prints JSON as a stream of indented objects with sorted keys, one per node', async () => {
    const r = await talosctl(sim, ['-n', `${CP},${W}`, 'get', 'etcfilestatus', 'cri/conf.d/cri.toml', '-o', 'json']);
    expect(r.code).toBe(0);
    const docs = r.stdout.split(/\n(?=\{)/);
    expect(docs).toHaveLength(2);
    expect(docs[0].startsWith('{\n    "metadata": {\n        "created": "')).toBe(true);
    expect(Object.keys(JSON.parse(docs[0]))).toEqual(['metadata', 'node', 'spec']);
    expect(JSON.parse(docs[1])).toMatchObject({
      node: W,
      metadata: { id: 'cri/conf.d/cri.toml', owner: 'files.EtcFileController' },
      spec: { specVersion: '1' },
    });
  });

  it('separates YAML documents with --- and reports timestatus', async () => {
    const r = await talosctl(sim, ['-n', `${CP},${W}`, 'get', 'timestatus', '-o', 'yaml']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n---\n')).toHaveLength(2);
    expect(r.stdout).toContain('spec:\n    synced: true\n    epoch: 0\n    syncDisabled: false\n');
  });

  it('collects per-node errors without node names', async () => {
    const r = await talosctl(sim, ['-n', `${CP},${W}`, 'get', 'servicepids', 'nope', '-o', 'yaml']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "2 errors occurred:\n\t* rpc error: code = NotFound desc = resource ServicePIDs.runtime.talos.dev(runtime/nope@undefined) doesn't exist\n" +
        "\t* rpc error: code = NotFound desc = resource ServicePIDs.runtime.talos.dev(runtime/nope@undefined) doesn't exist\n\n\n",
    );
  });

  it('answers NotFound for an unknown resource type', async () => {
    const r = await talosctl(sim, ['-n', CP, 'get', 'bogus']);
    expect(r).toMatchObject({ code: 1, stdout: '', stderr: 'rpc error: code = NotFound desc = resource "bogus" is not registered\n' });
  });
});

describe('command-line errors', () => {
  it('rejects an unknown flag with the usage of that command', async () => {
    const r = await talosctl(sim, ['-n', CP, 'service', 'cri', '--bogus']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(
      r.stderr.startsWith(
        'unknown flag: --bogus\n\nUsage:\n  talosctl service [<id> [start|stop|restart|status]] [flags]\n\nAliases:\n  service, services\n\nFlags:\n  -c, --cluster string ',
      ),
    ).toBe(true);
    expect(sim.commands.at(-1)).toMatchObject({ command: 'service', mutating: false, exitCode: 1 });
  });

  it('rejects an unknown command with a suggestion and the root usage', async () => {
    const r = await talosctl(sim, ['servce', 'cri']);
    expect(r.code).toBe(1);
    expect(
      r.stderr.startsWith('unknown command "servce" for "talosctl"\n\nDid you mean this?\n\tservice\n\n\nUsage:\n  talosctl [command]\n'),
    ).toBe(true);
  });

  it('treats `--wait false` as an argument, as pflag does for booleans', async () => {
    const r = await talosctl(sim, ['-n', W, 'reboot', '--wait', 'false']);
    expect(r.code).toBe(1);
    expect(r.stderr.startsWith('unknown command "false" for "talosctl reboot"\n\nUsage:\n  talosctl reboot [flags]\n')).toBe(true);
    expect(sim.mutatingCommands().some((c) => c.argv.includes('false'))).toBe(false);
  });

  it('validates enum flags through pflag', async () => {
    const r = await talosctl(sim, ['-n', W, 'reboot', '--mode', 'bogus']);
    expect(r.code).toBe(1);
    expect(r.stderr.startsWith('invalid argument "bogus" for "-m, --mode" flag: must be one of [default force powercycle]\n\nUsage:')).toBe(
      true,
    );
  });

  it('requires nodes (the talosconfig has none) and prints the usage after the error', async () => {
    const r = await talosctl(sim, ['patch', 'machineconfig', '--mode=no-reboot', '--patch-file', '/dev/null']);
    expect(r.code).toBe(1);
    expect(
      r.stderr.startsWith(
        'nodes are not set for the command: please use `--nodes` flag or configuration file to set the nodes to run the command against\n\nUsage:\n  talosctl patch machineconfig [flags]\n',
      ),
    ).toBe(true);
  });

  it('fails to construct a client without any talosconfig endpoint', async () => {
    const r = await talosctl(sim, ['-n', CP, 'service', 'cri'], { TALOSCONFIG: '/dev/null' });
    expect(r).toMatchObject({ code: 1, stdout: '', stderr: 'error constructing client: failed to determine endpoints\n' });
  });
});
