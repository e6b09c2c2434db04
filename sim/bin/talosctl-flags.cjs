'use strict';
// Flag values as pflag v1.0.10 parses them for talosctl v1.13.8: each flag's type (bool, string,
// strings, int, duration, choices), defaults, the error texts of a bad value or an unknown flag, and the
// argument-count checks of cobra's positional-args validators.
const { goQuote, parseDuration } = require('./gostd.cjs');
const { allFlags, path } = require('./talosctl-tree.cjs');

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

module.exports = { parseFlags, validateArgs };
