import { describe, expect, it } from 'vitest';
import type { AuthFields } from '../../src/core/model/credential.js';
import { MIN_DERIVED, REDACTED, Redactor, secretForms } from '../../src/core/redact.js';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const cred: AuthFields = { username: 'acme-bot', password: 'new-token-2026-11', auth: '', identitytoken: '' };

describe('secretForms', () => {
  const forms = secretForms([cred]);
  it.each([
    ['the password', 'new-token-2026-11'],
    ['user:password', 'acme-bot:new-token-2026-11'],
    ['base64(password)', b64('new-token-2026-11')],
    ['base64(user:password)', b64('acme-bot:new-token-2026-11')],
  ])('includes %s', (_what, value) => expect(forms).toContain(value));

  it('never the username alone', () => expect(forms).not.toContain('acme-bot'));

  it('an auth string, what it decodes to, and the password inside it', () => {
    const auth = b64('robot$acme:pa"ss\\word');
    const f = secretForms([{ username: '', password: '', auth, identitytoken: '' }]);
    expect(f).toEqual(expect.arrayContaining([auth, 'robot$acme:pa"ss\\word', 'pa"ss\\word', 'pa\\"ss\\\\word', 'pa%22ss%5Cword']));
  });

  it('an identity token', () => {
    expect(secretForms([{ username: '', password: '', auth: '', identitytoken: 'eyJhbGciOi.tok' }])).toContain('eyJhbGciOi.tok');
  });

  it('no derived fragment short enough to match unrelated text', () => {
    const f = secretForms([{ username: 'u', password: 'abc', auth: '', identitytoken: '' }]);
    expect(f).toContain('abc');
    expect(f.filter((x) => x !== 'abc' && x !== 'u:abc').every((x) => x.length >= MIN_DERIVED)).toBe(true);
  });

  it('a short password is registered whole, its derived forms only from the floor up; what it masks is the password alone', () => {
    // `bin` in base64 at the three alignments (`Ymlu`, `Jpbm`, `iaW`) sits inside ordinary base64 text
    const f = secretForms([{ username: '', password: 'bin', auth: '', identitytoken: '' }]);
    expect(f.sort()).toEqual([':bin', 'bin', 'OmJpbg=='].sort());
    const cert = 'MIIBYmluZm9Jpbm9iaWxl';
    expect(new Redactor(f).redact(`crt: ${cert}`)).toBe(`crt: ${cert}`);
  });
});

describe('Redactor', () => {
  const r = new Redactor(secretForms([cred]));

  it('replaces each form', () => {
    expect(r.redact('password: new-token-2026-11, basic acme-bot:new-token-2026-11')).toBe(`password: ${REDACTED}, basic ${REDACTED}`);
    expect(r.redact(`auth: ${b64('acme-bot:new-token-2026-11')}`)).toBe(`auth: ${REDACTED}`);
  });

  it('finds the secret inside a longer base64 text at any byte offset', () => {
    for (const prefix of ['', 'x', 'xy', 'password: ', 'apiVersion: v1alpha1\npassword: ']) {
      const blob = b64(`${prefix}new-token-2026-11\nmore: text`);
      const out = r.redact(`patch ${blob}`);
      expect(out, prefix).toContain(REDACTED);
      // what is left of the blob no longer decodes to the secret
      expect(Buffer.from(out.replace(`patch `, '').split(REDACTED).join(''), 'base64').toString('latin1')).not.toContain('new-token');
    }
  });

  it('replaces the longest form first (never leaves half of a longer one)', () => {
    const x = new Redactor(['abcdefgh', 'abcdefghijkl']);
    expect(x.redact('abcdefghijkl')).toBe(REDACTED);
  });

  it('redacts every string of plain data and leaves other values alone', () => {
    const data = { a: 'new-token-2026-11', n: 3, list: ['ok', { deep: 'x acme-bot:new-token-2026-11' }], none: null };
    expect(r.redactData(data)).toEqual({ a: REDACTED, n: 3, list: ['ok', { deep: `x ${REDACTED}` }], none: null });
    expect(data.a).toBe('new-token-2026-11');
  });

  it('ignores empty values', () => {
    const x = new Redactor(['']);
    expect(x.redact('text')).toBe('text');
  });
});
