import { describe, expect, it } from 'vitest';
import { escapeControlsInJson, hasControls, revealControls } from './display-text.js';

describe('display text', () => {
  it('marks terminal escapes, bidi controls and line separators, and nothing else', () => {
    expect(revealControls('/opt/\u001b[31mred\u001b[0m/lib.so')).toBe('/opt/<U+001B>[31mred<U+001B>[0m/lib.so');
    expect(revealControls('invoice\u202Egpj.exe')).toBe('invoice<U+202E>gpj.exe');
    expect(revealControls('a\u200Fb\u061Cc\u2028d\u2066e\u0085f\rg')).toBe(
      'a<U+200F>b<U+061C>c<U+2028>d<U+2066>e<U+0085>f<U+000D>g',
    );
    // plain text, tabs, newlines, non-Latin scripts and emoji stay as they are
    const fine = 'main\tleak_steady\nмой_файл.so 函数 ملف 🙂';
    expect(revealControls(fine)).toBe(fine);
    expect(hasControls(fine)).toBe(false);
    expect(hasControls('x\u202Ey')).toBe(true);
  });

  it('in JSON: escapes that parse back to the same data', () => {
    const data = { path: '/x/\u202Eos.bil', note: 'a\u2028b', esc: '\u001b' };
    const json = escapeControlsInJson(JSON.stringify(data, null, 2));
    expect(hasControls(json)).toBe(false);
    expect(JSON.parse(json)).toEqual(data);
  });
});
