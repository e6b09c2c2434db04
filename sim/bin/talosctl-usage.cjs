'use strict';
// The help and usage texts of talosctl v1.13.8, laid out as cobra v1.10's default usage template and
// pflag v1.0.10's FlagUsages print them.
const { goQuote } = require('./gostd.cjs');
const { available, inherited, localFlags, path, runnable } = require('./talosctl-tree.cjs');

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

module.exports = { usageString, helpText };
