import { describe, expect, it } from 'vitest';
import { frameMatchesSearch, highlightParts, searchRegex } from './search.ts';

describe('search as a regular expression', () => {
  it('parses expressions, falls back to text, matches label/file/module', () => {
    const r = searchRegex('make_rec.rd|leaky_')!;
    expect(r.valid).toBe(true);
    const f = { label: 'make_record', function: 'make_record', file: '/srv/workload.py', modulePath: null };
    expect(frameMatchesSearch(f, r.re)).toBe(true);
    expect(frameMatchesSearch({ ...f, label: 'x', function: 'x' }, searchRegex('workload\\.py')!.re)).toBe(true);
    const bad = searchRegex('foo(')!;
    expect(bad.valid).toBe(false);
    expect(bad.re.test('call foo(1)')).toBe(true);
    expect(searchRegex('  ')).toBeNull();
  });
  it('highlights every match', () => {
    expect(highlightParts('a_make_b_make', searchRegex('make')!.re)).toEqual([
      { text: 'a_', hit: false },
      { text: 'make', hit: true },
      { text: '_b_', hit: false },
      { text: 'make', hit: true },
    ]);
  });
});
