import { describe, expect, it } from 'vitest';
import { grown } from './grown.js';

describe('grown: a typed array grown by doubling', () => {
  it('returns the array itself while it holds what is needed', () => {
    const a = new Uint32Array([1, 2, 3]);
    expect(grown(a, 3)).toBe(a);
  });

  it('doubles (or takes what is needed), keeps the entries and the type, fills the new entries', () => {
    const a = Int32Array.of(5, 6);
    const b = grown(a, 3, -1);
    expect(b).toBeInstanceOf(Int32Array);
    expect([...b]).toEqual([5, 6, -1, -1]);
    const c = grown(Float64Array.of(0.5), 9);
    expect(c).toBeInstanceOf(Float64Array);
    expect([...c]).toEqual([0.5, 0, 0, 0, 0, 0, 0, 0, 0]);
  });
});
