'use strict';
// Fake talosctl (client v1.13.8) for the cluster twin, as one function: runClient() parses the command
// line like the real client, resolves the talosconfig from the caller's environment, reads local patch
// files relative to the caller's directory, and asks the simulator (found through the talosconfig
// endpoint, over plain HTTP, so a moved or closed endpoint is refused as ever) to run the command. The
// simulator answers with output segments whose time placeholders the client renders against its own
// clock and zone, as talosctl renders "(3m25s ago)" and LASTMOD on the client. Two callers: the Node
// script talosctl.cjs (one process per call: the fallback) and the twin's front door
// (sim/talos/frontDoor.ts), which runs it in the twin's process for the bash `talosctl`. Plain CommonJS
// with no dependencies, so that the Node script starts without compiling anything.

const fs = require('fs');
const http = require('http');
const pathMod = require('path');
const cli = require('./talosctl-cli.cjs');
/** talosfmt.cjs, loaded with the first output segment (version --client and parse errors print none) */
let fmt = null;

const CLIENT = { tag: 'v1.13.8', sha: '3de49322', go: 'go1.26.5', os: 'linux', arch: 'amd64' };

/**
 * One call's state: its caller's environment and directory, where its output goes, the in-flight
 * request (destroyed when the caller goes away) and whether it was aborted.
 */
class Call {
  constructor({ env, cwd, stdout, stderr, signal }) {
    this.env = env;
    this.cwd = cwd;
    this.out = stdout;
    this.err = stderr;
    this.aborted = false;
    /** the in-flight request, destroyed on abort (SIGINT/SIGTERM, or the bash client's connection closing) */
    this.current = null;
    if (signal) {
      const abort = () => {
        this.aborted = true;
        if (this.current) this.current.destroy();
      };
      if (signal.aborted) abort();
      else signal.addEventListener('abort', abort, { once: true });
    }
  }

  write(fd, text) {
    if (!text) return;
    (fd === 2 ? this.err : this.out)(text);
  }
}

// --- talosconfig (a YAML subset: block maps, block and flow sequences of scalars) -----------------

function scalar(raw) {
  const s = raw.trim();
  if (s === '' || s === '~' || s === 'null') return null;
  if (s.startsWith('"')) return JSON.parse(s);
  if (s.startsWith("'")) return s.slice(1, -1).replace(/''/g, "'");
  if (s.startsWith('[')) {
    const inner = s.slice(1, s.lastIndexOf(']')).trim();
    return inner === '' ? [] : inner.split(',').map((x) => scalar(x));
  }
  if (s === '{}') return {};
  return s;
}

function stripComment(line) {
  if (!line.includes('#')) return line; // the common case, without a walk over a long base64 line
  let q = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (q) {
      if (ch === q) q = null;
      continue;
    }
    if (ch === '"' || ch === "'") q = ch;
    else if (ch === '#' && (i === 0 || /\s/.test(line[i - 1]))) return line.slice(0, i);
  }
  return line;
}

function parseYamlSubset(text) {
  const lines = [];
  for (const raw of text.split(/\r?\n/)) {
    const l = stripComment(raw);
    if (l.trim() === '' || l.trim() === '---') continue;
    lines.push({ indent: l.length - l.trimStart().length, text: l.trim() });
  }
  let i = 0;
  const block = (indent) => {
    if (i >= lines.length) return null;
    if (lines[i].text.startsWith('- ') || lines[i].text === '-') {
      const arr = [];
      while (i < lines.length && lines[i].indent === indent && (lines[i].text.startsWith('- ') || lines[i].text === '-')) {
        arr.push(scalar(lines[i].text.slice(1)));
        i++;
      }
      return arr;
    }
    const obj = {};
    while (i < lines.length && lines[i].indent === indent) {
      const t = lines[i].text;
      const m = /^("[^"]*"|'[^']*'|[^:]+):(?:\s+(.*))?$/.exec(t);
      if (!m) throw new Error(`yaml: line ${i + 1}: could not find expected ':'`);
      const key = String(scalar(m[1]));
      i++;
      if (m[2] !== undefined && m[2].trim() !== '') obj[key] = scalar(m[2]);
      else if (i < lines.length && lines[i].indent > indent) obj[key] = block(lines[i].indent);
      else if (i < lines.length && lines[i].indent === indent && lines[i].text.startsWith('-')) obj[key] = block(indent);
      else obj[key] = null;
    }
    return obj;
  };
  return lines.length ? block(lines[0].indent) : {};
}

function ensureFile(p) {
  try {
    fs.mkdirSync(pathMod.dirname(p), { recursive: true });
    fs.writeFileSync(p, '', { flag: 'wx' });
  } catch {
    // exists, or not creatable: reading it below reports the problem
  }
}

/** clientconfig.Open: the explicit path (created when missing), else the first existing default path. */
function openConfig(explicit, create, env, cwd) {
  // a relative path is the caller's: resolved against its directory (the messages keep it as given)
  const at = (q) => pathMod.resolve(cwd, q);
  let p = explicit;
  if (p && create) ensureFile(at(p));
  else {
    const candidates = [];
    if (env.TALOSCONFIG !== undefined) candidates.push({ p: env.TALOSCONFIG, create: true });
    const home = env.TALOS_HOME && pathMod.isAbsolute(env.TALOS_HOME) ? env.TALOS_HOME : pathMod.join(env.HOME || '/', '.talos');
    candidates.push({ p: pathMod.join(home, 'config'), create: false });
    candidates.push({ p: '/var/run/secrets/talos.dev/config', create: false });
    const found = candidates.find((c) => c.p && fs.existsSync(at(c.p)));
    if (found) p = found.p;
    else {
      // The real client would create the first writable default; only $TALOSCONFIG is created here,
      // so that tests never write into the developer's home directory.
      const w = candidates.find((c) => c.create && c.p);
      if (w && create) {
        ensureFile(at(w.p));
        p = w.p;
      } else return { path: '', config: {} };
    }
  }
  let text;
  try {
    text = fs.readFileSync(at(p), 'utf8');
  } catch (e) {
    throw new Error(
      `failed to open config file ${JSON.stringify(explicit)}: open ${p}: ${e.code === 'EACCES' ? 'permission denied' : 'no such file or directory'}`,
    );
  }
  try {
    return { path: p, config: parseYamlSubset(text) || {} };
  } catch (e) {
    throw new Error(`failed to open config file ${JSON.stringify(explicit)}: ${e.message}`);
  }
}

function resolveTarget(call, flags, create = true) {
  const { config } = openConfig(flags.talosconfig, create, call.env, call.cwd);
  const contexts = (config && config.contexts) || {};
  const name = flags.context || (config && config.context) || '';
  const ctx = Object.prototype.hasOwnProperty.call(contexts, name) ? contexts[name] : null;
  const endpoints = flags.endpoints.length ? flags.endpoints : (ctx && ctx.endpoints) || [];
  return { ctx, endpoints: endpoints.filter(Boolean).map(String) };
}

function endpointAddress(ep) {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(ep) || /^([^:]+)(?::(\d+))?$/.exec(ep);
  if (!m) return { host: ep, port: 50000 };
  return { host: m[1], port: m[2] ? Number(m[2]) : 50000 };
}

// --- talking to the simulator --------------------------------------------------------------------

function post(call, ep, route, body, onLine) {
  return new Promise((resolve, reject) => {
    const { host, port } = endpointAddress(ep);
    const data = Buffer.from(JSON.stringify(body));
    const req = http.request(
      {
        host,
        port,
        path: route,
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': data.length },
      },
      (res) => {
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          buf += chunk;
          let nl;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl);
            buf = buf.slice(nl + 1);
            if (line && onLine) onLine(JSON.parse(line));
          }
        });
        res.on('end', () => resolve());
        res.on('error', reject);
      },
    );
    req.on('error', (e) => reject(Object.assign(e, { endpoint: `${host}:${port}` })));
    call.current = req;
    if (call.aborted) req.destroy();
    req.end(data);
  });
}

function renderSegment(call, seg) {
  if (!fmt) fmt = require('./talosfmt.cjs');
  let text = fmt.resolveMarks(seg.text, Date.now(), call.env.TZ);
  if (seg.tab) text = fmt.tabwrite(text, 3);
  call.write(seg.fd, text);
}

function unavailableText(endpoint) {
  return `rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp ${endpoint}: connect: connection refused"`;
}

/** What each command prints when the endpoint itself cannot be dialled (no node got the request). */
function endpointDownOutput(run, endpoint, nodes) {
  const err = unavailableText(endpoint);
  const action = run.args[1] || 'status';
  switch (run.command) {
    case 'service':
      if (run.args.length && action !== 'status') return { stderr: `error starting service: ${err}\n` };
      return { stderr: `error listing services: ${err}\n` };
    case 'version':
      return { stderr: `error getting version: ${err}\n` };
    case 'etcd-status':
      return { stderr: `error getting status: ${err}\n` };
    case 'etcd-alarm-list':
      return { stderr: `error getting alarms: ${err}\n` };
    case 'ls':
      return { stderr: `error fetching logs: ${err}\n` };
    case 'read':
      return { stderr: `error reading file: ${err}\n` };
    case 'reboot':
      if (!run.flags.wait && !run.flags.debug && !run.flags.drain) return { stderr: `error executing reboot: ${err}\n` };
      return { stderr: nodes.map((n) => `${JSON.stringify(n)}: unavailable, retrying...\n${JSON.stringify(n)}: ${err}\n`).join('') };
    case 'image-pull':
    case 'image-remove':
      return { stderr: `${nodes.map((n) => `error from node ${n}: ${err}`).join('\n')}\n` };
    default:
      // get and patch: ResolveResourceKind's error comes back unwrapped
      return { stderr: `${err}\n` };
  }
}

function readPatches(flags, cwd) {
  const list = [...flags.patch];
  if (flags['patch-file']) list.push(`@${flags['patch-file']}`);
  const out = [];
  for (const p of list) {
    let file = null;
    if (p.startsWith('@')) file = p.slice(1);
    else if (!/[\n ]/.test(p) && !p.startsWith('[') && !p.startsWith('{')) file = p;
    if (file === null) {
      out.push({ source: 'inline', content: p });
      continue;
    }
    try {
      out.push({ source: file, content: fs.readFileSync(pathMod.resolve(cwd, file), 'utf8') });
    } catch (e) {
      const why = e.code === 'EACCES' ? 'permission denied' : e.code === 'EISDIR' ? 'is a directory' : 'no such file or directory';
      throw new Error(e.code === 'EISDIR' ? `read ${file}: ${why}` : `open ${file}: ${why}`);
    }
  }
  return out;
}

async function record(call, endpoints, argv, run, nodes, exitCode) {
  if (!endpoints.length) return;
  try {
    await post(call, endpoints[0], '/record', { argv, commandPath: run ? run.commandPath : '', nodes, exitCode });
  } catch {
    // the sim keeps no record of calls it never received
  }
}

/** One talosctl call; resolves with its exit code (1 once aborted). */
async function main(call, argv) {
  const write = (fd, text) => call.write(fd, text);
  const finish = (code) => code;
  const parsed = cli.parse(argv);
  const quietTarget = (flags) => {
    // Only to find the sim for the call record: never create a config file on this path.
    try {
      return resolveTarget(call, flags, false);
    } catch {
      return { ctx: null, endpoints: [] };
    }
  };
  const flagsForRecord = () => {
    // Best effort: locate the sim even for calls that never got past parsing, so it can record them.
    const f = { talosconfig: '', context: '', endpoints: [] };
    for (let i = 0; i < argv.length; i++) {
      const a = argv[i];
      const m = /^--(talosconfig|context|endpoints)(?:=(.*))?$/.exec(a) || /^-(e)(.*)$/.exec(a);
      if (!m) continue;
      const key = m[1] === 'e' ? 'endpoints' : m[1];
      const v = m[2] !== undefined && m[2] !== '' ? m[2] : argv[++i];
      if (v === undefined) continue;
      if (key === 'endpoints') f.endpoints.push(...v.split(','));
      else f[key] = v;
    }
    return f;
  };

  if (parsed.kind === 'help') {
    write(1, parsed.text);
    await record(call, quietTarget(flagsForRecord()).endpoints, argv, null, [], 0);
    return finish(0);
  }
  if (parsed.kind === 'error') {
    write(2, parsed.stderr);
    await record(call, quietTarget(flagsForRecord()).endpoints, argv, parsed, [], 1);
    return finish(1);
  }

  const run = parsed;
  const flags = run.flags;
  const cmd = cli.commandByPath(run.commandPath);
  const fail = async (message, target, nodes) => {
    write(2, cli.errorText(message, cmd));
    await record(call, target ? target.endpoints : [], argv, run, nodes || [], 1);
    return finish(1);
  };

  if (run.command === 'version' && !flags.json) {
    write(1, 'Client:\n');
    if (flags.short) write(1, `Talos ${CLIENT.tag}\n`);
    else {
      write(
        1,
        `\tTag:         ${CLIENT.tag}\n\tSHA:         ${CLIENT.sha}\n\tBuilt:       \n\tGo version:  ${CLIENT.go}\n\tOS/Arch:     ${CLIENT.os}/${CLIENT.arch}\n`,
      );
    }
    if (flags.client) {
      await record(call, quietTarget(flags).endpoints, argv, run, [], 0);
      return finish(0);
    }
    write(1, 'Server:\n');
  }

  if (!run.command) {
    return fail(`talosctl simulator: "${run.commandPath}" is not simulated`, quietTarget(flags));
  }

  let target;
  try {
    target = resolveTarget(call, flags);
  } catch (e) {
    return fail(e.message);
  }
  if (!target.endpoints.length) return fail('error constructing client: failed to determine endpoints');
  let nodes = flags.nodes;
  if (!nodes.length) {
    if (!target.ctx) return fail('failed to resolve config context', target);
    nodes = (target.ctx.nodes || []).map(String);
  }
  if (!nodes.length) {
    return fail(
      'nodes are not set for the command: please use `--nodes` flag or configuration file to set the nodes to run the command against',
      target,
    );
  }

  if (run.command === 'read' && nodes.length > 1) {
    return fail('command "read" is not supported with multiple nodes', target, nodes);
  }

  let patches;
  if (run.command === 'patch') {
    if (!flags.patch.length && !flags['patch-file']) return fail('either --patch or --patch-file should be defined', target, nodes);
    try {
      patches = readPatches(flags, call.cwd);
    } catch (e) {
      return fail(e.message, target, nodes);
    }
  }

  const body = {
    argv,
    command: run.command,
    commandPath: run.commandPath,
    args: run.args,
    flags,
    changed: run.changed,
    nodes,
    patches,
    cwd: call.cwd,
    tz: call.env.TZ,
  };
  let exitCode = null;
  const onLine = (msg) => {
    if (msg.exit !== undefined) exitCode = msg.exit;
    else if (msg.error !== undefined) write(2, cli.errorText(msg.error, cmd));
    else renderSegment(call, msg);
  };
  let lastErr;
  for (const ep of target.endpoints) {
    try {
      await post(call, ep, '/run', body, onLine);
      lastErr = null;
      break;
    } catch (e) {
      if (call.aborted) return 1;
      lastErr = e;
      if (exitCode !== null) break;
    }
  }
  if (lastErr && exitCode === null) {
    const out = endpointDownOutput(run, lastErr.endpoint || target.endpoints[0], nodes);
    write(2, out.stderr);
    return finish(1);
  }
  return finish(exitCode === null ? 1 : exitCode);
}

/**
 * Runs one talosctl call as the real client would in a process with environment `env` (TZ,
 * TALOSCONFIG, TALOS_HOME, HOME are read) and working directory `cwd`; `stdout`/`stderr` take each
 * piece of text in the order the process would write it. Aborting `signal` is the process being told
 * to stop: the in-flight request is dropped (the simulator sees the connection close and aborts the
 * command) and the call resolves with 1, as talosctl exits after "Signal received, aborting".
 */
async function runClient({ argv, env, cwd, stdout, stderr, signal }) {
  const call = new Call({ env, cwd, stdout, stderr, signal });
  try {
    const code = await main(call, argv);
    return call.aborted ? 1 : code;
  } catch (e) {
    if (call.aborted) return 1;
    call.write(2, `${e && e.message ? e.message : String(e)}\n`);
    return 1;
  }
}

module.exports = { runClient, CLIENT };
