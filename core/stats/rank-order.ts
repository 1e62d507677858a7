// The job-wide ranking's order of its (process, stack) entries: by score, then Δ, then size at the end, descending,
// then in push order (process, then row). Each process's rows are sorted on their own and the processes merged,
// which is the order one sort of every entry gives; a loading job ranked again as its processes come in keeps the
// order of the processes ranked before and merges only the new ones into it (sorting 10^6 entries through a
// comparator each time was a quarter of the ranking's time at 1,000 processes).

/** What the order reads of a ranking's input (core/stats/suspects.ts OrderInput): its rows, and whether a memo made it. */
export interface OrderInput {
  totals: { stackIds: ArrayLike<number> };
  /** present on a memo's input, which does not change */
  byRow?: object;
}

/**
 * What the entries (in push order) rank by, 4 numbers an entry: score, Δ, size at the end and the variance of that
 * size (side by side: the passes in rank order read an entry's four at once).
 */
export type RankKeys = Float64Array;

/** An order of entries, and the inputs it is of (kept by a RankMemo while a loading job is ranked again). */
export interface KeptOrder {
  inputs: readonly OrderInput[];
  entries: Int32Array;
}

/** True when entry `a` ranks before entry `b` (the comparator of one sort of every entry, as a test). */
function beforeOf(keys: RankKeys): (a: number, b: number) => boolean {
  return (a, b) =>
    (keys[4 * b] - keys[4 * a] || keys[4 * b + 1] - keys[4 * a + 1] || keys[4 * b + 2] - keys[4 * a + 2] || a - b) < 0;
}

/**
 * The entries of `input` in rank order. `kept`: an order made before, of inputs of which those that lead `input`
 * (the same objects: a memo's inputs do not change) keep their order.
 */
export function rankOrder(input: readonly OrderInput[], keys: RankKeys, kept: KeptOrder | null): Int32Array {
  const before = beforeOf(keys);
  const base = new Int32Array(input.length + 1);
  input.forEach((p, pi) => (base[pi + 1] = base[pi] + p.totals.stackIds.length));
  let k = 0;
  if (kept) while (k < input.length && k < kept.inputs.length && kept.inputs[k] === input[k]) k++;
  const fresh = mergeInputs(input, k, base, keys, before);
  if (!kept || k === 0) return fresh;
  // the kept order's entries of the inputs still leading (their entry numbers are the same: the same inputs before)
  const old = kept.inputs.length === k ? kept.entries : kept.entries.filter((e) => e < base[k]);
  return fresh.length === 0 ? old : mergeTwo(old, fresh, before);
}

/** Each memo input's rows in rank order (row numbers), made once: a memo's inputs do not change. */
const rowOrders = new WeakMap<OrderInput, Int32Array>();

function rowOrder(p: OrderInput, base: number, keys: RankKeys): Int32Array {
  const known = p.byRow ? rowOrders.get(p) : undefined;
  if (known) return known;
  const o = new Int32Array(p.totals.stackIds.length);
  for (let r = 0; r < o.length; r++) o[r] = r;
  const before = beforeOf(keys);
  o.sort((a, b) => (a === b ? 0 : before(base + a, base + b) ? -1 : 1));
  if (p.byRow) rowOrders.set(p, o);
  return o;
}

/** The entries of inputs [from, end) in rank order: each input's rows sorted, the inputs merged through a heap. */
function mergeInputs(
  input: readonly OrderInput[],
  from: number,
  base: Int32Array,
  keys: RankKeys,
  before: (a: number, b: number) => boolean,
): Int32Array {
  const runs: Int32Array[] = [];
  const starts: number[] = [];
  for (let pi = from; pi < input.length; pi++) {
    if (base[pi + 1] === base[pi]) continue;
    runs.push(rowOrder(input[pi], base[pi], keys));
    starts.push(base[pi]);
  }
  const out = new Int32Array(base[input.length] - base[from]);
  const R = runs.length;
  // the entry each run is at, and a binary heap of the runs by it (the first ranked on top)
  const pos = new Int32Array(R);
  const head = new Int32Array(R);
  const heap = new Int32Array(R);
  for (let q = 0; q < R; q++) {
    head[q] = starts[q] + runs[q][0];
    heap[q] = q;
  }
  let size = R;
  const down = (i: number): void => {
    const q = heap[i];
    for (;;) {
      let c = 2 * i + 1;
      if (c >= size) break;
      if (c + 1 < size && before(head[heap[c + 1]], head[heap[c]])) c++;
      if (!before(head[heap[c]], head[q])) break;
      heap[i] = heap[c];
      i = c;
    }
    heap[i] = q;
  };
  for (let i = (size >> 1) - 1; i >= 0; i--) down(i);
  for (let o = 0; o < out.length; o++) {
    const q = heap[0];
    out[o] = head[q];
    if (++pos[q] < runs[q].length) head[q] = starts[q] + runs[q][pos[q]];
    else heap[0] = heap[--size];
    if (size > 0) down(0);
  }
  return out;
}

/** Two orders of entries merged into one. */
function mergeTwo(a: Int32Array, b: Int32Array, before: (x: number, y: number) => boolean): Int32Array {
  const out = new Int32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let o = 0;
  while (i < a.length && j < b.length) out[o++] = before(b[j], a[i]) ? b[j++] : a[i++];
  while (i < a.length) out[o++] = a[i++];
  while (j < b.length) out[o++] = b[j++];
  return out;
}
