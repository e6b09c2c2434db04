'use strict';
// Command-line parsing of talosctl v1.13.8 (cobra v1.10 + pflag v1.0.10), done in the client because
// the real binary rejects bad flags, bad argument counts and unknown commands before it reads any
// config or dials anything, so these errors must work even when no sim is reachable.
// Texts, usage layout and flag tables follow cmd/talosctl at v1.13.8.

const GLOBAL_FLAGS = [
  {
    name: 'talosconfig',
    type: 'string',
    def: '',
    usage:
      "The path to the Talos configuration file. Defaults to 'TALOSCONFIG' env variable if set, otherwise '$HOME/.talos/config' and '/var/run/secrets/talos.dev/config' in order.",
  },
  { name: 'nodes', short: 'n', type: 'strings', def: '[]', usage: 'target the specified nodes' },
  { name: 'endpoints', short: 'e', type: 'strings', def: '[]', usage: 'override default endpoints in Talos configuration' },
  { name: 'cluster', short: 'c', type: 'string', def: '', usage: 'Cluster to connect to if a proxy endpoint is used.' },
  { name: 'context', type: 'string', def: '', usage: 'Context to be used in command' },
  {
    name: 'siderov1-keys-dir',
    type: 'string',
    def: '',
    usage:
      "The path to the SideroV1 auth PGP keys directory. Defaults to 'SIDEROV1_KEYS_DIR' env variable if set, otherwise '$HOME/.talos/keys'. Only valid for Contexts that use SideroV1 auth.",
  },
];

const choice = (options, lower) => (v) => {
  const key = lower ? v.toLowerCase() : v;
  if (!options.includes(key)) throw new Error(`must be one of [${options.join(' ')}]`);
  return key;
};

const PATCH_MODES = ['auto', 'no-reboot', 'reboot', 'staged', 'try'];

// sim: which server-side command implements it; undefined = listed for help/usage, not simulated.
const TREE = {
  name: 'talosctl',
  use: 'talosctl',
  short: 'A CLI for out-of-band management of Kubernetes nodes created by Talos',
  groups: [{ id: 'talos', title: 'Manage running Talos clusters:' }],
  flags: [],
  children: [
    {
      name: 'etcd',
      use: 'etcd',
      short: 'Manage etcd',
      global: true,
      group: 'talos',
      flags: [],
      children: [
        {
          name: 'alarm',
          use: 'alarm',
          short: 'Manage etcd alarms',
          flags: [],
          children: [
            { name: 'disarm', use: 'disarm', short: 'Disarm the etcd alarms for the node.', args: ['none'], flags: [] },
            { name: 'list', use: 'list', short: 'List the etcd alarms for the node.', args: ['none'], flags: [], sim: 'etcd-alarm-list' },
          ],
        },
        { name: 'defrag', use: 'defrag', short: 'Defragment etcd database on the node', args: ['none'], flags: [] },
        {
          name: 'downgrade',
          use: 'downgrade',
          short: 'Manage etcd storage system downgrades',
          flags: [],
          children: [
            { name: 'cancel', use: 'cancel', short: 'Cancel etcd storage system downgrade.', args: ['none'], flags: [] },
            {
              name: 'enable',
              use: 'enable <version>',
              short: 'Enable etcd storage system downgrade to the specified version.',
              args: ['exact', 1],
              flags: [],
            },
            {
              name: 'validate',
              use: 'validate <version>',
              short: 'Validate if the etcd storage system can be downgraded to the specified version.',
              args: ['exact', 1],
              flags: [],
            },
          ],
        },
        {
          name: 'forfeit-leadership',
          use: 'forfeit-leadership',
          short: 'Tell node to forfeit etcd cluster leadership',
          args: ['none'],
          flags: [],
        },
        { name: 'leave', use: 'leave', short: 'Tell nodes to leave etcd cluster', args: ['none'], flags: [] },
        { name: 'members', use: 'members', short: 'Get the list of etcd cluster members', args: ['none'], flags: [], sim: 'etcd-members' },
        {
          name: 'remove-member',
          use: 'remove-member <member ID>',
          short: 'Remove the node from etcd cluster',
          args: ['exact', 1],
          flags: [],
          sim: 'etcd-remove-member',
        },
        { name: 'snapshot', use: 'snapshot <path>', short: 'Stream snapshot of the etcd node to the path.', args: ['exact', 1], flags: [] },
        {
          name: 'status',
          use: 'status',
          short: 'Get the status of etcd cluster member',
          long: 'Returns the status of etcd member on the node, use multiple nodes to get status of all members.',
          args: ['none'],
          flags: [],
          sim: 'etcd-status',
        },
      ],
    },
    {
      name: 'get',
      use: 'get <type> [<id>]',
      aliases: ['g'],
      global: true,
      group: 'talos',
      sim: 'get',
      short: "Get a specific resource or list of resources (use 'talosctl get rd' to see all available resource types).",
      long: "Similar to 'kubectl get', 'talosctl get' returns a set of resources from the OS.\nTo get a list of all available resource definitions, issue 'talosctl get rd'",
      args: ['range', 1, 2],
      flags: [
        { name: 'namespace', type: 'string', def: '', usage: 'resource namespace (default is to use default namespace per resource)' },
        { name: 'output', short: 'o', type: 'string', def: 'table', usage: 'output mode (json, table, yaml, jsonpath)' },
        { name: 'watch', short: 'w', type: 'bool', def: 'false', usage: 'watch resource changes' },
        {
          name: 'insecure',
          short: 'i',
          type: 'bool',
          def: 'false',
          usage: 'get resources using the insecure (encrypted with no auth) maintenance service',
        },
      ],
    },
    {
      name: 'image',
      use: 'image',
      aliases: ['images'],
      short: 'Manage container images',
      global: true,
      group: 'talos',
      args: ['none'],
      persistent: [
        {
          name: 'namespace',
          type: 'string',
          def: 'cri',
          usage:
            'namespace to use: "system" (etcd and kubelet images), "cri" for all Kubernetes workloads, "inmem" for in-memory containerd instance',
        },
      ],
      flags: [],
      children: [
        {
          name: 'cache-cert-gen',
          use: 'cache-cert-gen',
          short: 'Generate TLS certificates and CA patch required for securing image cache to Talos communication',
          args: ['none'],
          flags: [],
        },
        {
          name: 'cache-create',
          use: 'cache-create',
          short: 'Create a cache of images in OCI format into a directory',
          args: ['none'],
          flags: [],
        },
        {
          name: 'cache-serve',
          use: 'cache-serve',
          short: 'Serve an OCI image cache directory over HTTP(S) as a container registry',
          args: ['none'],
          flags: [],
        },
        {
          name: 'k8s-bundle',
          use: 'k8s-bundle',
          aliases: ['default'],
          short: 'List the default Kubernetes images used by Talos',
          flags: [],
        },
        {
          name: 'list',
          use: 'list',
          aliases: ['l', 'ls'],
          short: "List images in the machine's container runtime",
          args: ['none'],
          flags: [],
        },
        {
          name: 'pull',
          use: 'pull <image>',
          aliases: ['p'],
          short: "Pull an image into the machine's container runtime",
          args: ['exact', 1],
          flags: [],
          sim: 'image-pull',
        },
        {
          name: 'remove',
          use: 'remove <image>',
          aliases: ['rm'],
          short: "Remove an image from the machine's container runtime",
          args: ['exact', 1],
          flags: [],
          sim: 'image-remove',
        },
        {
          name: 'talos-bundle',
          use: 'talos-bundle [talos-version]',
          short: 'List the default system images and extensions used for Talos',
          flags: [],
        },
      ],
    },
    {
      name: 'list',
      use: 'list [path]',
      aliases: ['ls'],
      short: 'Retrieve a directory listing',
      global: true,
      group: 'talos',
      sim: 'ls',
      args: ['max', 1],
      flags: [
        { name: 'long', short: 'l', type: 'bool', def: 'false', usage: 'display additional file details' },
        { name: 'recurse', short: 'r', type: 'bool', def: 'false', usage: 'recurse into subdirectories' },
        { name: 'humanize', short: 'H', type: 'bool', def: 'false', usage: 'humanize size and time in the output' },
        { name: 'depth', short: 'd', type: 'int32', def: '1', usage: 'maximum recursion depth' },
        {
          name: 'type',
          short: 't',
          type: 'strings',
          def: '[]',
          usage: 'filter by specified types:\nf\tregular file\nd\tdirectory\nl, L\tsymbolic link',
        },
      ],
    },
    {
      name: 'patch',
      use: 'patch machineconfig',
      short: 'Patch machine configuration of a Talos node with a local patch.',
      global: true,
      group: 'talos',
      sim: 'patch',
      args: ['range', 1, 2],
      flags: [
        { name: 'namespace', type: 'string', def: '', usage: 'resource namespace (default is to use default namespace per resource)' },
        { name: 'patch-file', type: 'string', def: '', usage: 'a file containing a patch to be applied to the resource.' },
        {
          name: 'patch',
          short: 'p',
          type: 'stringArray',
          def: '[]',
          usage: 'the patch to be applied to the resource file, use @file to read a patch from file.',
        },
        { name: 'dry-run', type: 'bool', def: 'false', usage: 'print the change summary and patch preview without applying the changes' },
        {
          name: 'timeout',
          type: 'duration',
          def: '1m0s',
          usage: 'the config will be rolled back after specified timeout (if try mode is selected)',
        },
        {
          name: 'mode',
          short: 'm',
          type: 'custom',
          typeName: PATCH_MODES.join(', '),
          def: 'auto',
          usage: 'apply config mode',
          parse: (v) => {
            if (!PATCH_MODES.includes(v)) throw new Error(`possible options are: ${PATCH_MODES.join(', ')}`);
            return v;
          },
        },
      ],
    },
    {
      name: 'read',
      use: 'read <path>',
      aliases: ['cat'],
      short: 'Read a file on the machine',
      global: true,
      group: 'talos',
      sim: 'read',
      args: ['exact', 1],
      flags: [],
    },
    {
      name: 'reboot',
      use: 'reboot',
      short: 'Reboot a node',
      global: true,
      group: 'talos',
      sim: 'reboot',
      args: ['none'],
      flags: [
        {
          name: 'progress',
          type: 'string',
          def: 'auto',
          usage: 'output mode for upgrade progress. Values: [auto plain]',
          parse: choice(['auto', 'plain'], true),
        },
        {
          name: 'mode',
          short: 'm',
          type: 'string',
          def: 'default',
          usage: 'select the reboot mode during upgrade. Mode "powercycle" bypasses kexec. Values: [default force powercycle]',
          parse: choice(['default', 'force', 'powercycle'], true),
        },
        { name: 'drain', type: 'bool', def: 'false', usage: 'drain the Kubernetes node before rebooting (cordon + evict pods)' },
        { name: 'drain-timeout', type: 'duration', def: '5m0s', usage: 'timeout for draining the Kubernetes node' },
        {
          name: 'wait',
          type: 'bool',
          def: 'true',
          usage: 'wait for the operation to complete, tracking its progress. always set to true when --debug is set',
        },
        {
          name: 'debug',
          type: 'bool',
          def: 'false',
          usage: 'debug operation from kernel logs. --wait is set to true when this flag is set',
        },
        {
          name: 'timeout',
          type: 'duration',
          def: '30m0s',
          usage: 'time to wait for the operation is complete if --debug or --wait is set',
        },
      ],
    },
    {
      name: 'service',
      use: 'service [<id> [start|stop|restart|status]]',
      aliases: ['services'],
      global: true,
      group: 'talos',
      sim: 'service',
      short: 'Retrieve the state of a service (or all services), control service state',
      long: "Service control command. If run without arguments, lists all the services and their state.\nIf service ID is specified, default action 'status' is executed which shows status of a single list service.\nWith actions 'start', 'stop', 'restart', service state is updated respectively.",
      args: ['max', 2],
      flags: [],
    },
    {
      name: 'version',
      use: 'version',
      short: 'Prints the version',
      global: true,
      group: 'talos',
      sim: 'version',
      args: ['none'],
      flags: [
        { name: 'short', type: 'bool', def: 'false', usage: 'Print the short version' },
        { name: 'client', type: 'bool', def: 'false', usage: 'Print client version only' },
        { name: 'insecure', short: 'i', type: 'bool', def: 'false', usage: 'use Talos maintenance mode API' },
        { name: 'json', type: 'bool', def: 'false', usage: '', hidden: true },
      ],
    },
  ],
};

(function link(node, parent) {
  node.parent = parent;
  node.children = node.children || [];
  node.aliases = node.aliases || [];
  node.persistent = node.persistent || [];
  if (node.global) node.persistent = [...GLOBAL_FLAGS, ...node.persistent];
  for (const c of node.children) link(c, node);
})(TREE, null);

const path = (c) => (c.parent ? `${path(c.parent)} ${c.name}` : c.name);
const runnable = (c) => Boolean(c.sim) || c.children.length === 0;
const helpFlag = (c) => ({ name: 'help', short: 'h', type: 'bool', def: 'false', usage: `help for ${c.name}` });
const inherited = (c) => {
  const out = [];
  for (let p = c.parent; p; p = p.parent) for (const f of p.persistent) if (!out.some((o) => o.name === f.name)) out.push(f);
  return out;
};
const localFlags = (c) => [...c.flags, ...c.persistent, helpFlag(c)];
const allFlags = (c) => {
  const local = localFlags(c);
  return [...local, ...inherited(c).filter((f) => !local.some((l) => l.name === f.name))];
};

function goQuote(s) {
  return JSON.stringify(s);
}

function defaultIsZero(f) {
  switch (f.type) {
    case 'bool':
      return f.def === 'false' || f.def === '';
    case 'duration':
      return f.def === '0' || f.def === '0s';
    case 'int32':
      return f.def === '0';
    case 'string':
      return f.def === '';
    case 'strings':
    case 'stringArray':
      return f.def === '[]';
    default:
      return ['false', '<nil>', '', '0'].includes(f.def);
  }
}

function varName(f) {
  switch (f.type) {
    case 'bool':
      return '';
    case 'custom':
      return f.typeName;
    default:
      return f.type;
  }
}

/** pflag FlagSet.FlagUsages with no wrapping (talosctl never sets a column width). */
function flagUsages(flags) {
  const sorted = flags.filter((f) => !f.hidden).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let maxlen = 0;
  const lines = [];
  for (const f of sorted) {
    let line = f.short ? `  -${f.short}, --${f.name}` : `      --${f.name}`;
    const v = varName(f);
    if (v) line += ` ${v}`;
    line += '\u0000';
    if (line.length > maxlen) maxlen = line.length;
    let usage = f.usage;
    if (!defaultIsZero(f)) usage += f.type === 'string' ? ` (default ${goQuote(f.def)})` : ` (default ${f.def})`;
    lines.push(line + usage);
  }
  let out = '';
  for (const line of lines) {
    const sidx = line.indexOf('\u0000');
    const rest = line
      .slice(sidx + 1)
      .split('\n')
      .join(`\n${' '.repeat(maxlen + 2)}`);
    out += `${line.slice(0, sidx)} ${' '.repeat(maxlen - sidx)} ${rest}\n`;
  }
  return out;
}

function rpad(s, n) {
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

function useLine(c) {
  const useline = c.parent ? `${path(c.parent)} ${c.use}` : c.use;
  return useline.includes('[flags]') ? useline : `${useline} [flags]`;
}

function available(c) {
  return !c.hidden && (runnable(c) || c.children.some(available));
}

/** cobra's default usage template, rendered for command c. */
function usageString(c) {
  let s = 'Usage:';
  const subs = c.children.filter(available);
  if (runnable(c)) s += `\n  ${useLine(c)}`;
  if (subs.length) s += `\n  ${path(c)} [command]`;
  if (c.aliases.length) s += `\n\nAliases:\n  ${[c.name, ...c.aliases].join(', ')}`;
  if (subs.length) {
    // The root lists cobra's own `completion` and `help` under "Additional Commands"; groupless.
    const extra = c.parent
      ? []
      : [
          { name: 'completion', short: 'Generate the autocompletion script for the specified shell' },
          { name: 'help', short: 'Help about any command' },
        ];
    const all = [...subs, ...extra];
    const padding = Math.max(11, ...all.map((x) => x.name.length));
    if (c.groups) {
      for (const g of c.groups) {
        s += `\n\n${g.title}`;
        for (const x of subs) if (x.group === g.id) s += `\n  ${rpad(x.name, padding)} ${x.short}`;
      }
      s += '\n\nAdditional Commands:';
      for (const x of extra) s += `\n  ${rpad(x.name, padding)} ${x.short}`;
    } else {
      s += '\n\nAvailable Commands:';
      for (const x of subs) s += `\n  ${rpad(x.name, padding)} ${x.short}`;
    }
  }
  s += `\n\nFlags:\n${flagUsages(localFlags(c)).replace(/\s+$/, '')}`;
  const inh = inherited(c);
  if (inh.length) s += `\n\nGlobal Flags:\n${flagUsages(inh).replace(/\s+$/, '')}`;
  if (subs.length) s += `\n\nUse "${path(c)} [command] --help" for more information about a command.`;
  return `${s}\n`;
}

function helpText(c) {
  const head = (c.long || c.short || '').replace(/\s+$/, '');
  return (head ? `${head}\n\n` : '') + usageString(c);
}

function findChild(c, name) {
  return c.children.find((x) => x.name === name || x.aliases.includes(name));
}

function flagTakesValue(flags, name, isShort) {
  const f = flags.find((x) => (isShort ? x.short === name : x.name === name));
  // Unknown flags are assumed to take a value, as cobra's stripFlags does.
  return !f || f.type !== 'bool';
}

/** cobra's stripFlags: the words of args that look like subcommand names. */
function stripFlags(args, c) {
  const flags = allFlags(c);
  const commands = [];
  const a = [...args];
  while (a.length) {
    const s = a.shift();
    if (s === '--') break;
    const longNoEq = s.startsWith('--') && !s.includes('=') && flagTakesValue(flags, s.slice(2), false);
    const shortNoEq =
      !s.startsWith('--') && s.startsWith('-') && !s.includes('=') && s.length === 2 && flagTakesValue(flags, s.slice(1), true);
    if (longNoEq || shortNoEq) {
      if (a.length <= 1) break;
      a.shift();
      continue;
    }
    if (s !== '' && !s.startsWith('-')) commands.push(s);
  }
  return commands;
}

/** cobra's argsMinusFirstX: args without the first occurrence of x that is not a flag value. */
function argsMinusFirstX(args, x, c) {
  const flags = allFlags(c);
  for (let pos = 0; pos < args.length; pos++) {
    const s = args[pos];
    if (s === '--') break;
    if (s.startsWith('--') && !s.includes('=') && flagTakesValue(flags, s.slice(2), false)) {
      pos++;
      continue;
    }
    if (!s.startsWith('--') && s.startsWith('-') && !s.includes('=') && s.length === 2 && flagTakesValue(flags, s.slice(1), true)) {
      pos++;
      continue;
    }
    if (s === x) return [...args.slice(0, pos), ...args.slice(pos + 1)];
  }
  return args;
}

function levenshtein(a, b) {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const d = Array.from({ length: s.length + 1 }, (_, i) => [i, ...Array(t.length).fill(0)]);
  for (let j = 1; j <= t.length; j++) d[0][j] = j;
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (s[i - 1] === t[j - 1] ? 0 : 1));
    }
  }
  return d[s.length][t.length];
}

function suggestions(c, typed) {
  const found = [];
  for (const x of c.children) {
    if (!available(x)) continue;
    if (levenshtein(typed, x.name) <= 2 || x.name.toLowerCase().startsWith(typed.toLowerCase())) found.push(x.name);
  }
  if (!found.length) return '';
  return `\n\nDid you mean this?\n${found.map((n) => `\t${n}\n`).join('')}`;
}

class CliError extends Error {
  constructor(message, cmd) {
    super(message);
    this.cmd = cmd;
  }
}

function parseDuration(s) {
  // Go time.ParseDuration, enough for talosctl flags: "90s", "1m30s", "1.5h", "500ms", "0".
  const orig = s;
  if (s === '0') return 0;
  let neg = false;
  if (s[0] === '-' || s[0] === '+') {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '') throw new Error(`time: invalid duration ${goQuote(orig)}`);
  const units = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60000, h: 3600000 };
  let total = 0;
  const re = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;
  while (s.length) {
    const m = re.exec(s);
    if (!m) {
      if (/^(\d+(?:\.\d*)?|\.\d+)$/.test(s)) throw new Error(`time: missing unit in duration ${goQuote(orig)}`);
      const u = /^(\d+(?:\.\d*)?|\.\d+)([^\d.]+)/.exec(s);
      if (u) throw new Error(`time: unknown unit ${goQuote(u[2])} in duration ${goQuote(orig)}`);
      throw new Error(`time: invalid duration ${goQuote(orig)}`);
    }
    total += Number(m[1]) * units[m[2]];
    s = s.slice(m[0].length);
  }
  return neg ? -total : total;
}

function setFlag(f, value, values) {
  try {
    switch (f.type) {
      case 'bool': {
        const v = {
          1: true,
          t: true,
          T: true,
          TRUE: true,
          true: true,
          True: true,
          0: false,
          f: false,
          F: false,
          FALSE: false,
          false: false,
          False: false,
        }[value];
        if (v === undefined) throw new Error(`strconv.ParseBool: parsing ${goQuote(value)}: invalid syntax`);
        values[f.name] = v;
        break;
      }
      case 'int32': {
        if (!/^[+-]?\d+$/.test(value)) throw new Error(`strconv.ParseInt: parsing ${goQuote(value)}: invalid syntax`);
        values[f.name] = Number(value);
        break;
      }
      case 'duration':
        values[f.name] = parseDuration(value);
        break;
      case 'strings': {
        const parts = value === '' ? [] : value.split(',');
        values[f.name] = values.__changed.has(f.name) ? [...values[f.name], ...parts] : parts;
        break;
      }
      case 'stringArray':
        values[f.name] = values.__changed.has(f.name) ? [...values[f.name], value] : [value];
        break;
      default:
        values[f.name] = f.parse ? f.parse(value) : value;
    }
  } catch (e) {
    const name = f.short ? `-${f.short}, --${f.name}` : `--${f.name}`;
    throw new Error(`invalid argument ${goQuote(value)} for ${goQuote(name)} flag: ${e.message}`);
  }
  values.__changed.add(f.name);
}

function defaultValue(f) {
  switch (f.type) {
    case 'bool':
      return f.def === 'true';
    case 'int32':
      return Number(f.def);
    case 'duration':
      return parseDuration(f.def);
    case 'strings':
    case 'stringArray':
      return [];
    default:
      return f.def;
  }
}

/** pflag FlagSet.Parse with interspersed arguments. */
function parseFlags(c, args) {
  const flags = allFlags(c);
  const values = { __changed: new Set() };
  for (const f of flags) values[f.name] = defaultValue(f);
  const positional = [];
  const a = [...args];
  while (a.length) {
    const s = a.shift();
    if (s.length === 0 || s[0] !== '-' || s.length === 1) {
      positional.push(s);
      continue;
    }
    if (s[1] === '-') {
      if (s.length === 2) {
        positional.push(...a);
        break;
      }
      let name = s.slice(2);
      if (name.length === 0 || name[0] === '-' || name[0] === '=') throw new Error(`bad flag syntax: ${s}`);
      const eq = name.indexOf('=');
      let value;
      if (eq >= 0) {
        value = name.slice(eq + 1);
        name = name.slice(0, eq);
      }
      const f = flags.find((x) => x.name === name);
      if (!f) throw new Error(`unknown flag: --${name}`);
      if (value === undefined) {
        if (f.type === 'bool') value = 'true';
        else if (a.length) value = a.shift();
        else throw new Error(`flag needs an argument: ${s}`);
      }
      setFlag(f, value, values);
    } else {
      let shorts = s.slice(1);
      while (shorts.length) {
        const ch = shorts[0];
        const f = flags.find((x) => x.short === ch);
        if (!f) throw new Error(`unknown shorthand flag: '${ch}' in -${shorts}`);
        let value;
        let rest = shorts.slice(1);
        if (shorts.length > 2 && shorts[1] === '=') {
          value = shorts.slice(2);
          rest = '';
        } else if (f.type === 'bool') value = 'true';
        else if (shorts.length > 1) {
          value = shorts.slice(1);
          rest = '';
        } else if (a.length) value = a.shift();
        else throw new Error(`flag needs an argument: '${ch}' in -${shorts}`);
        setFlag(f, value, values);
        shorts = rest;
      }
    }
  }
  return { values, positional };
}

function validateArgs(c, args) {
  const spec = c.args;
  if (!spec) return;
  const n = args.length;
  switch (spec[0]) {
    case 'none':
      if (n > 0) throw new Error(`unknown command ${goQuote(args[0])} for ${goQuote(path(c))}`);
      break;
    case 'max':
      if (n > spec[1]) throw new Error(`accepts at most ${spec[1]} arg(s), received ${n}`);
      break;
    case 'exact':
      if (n !== spec[1]) throw new Error(`accepts ${spec[1]} arg(s), received ${n}`);
      break;
    case 'range':
      if (n < spec[1] || n > spec[2]) throw new Error(`accepts between ${spec[1]} and ${spec[2]} arg(s), received ${n}`);
      break;
    default:
  }
}

/**
 * Parses argv (without the program name) like talosctl's cobra tree.
 * Returns { kind: 'help', text } | { kind: 'error', message, usage } | { kind: 'run', ... }.
 */
function parse(argv) {
  // Find: walk the tree by the non-flag words, as cobra does.
  let c = TREE;
  let rest = argv;
  for (;;) {
    const words = stripFlags(rest, c);
    if (!words.length) break;
    const next = findChild(c, words[0]);
    if (!next) break;
    rest = argsMinusFirstX(rest, words[0], c);
    c = next;
  }
  if (!c.args && c.children.length) {
    const words = stripFlags(rest, c);
    if (!c.parent && words.length) {
      return errorResult(new CliError(`unknown command ${goQuote(words[0])} for ${goQuote(path(c))}${suggestions(c, words[0])}`, c));
    }
  }
  let parsed;
  try {
    parsed = parseFlags(c, rest);
  } catch (e) {
    return errorResult(new CliError(e.message, c));
  }
  if (parsed.values.help) return { kind: 'help', text: helpText(c) };
  if (!runnable(c)) return { kind: 'help', text: helpText(c) };
  try {
    validateArgs(c, parsed.positional);
  } catch (e) {
    return errorResult(new CliError(e.message, c));
  }
  const { __changed, ...values } = parsed.values;
  return {
    kind: 'run',
    command: c.sim || null,
    commandPath: path(c),
    args: parsed.positional,
    flags: values,
    changed: [...__changed],
  };
}

/** What talosctl's Execute prints for an error returned from command c (no "Error:" prefix). */
function errorText(message, cmd) {
  let out = `${message}\n`;
  if (/arg\(s\)|flag|command/.test(message)) out += `\n${usageString(cmd || TREE)}\n`;
  return out;
}

function errorResult(err) {
  return { kind: 'error', message: err.message, stderr: errorText(err.message, err.cmd), commandPath: path(err.cmd) };
}

function commandByPath(p) {
  let c = TREE;
  for (const w of p.split(' ').slice(1)) c = findChild(c, w) || c;
  return c;
}

module.exports = { parse, errorText, usageString, helpText, commandByPath, parseDuration, TREE };
