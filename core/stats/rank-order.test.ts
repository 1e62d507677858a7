import { describe, expect, it } from 'vitest';
import { rankOrder, sortRowsAhead, type OrderInput } from './rank-order.js';

/** Inputs of `rows` rows each, with keys from a few values (many ties, broken by push order). */
function inputs(rowsEach: readonly number[]): { input: OrderInput[]; keys: Float64Array } {
  let x = 7;
  const next = (): number => (x = (x * 1103515245 + 12345) % 2147483648) % 5;
  const input = rowsEach.map((n) => ({ totals: { stackIds: Int32Array.from({ length: n }, (_, i) => i) }, byRow: {} }));
  const total = rowsEach.reduce((a, b) => a + b, 0);
  const keys = new Float64Array(4 * total);
  for (let e = 0; e < total; e++) {
    keys[4 * e] = next() > 2 ? next() : 0;
    keys[4 * e + 1] = next() - 2;
    keys[4 * e + 2] = next();
    keys[4 * e + 3] = 1;
  }
  return { input, keys };
}

describe('rankOrder with rows sorted ahead (a loading job)', () => {
  it('gives the order one sort of every entry gives, whether the rows were sorted ahead or not', () => {
    const rowsEach = [5, 40, 1, 17, 0, 33, 8, 8, 21];
    const { input, keys } = inputs(rowsEach);
    // sorted ahead from each input's own keys, as rankAhead does, for all but the last input
    let base = 0;
    rowsEach.forEach((n, i) => {
      if (i < input.length - 1) sortRowsAhead(input[i], keys.slice(4 * base, 4 * (base + n)));
      base += n;
    });
    // the comparator's order over every entry: score, Δ, size at the end descending, then push order
    const all = Array.from({ length: base }, (_, e) => e).sort(
      (a, b) =>
        keys[4 * b] - keys[4 * a] || keys[4 * b + 1] - keys[4 * a + 1] || keys[4 * b + 2] - keys[4 * a + 2] || a - b,
    );
    expect(Array.from(rankOrder(input, keys, null).entries)).toEqual(all);
    const fresh = input.map((p) => ({ totals: p.totals }));
    expect(Array.from(rankOrder(fresh, keys, null).entries)).toEqual(all);
  });
});
