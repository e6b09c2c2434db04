// The one error every talosctl output parser throws. The adapter turns it into cause 'unparseable',
// so a format drift (a new talosctl, a different column) is reported as such and never guessed around.

export class ParseError extends Error {
  /** which output format was being parsed, e.g. `ls -l`, `service` */
  readonly format: string;

  constructor(format: string, message: string) {
    super(`${format}: ${message}`);
    this.name = 'ParseError';
    this.format = format;
  }
}

/** A bounded, quoted excerpt of the offending text: enough to recognise it, never a whole output. */
export function excerpt(text: string, max = 120): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  return JSON.stringify(cut);
}
