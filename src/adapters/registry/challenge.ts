// The `WWW-Authenticate` challenge of a registry's 401 (RFC 7235 §4.1: `scheme param=value, …`,
// values a token or a quoted string), parsed into what the token flow needs: Bearer's realm, service
// and scope (docker/distribution docs/spec/auth/token.md), or Basic. Pure.

export interface Challenge {
  /** lowercased: `bearer`, `basic`, … */
  scheme: string;
  /** parameter names lowercased, values unquoted */
  params: Record<string, string>;
}

/**
 * Every challenge in the header value, in order. A header sent twice reaches Node joined with `, `,
 * so a token without `=` after a comma starts the next challenge.
 */
export function parseChallenges(header: string): Challenge[] {
  const out: Challenge[] = [];
  let i = 0;
  const s = header;
  const skip = (re: RegExp) => {
    while (i < s.length && re.test(s[i])) i++;
  };
  const token = () => {
    const start = i;
    skip(/[!#$%&'*+\-.^_`|~0-9A-Za-z]/);
    return s.slice(start, i);
  };
  while (i < s.length) {
    skip(/[\s,]/);
    const scheme = token();
    if (!scheme) break;
    const challenge: Challenge = { scheme: scheme.toLowerCase(), params: {} };
    out.push(challenge);
    for (;;) {
      skip(/[\s]/);
      const mark = i;
      skip(/[,\s]/);
      const name = token();
      skip(/\s/);
      if (!name || s[i] !== '=') {
        // not a parameter: the next challenge's scheme (or the end)
        i = mark;
        break;
      }
      i++;
      skip(/\s/);
      let value = '';
      if (s[i] === '"') {
        for (i++; i < s.length && s[i] !== '"'; i++) value += s[i] === '\\' && i + 1 < s.length ? s[++i] : s[i];
        i++;
      } else {
        const start = i;
        while (i < s.length && s[i] !== ',' && !/\s/.test(s[i])) i++;
        value = s.slice(start, i);
      }
      challenge.params[name.toLowerCase()] = value;
    }
    // a scheme followed by a token68 (`Negotiate abc=`) or junk: skip to the next comma
    while (i < s.length && s[i] !== ',') i++;
  }
  return out;
}

/** The challenge the flow answers: Bearer with a realm first, else Basic; undefined: none it can answer. */
export function usableChallenge(header: string | undefined): Challenge | undefined {
  const all = parseChallenges(header ?? '');
  return all.find((c) => c.scheme === 'bearer' && c.params.realm) ?? all.find((c) => c.scheme === 'basic');
}
