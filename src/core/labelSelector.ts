// A label selector string (`pool=blue`, `tier in (a,b),!spot`) parsed and matched as the apiserver does
// it for `kubectl get nodes -l`, so the run lists every node once and picks the selection out of that
// one listing (the old-credential verdict judges every node; a second, filtered listing would cost a
// kubectl process per pass). The grammar, tokens, keywords, validation and matching follow
// k8s.io/apimachinery pkg/labels/selector.go (Lexer, Parser.parse, NewRequirement, Requirement.Matches)
// and pkg/util/validation/validation.go (IsQualifiedName, IsValidLabelValue); the error texts are its
// own, so a person reads what kubectl would have printed. No I/O.

export type LabelOperator = 'exists' | 'doesNotExist' | '=' | '==' | '!=' | 'in' | 'notin' | '>' | '<';

/** One requirement of a selector: all must match. */
export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

/** A parsed `node-selector`: its text as given and its requirements (empty: every node). */
export interface LabelSelectorInput {
  text: string;
  requirements: LabelRequirement[];
}

type Token = 'end' | 'ident' | 'in' | 'notin' | '(' | ')' | ',' | '!' | '=' | '==' | '!=' | '>' | '<';

const SYMBOLS: ReadonlySet<string> = new Set(['(', ')', ',', '!', '=', '==', '!=', '>', '<']);
const isSpecial = (ch: string) => '=!(),><'.includes(ch);
const isWhitespace = (ch: string) => ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';

/** The lexer's tokens, in order, ending with `end` (selector.go Lexer.Lex). */
function scan(s: string): Array<{ tok: Token; lit: string }> {
  const out: Array<{ tok: Token; lit: string }> = [];
  let i = 0;
  for (;;) {
    while (i < s.length && isWhitespace(s[i])) i++;
    if (i >= s.length) {
      out.push({ tok: 'end', lit: '' });
      return out;
    }
    if (isSpecial(s[i])) {
      // the longest symbol: `!=` and `==` before `!` and `=`
      const two = s.slice(i, i + 2);
      const lit = SYMBOLS.has(two) ? two : s[i];
      i += lit.length;
      out.push({ tok: lit as Token, lit });
      continue;
    }
    let j = i;
    while (j < s.length && !isSpecial(s[j]) && !isWhitespace(s[j])) j++;
    const lit = s.slice(i, j);
    i = j;
    out.push({ tok: lit === 'in' || lit === 'notin' ? lit : 'ident', lit });
  }
}

const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const NAME_TEXT = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** validation.IsQualifiedName: `[prefix/]name`, the prefix a DNS-1123 subdomain. Empty: valid. */
function keyProblems(key: string): string[] {
  const parts = key.split('/');
  const problems: string[] = [];
  let name = key;
  if (parts.length === 2) {
    const [prefix] = parts;
    name = parts[1];
    if (prefix.length === 0) problems.push('prefix part must be non-empty');
    else if (prefix.length > 253) problems.push('prefix part must be no more than 253 bytes');
    else if (!DNS1123_SUBDOMAIN.test(prefix)) {
      problems.push(
        `prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
      );
    }
  } else if (parts.length > 2) {
    return [`a qualified name ${NAME_TEXT} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  if (name.length === 0) problems.push('name part must be non-empty');
  else if (name.length > 63) problems.push('name part must be no more than 63 bytes');
  else if (!NAME.test(name)) problems.push(`name part ${NAME_TEXT}`);
  return problems;
}

/** validation.IsValidLabelValue: empty, or at most 63 characters of the name's alphabet. */
function valueProblems(value: string): string[] {
  if (value.length > 63) return ['must be no more than 63 bytes'];
  if (value !== '' && !NAME.test(value)) return [`a valid label ${NAME_TEXT}`];
  return [];
}

const BINARY_OPERATORS = 'in, notin, =, ==, !=, gt, lt';

/**
 * Parses `text` as the apiserver parses `labelSelector` (labels.Parse). Throws an Error with the
 * apiserver's words on a selector it would refuse; an empty or blank text selects every node.
 */
export function parseLabelSelector(text: string): LabelSelectorInput {
  const items = scan(text);
  let pos = 0;
  // in the values context the keywords are plain identifiers (`x in (in)`)
  const peek = (values: boolean) => {
    const t = items[pos];
    return { tok: values && (t.tok === 'in' || t.tok === 'notin') ? ('ident' as Token) : t.tok, lit: t.lit };
  };
  const take = (values: boolean) => {
    const t = peek(values);
    pos++;
    return t;
  };
  const fail = (why: string): never => {
    throw new Error(`unable to parse requirement: ${why}`);
  };

  const requirement = (): LabelRequirement => {
    let t = take(true);
    let negated = false;
    if (t.tok === '!') {
      negated = true;
      t = take(true);
    }
    if (t.tok !== 'ident') fail(`found '${t.lit}', expected: identifier`);
    const key = t.lit;
    const keyErrs = keyProblems(key);
    if (keyErrs.length) fail(`key: Invalid value: ${JSON.stringify(key)}: ${keyErrs.join('; ')}`);
    // `!key` is complete: what follows must be `,` or the end (the loop below says so otherwise)
    if (negated) return { key, operator: 'doesNotExist', values: [] };
    const next = peek(true).tok;
    if (next === 'end' || next === ',') return { key, operator: 'exists', values: [] };
    const op = take(false);
    let operator: LabelOperator;
    if (op.tok === 'in' || op.tok === 'notin' || op.tok === '=' || op.tok === '==' || op.tok === '!=' || op.tok === '>' || op.tok === '<') {
      operator = op.tok;
    } else {
      return fail(`found '${op.lit}', expected: ${BINARY_OPERATORS}`);
    }
    const values = operator === 'in' || operator === 'notin' ? setValues() : [exactValue()];
    values.forEach((v, i) => {
      const errs = valueProblems(v);
      if (errs.length) fail(`values[${i}][${key}]: Invalid value: ${JSON.stringify(v)}: ${errs.join('; ')}`);
    });
    if ((operator === '>' || operator === '<') && int64(values[0]) === undefined) {
      fail(`values[0]: Invalid value: ${JSON.stringify(values[0])}: for 'Gt', 'Lt' operators, the value must be an integer`);
    }
    return { key, operator, values };
  };

  // parseValues / parseIdentifiersList: `(a,b)`, `()` and empty members are the empty string
  const setValues = (): string[] => {
    const open = take(true);
    if (open.tok !== '(') fail(`found '${open.lit}' expected: '('`);
    const first = peek(true);
    if (first.tok === ')') {
      take(true);
      return [''];
    }
    if (first.tok !== 'ident' && first.tok !== ',') fail(`found '${first.lit}', expected: ',', ')' or identifier`);
    const set = new Set<string>();
    for (;;) {
      const t = take(true);
      if (t.tok === 'ident') {
        set.add(t.lit);
        const after = peek(true);
        if (after.tok === ',') continue;
        if (after.tok === ')') break;
        fail(`found '${after.lit}', expected: ',' or ')'`);
      } else if (t.tok === ',') {
        if (set.size === 0) set.add('');
        const after = peek(true);
        if (after.tok === ')') {
          set.add('');
          break;
        }
        if (after.tok === ',') {
          take(true);
          set.add('');
        }
      } else {
        fail(`found '${t.lit}', expected: ',', or identifier`);
      }
    }
    const close = take(true);
    if (close.tok !== ')') fail(`found '${first.lit}', expected: ')'`);
    return [...set].sort();
  };

  const exactValue = (): string => {
    const t = peek(true);
    if (t.tok === 'end' || t.tok === ',') return '';
    take(true);
    if (t.tok !== 'ident') fail(`found '${t.lit}', expected: identifier`);
    return t.lit;
  };

  const requirements: LabelRequirement[] = [];
  for (;;) {
    const t = peek(true);
    if (t.tok === 'end') break;
    if (t.tok !== 'ident' && t.tok !== '!') throw new Error(`found '${t.lit}', expected: !, identifier, or 'end of string'`);
    requirements.push(requirement());
    const sep = take(true);
    if (sep.tok === 'end') break;
    if (sep.tok !== ',') throw new Error(`found '${sep.lit}', expected: ',' or 'end of string'`);
    const after = peek(true);
    if (after.tok !== 'ident' && after.tok !== '!') throw new Error(`found '${after.lit}', expected: identifier after ','`);
  }
  return { text, requirements };
}

/** Requirement.Matches for every requirement: does a node with `labels` match the selector? */
export function matchesLabels(selector: LabelSelectorInput, labels: Readonly<Record<string, string>>): boolean {
  return selector.requirements.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(labels, r.key);
    const value = has ? labels[r.key] : undefined;
    switch (r.operator) {
      case 'exists':
        return has;
      case 'doesNotExist':
        return !has;
      case '=':
      case '==':
      case 'in':
        return has && r.values.includes(value!);
      case '!=':
      case 'notin':
        return !has || !r.values.includes(value!);
      case '>':
      case '<': {
        // strconv.ParseInt(value, 10, 64): a label that is not an integer never matches
        const n = has ? int64(value!) : undefined;
        const bound = int64(r.values[0]);
        if (n === undefined || bound === undefined) return false;
        return r.operator === '>' ? n > bound : n < bound;
      }
    }
  });
}

/** strconv.ParseInt(s, 10, 64): undefined when it is not a base-10 integer within int64. */
function int64(s: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? n : undefined;
}
