// A typed array grown by doubling, for tables filled one entry at a time (a process's stacks and addresses as they
// are merged, a loading job's sums by stack key): amortized O(1) an entry, one copy per doubling.

type Growable = Uint32Array<ArrayBuffer> | Int32Array<ArrayBuffer> | Float64Array<ArrayBuffer>;

/**
 * `a` itself when it holds `need` entries, else a copy at least twice as long (or `need`), its new entries `fill`
 * (0 unless said).
 */
export function grown<T extends Growable>(a: T, need: number, fill = 0): T {
  if (need <= a.length) return a;
  const next = new (a.constructor as new (length: number) => T)(Math.max(2 * a.length, need));
  next.set(a);
  if (fill !== 0) next.fill(fill, a.length);
  return next;
}
