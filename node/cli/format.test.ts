import { describe, expect, it } from 'vitest';
import { displayWidth, fitWidth } from './format.js';

describe('displayWidth', () => {
  it('counts terminal columns: one a character below U+0300, none for combining marks, two for wide forms', () => {
    expect(displayWidth('')).toBe(0);
    expect(displayWidth('libc.so.6+0x1a2b3c (malloc)')).toBe(27);
    expect(displayWidth('\t\u0001é\u02ff')).toBe(4);
    expect(displayWidth('e\u0301')).toBe(1); // e + combining acute
    expect(displayWidth('\u0300')).toBe(0);
    expect(displayWidth('表示')).toBe(4);
    expect(displayWidth('ｆｕｌｌ')).toBe(8);
    expect(displayWidth('🔥x')).toBe(3); // a surrogate pair: one wide code point
    expect(displayWidth('a\u200db')).toBe(2);
  });

  it('gives the same width whether a string takes the one-column fast path or the loop', () => {
    // the width as the loop alone counts it: every code point's own width, summed
    const parts = [
      'a',
      'Z',
      ' ',
      '\u00e9',
      '\u02ff',
      '\u0300',
      '\u036f',
      '\u0370',
      '\u200d',
      '表',
      '\uff01',
      '😀',
      '\u0000',
    ];
    let seed = 11;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (let i = 0; i < 2000; i++) {
      const chosen = Array.from({ length: Math.floor(rnd() * 12) }, () => parts[Math.floor(rnd() * parts.length)]);
      const s = chosen.join('');
      const want = chosen.reduce((w, p) => w + displayWidth(p), 0);
      expect(displayWidth(s), JSON.stringify(s)).toBe(want);
    }
  });

  it('cuts to a width with an ellipsis, by columns', () => {
    expect(fitWidth('abcdef', 4)).toBe('abc…');
    expect(fitWidth('表示表示', 5)).toBe('表示…');
    expect(fitWidth('abc', 3)).toBe('abc');
  });
});
