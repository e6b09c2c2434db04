// Label and field selectors as the apiserver parses them (k8s.io/apimachinery/pkg/labels, pkg/fields).
import { badRequest } from './status.js';

type Labels = Record<string, string> | undefined;

interface Requirement {
  key: string;
  op: 'exists' | '!' | '=' | '!=' | 'in' | 'notin' | 'gt' | 'lt';
  values: string[];
}

export type LabelMatcher = (labels: Labels) => boolean;

function matches(r: Requirement, labels: Labels): boolean {
  const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = has ? labels![r.key]! : undefined;
  switch (r.op) {
    case 'exists':
      return has;
    case '!':
      return !has;
    case '=':
    case 'in':
      return has && r.values.includes(v!);
    case '!=':
    case 'notin':
      return !has || !r.values.includes(v!);
    case 'gt':
    case 'lt': {
      if (!has || !/^-?\d+$/.test(v!)) return false;
      const n = Number(v);
      const m = Number(r.values[0]);
      return r.op === 'gt' ? n > m : n < m;
    }
  }
}

/** Parses `a=b,c!=d,e,!f,g in (x,y),h notin (z)`; throws a 400 ApiError like the apiserver. */
export function parseLabelSelector(sel: string | undefined | null): LabelMatcher {
  if (!sel || !sel.trim()) return () => true;
  const reqs: Requirement[] = [];
  let i = 0;
  const s = sel;
  const err = (why: string) => badRequest(`unable to parse requirement: ${why}`);
  const ws = () => {
    while (i < s.length && /\s/.test(s[i]!)) i++;
  };
  const ident = () => {
    ws();
    const m = /^[A-Za-z0-9_./-]*/.exec(s.slice(i))![0];
    i += m.length;
    return m;
  };
  while (i <= s.length) {
    ws();
    let neg = false;
    if (s[i] === '!') {
      neg = true;
      i++;
    }
    const key = ident();
    if (!key) throw err(`found '${s[i] ?? ''}', expected: identifier`);
    ws();
    if (neg) {
      reqs.push({ key, op: '!', values: [] });
    } else if (i >= s.length || s[i] === ',') {
      reqs.push({ key, op: 'exists', values: [] });
    } else if (s.startsWith('==', i) || s.startsWith('!=', i)) {
      const op = s.startsWith('==', i) ? '=' : '!=';
      i += 2;
      reqs.push({ key, op, values: [ident()] });
    } else if (s[i] === '=' || s[i] === '>' || s[i] === '<') {
      const c = s[i++]!;
      const v = ident();
      if (c !== '=' && !/^-?\d+$/.test(v)) throw err(`for 'Gt', 'Lt' operators, the value must be an integer`);
      reqs.push({ key, op: c === '=' ? '=' : c === '>' ? 'gt' : 'lt', values: [v] });
    } else {
      const word = /^(notin|in)\s*\(/.exec(s.slice(i));
      if (!word) throw err(`found '${s.slice(i).split(/[\s,]/)[0]}', expected: in, notin, =, ==, !=, gt, lt`);
      i += word[0].length;
      const values: string[] = [];
      for (;;) {
        values.push(ident());
        ws();
        if (s[i] === ',') {
          i++;
          continue;
        }
        if (s[i] === ')') {
          i++;
          break;
        }
        throw err(`found '${s[i] ?? ''}', expected: ',', ')' or identifier`);
      }
      reqs.push({ key, op: word[1] === 'in' ? 'in' : 'notin', values });
    }
    ws();
    if (i >= s.length) break;
    if (s[i] !== ',') throw err(`found '${s[i]}', expected: ',' or 'end of string'`);
    i++;
  }
  return (labels) => reqs.every((r) => matches(r, labels));
}

export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

export function matchLabelSelector(sel: LabelSelectorObject | undefined, labels: Labels): boolean {
  if (!sel) return false;
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (labels?.[k] !== v) return false;
  for (const e of sel.matchExpressions ?? []) {
    const op = ({ In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' } as const)[e.operator as 'In'];
    if (!op) return false;
    if (!matches({ key: e.key, op, values: e.values ?? [] }, labels)) return false;
  }
  return true;
}

export type FieldGetter = (obj: any) => string;
export type FieldMatcher = (obj: any) => boolean;

function unescapeField(v: string): string {
  return v.replace(/\\(.)/g, '$1');
}

/** `metadata.name=x,spec.nodeName!=y`; fields outside `supported` answer 400 like the apiserver. */
export function parseFieldSelector(sel: string | undefined | null, supported: Record<string, FieldGetter>): FieldMatcher {
  if (!sel || !sel.trim()) return () => true;
  const terms = sel.split(/(?<!\\),/).filter((t) => t.length > 0);
  const checks: FieldMatcher[] = [];
  for (const term of terms) {
    const m = /^([^=!]+?)(==|!=|=)(.*)$/.exec(term.trim());
    if (!m) throw badRequest(`invalid selector: '${sel}'; can't understand '${term}'`);
    const [, field, op, raw] = m;
    const get = supported[field!];
    if (!get) throw badRequest(`field label not supported: ${field}`);
    const value = unescapeField(raw!);
    checks.push(op === '!=' ? (o) => get(o) !== value : (o) => get(o) === value);
  }
  return (o) => checks.every((c) => c(o));
}
