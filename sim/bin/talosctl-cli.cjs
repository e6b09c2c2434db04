'use strict';
// Command-line parsing of talosctl v1.13.8 (cobra v1.10 + pflag v1.0.10), done in the client because
// the real binary rejects bad flags, bad argument counts and unknown commands before it reads any
// config or dials anything, so these errors must work even when no sim is reachable.
// Texts, usage layout and flag tables follow cmd/talosctl at v1.13.8.
// The command tree is in talosctl-tree.cjs (its commands in talosctl-commands.cjs), the help texts in
// talosctl-usage.cjs, flag values in talosctl-flags.cjs; this file finds the command as cobra does and
// returns what to run, or the help or error text.

const { goQuote, parseDuration } = require('./gostd.cjs');
const { TREE, path, runnable, available, allFlags, findChild, commandByPath } = require('./talosctl-tree.cjs');
// The help and usage texts are loaded only when one is printed: a call that runs never needs them.
const usage = () => require('./talosctl-usage.cjs');
const usageString = (c) => usage().usageString(c);
const helpText = (c) => usage().helpText(c);
const { parseFlags, validateArgs } = require('./talosctl-flags.cjs');

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

module.exports = { parse, errorText, usageString, helpText, commandByPath, parseDuration, TREE };
