// The one POSIX shell quoter, for every command line a person reads or pastes: the commands in the
// log (src/adapters/exec.ts) and the printed recovery commands (src/rules/commands.ts). Pure.

/** One argument for a POSIX shell, always single-quoted (a `'` inside becomes `'\''`). */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** One argument for a POSIX shell, quoted only when it holds anything but plain word characters. */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : shellQuote(s);
}
