'use strict';
// The two pieces of Go's standard library whose behaviour talosctl's texts and flags show: strconv's
// quoting (%q, as cobra and pflag quote names and values in their messages) and time.ParseDuration.

function goQuote(s) {
  return JSON.stringify(s);
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

module.exports = { goQuote, parseDuration };
