import { describe, expect, it } from 'vitest';
import { escapeCell, escapeHtml, oneLine, truncateText } from '../../src/report/escape.js';

describe('escapeHtml', () => {
  it('escapes the five markup characters', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });

  it('escapes an existing entity again, so it shows as typed', () => {
    expect(escapeHtml('&lt;')).toBe('&amp;lt;');
  });
});

describe('escapeCell', () => {
  it('neutralises pipes, newlines and script tags', () => {
    const out = escapeCell('a|b\nc\r\nd\re <script>alert(1)</script>');
    expect(out).toBe('a&#124;b<br>c<br>d<br>e &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(out).not.toMatch(/[|\n\r]/);
    expect(out).not.toContain('<script');
  });

  it('never leaves a blank line that would end an HTML block', () => {
    expect(escapeCell('one\n\n\ntwo')).not.toContain('\n');
  });

  it('drops control characters but keeps tabs', () => {
    expect(escapeCell('a\u0000b\u001bc\td')).toBe('abc\td');
  });
});

describe('truncateText', () => {
  it('keeps short text and marks cut text', () => {
    expect(truncateText('abc', 3)).toBe('abc');
    expect(truncateText('abcdef', 4)).toBe('abc…');
  });

  it('does not split a surrogate pair', () => {
    const cut = truncateText('ab😀cd', 4);
    expect(cut).toBe('ab…');
    expect(() => encodeURIComponent(cut)).not.toThrow();
  });
});

describe('oneLine', () => {
  it('folds line breaks', () => {
    expect(oneLine(' a\nb\r\n  c ')).toBe('a b c');
  });
});
