'use strict';
// talosctl's cobra tree (v1.13.8): the root command with the global flags, its commands
// (talosctl-commands.cjs) linked to their parents, and what is asked of a command: its path, whether
// it runs, the flags in scope, a child by name or alias.
const { COMMANDS } = require('./talosctl-commands.cjs');

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
// sim: which server-side command implements it; undefined = listed for help/usage, not simulated.
const TREE = {
  name: 'talosctl',
  use: 'talosctl',
  short: 'A CLI for out-of-band management of Kubernetes nodes created by Talos',
  groups: [{ id: 'talos', title: 'Manage running Talos clusters:' }],
  flags: [],
  children: COMMANDS,
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
const available = (c) => !c.hidden && (runnable(c) || c.children.some(available));

function findChild(c, name) {
  return c.children.find((x) => x.name === name || x.aliases.includes(name));
}

function commandByPath(p) {
  let c = TREE;
  for (const w of p.split(' ').slice(1)) c = findChild(c, w) || c;
  return c;
}

module.exports = { TREE, path, runnable, available, helpFlag, inherited, localFlags, allFlags, findChild, commandByPath };
