// The job-wide ranking's order of its (process, stack) entries: by score, then Δ, then size at the end, descending,
// then in push order (process, then row). Each process's rows are sorted on their own and the processes merged,
// which is the order one sort of every entry gives; a loading job ranked again as its processes come in keeps the
// order of the processes ranked before and merges only the new ones into it (sorting 10^6 entries through a
// comparator each time was a quarter of the ranking's time at 1,000 processes).

/** What the order reads of a ranking's input (core/stats/suspects.ts RankInput): its rows, and whether a memo made it. */
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

/**
 * An order of entries, with their score, Δ and size at the end in that order (3 numbers an entry: the merges read
 * them in sequence, not all over the entries' keys), and the inputs it is of (kept by a RankMemo while a loading job
 * is ranked again).
 */
export interface KeptOrder {
  inputs: readonly OrderInput[];
  entries: Int32Array;
  keys: Float64Array;
}

/** An order of entries and their keys in that order (KeptOrder without its inputs). */
interface Run {
  entries: Int32Array;
  keys: Float64Array;
}

/** True when entry `a`, keys at `i` in `ka`, ranks before entry `b`, keys at `j` in `kb` (the sort's comparator). */
function ahead(ka: Float64Array, i: number, a: number, kb: Float64Array, j: number, b: number): boolean {
  return (kb[j] - ka[i] || kb[j + 1] - ka[i + 1] || kb[j + 2] - ka[i + 2] || a - b) < 0;
}

/**
 * The entries of `input` in rank order. `kept`: an order made before, of inputs of which those that lead `input`
 * (the same objects: a memo's inputs do not change) keep their order.
 */
export function rankOrder(input: readonly OrderInput[], keys: RankKeys, kept: KeptOrder | null): KeptOrder {
  const base = new Int32Array(input.length + 1);
  input.forEach((p, pi) => (base[pi + 1] = base[pi] + p.totals.stackIds.length));
  let k = 0;
  if (kept) while (k < input.length && k < kept.inputs.length && kept.inputs[k] === input[k]) k++;
  const fresh = mergeInputs(input, k, base, keys);
  let out = fresh;
  if (kept && k > 0) {
    // the kept order's entries of the inputs still leading (their entry numbers are the same: the same inputs before)
    const old = kept.inputs.length === k ? kept : below(kept, base[k]);
    out = fresh.entries.length === 0 ? old : mergeTwo(old, fresh);
  }
  return { inputs: input.slice(), entries: out.entries, keys: out.keys };
}

/** The entries of an order below `end`, in the same order. */
function below(o: Run, end: number): Run {
  let n = 0;
  for (const e of o.entries) if (e < end) n++;
  const out: Run = { entries: new Int32Array(n), keys: new Float64Array(3 * n) };
  let w = 0;
  o.entries.forEach((e, i) => {
    if (e >= end) return;
    out.entries[w] = e;
    out.keys.set(o.keys.subarray(3 * i, 3 * i + 3), 3 * w++);
  });
  return out;
}

/** Each memo input's rows in rank order (row numbers), made once: a memo's inputs do not change. */
const rowOrders = new WeakMap<OrderInput, Int32Array>();

/**
 * Sorts a memo input's rows now (`keys`: RankKeys of its rows alone), for rankOrder to find made: a loading job's
 * processes are sorted as each is ranked ahead, while the readers parse the others, instead of all at the load's end.
 */
export function sortRowsAhead(p: OrderInput, keys: RankKeys): void {
  if (p.byRow) rowOrder(p, 0, keys);
}

function rowOrder(p: OrderInput, base: number, keys: RankKeys): Int32Array {
  const known = p.byRow ? rowOrders.get(p) : undefined;
  if (known) return known;
  const o = new Int32Array(p.totals.stackIds.length);
  for (let r = 0; r < o.length; r++) o[r] = r;
  o.sort((a, b) => (a === b ? 0 : ahead(keys, 4 * (base + a), a, keys, 4 * (base + b), b) ? -1 : 1));
  if (p.byRow) rowOrders.set(p, o);
  return o;
}

/**
 * The entries of inputs [from, end) in rank order: each input's rows sorted, the inputs merged through a heap (the
 * runs' next keys in a small array of their own).
 */
function mergeInputs(input: readonly OrderInput[], from: number, base: Int32Array, keys: RankKeys): Run {
  const runs: Int32Array[] = [];
  const starts: number[] = [];
  for (let pi = from; pi < input.length; pi++) {
    if (base[pi + 1] === base[pi]) continue;
    runs.push(rowOrder(input[pi], base[pi], keys));
    starts.push(base[pi]);
  }
  const n = base[input.length] - base[from];
  const out: Run = { entries: new Int32Array(n), keys: new Float64Array(3 * n) };
  const R = runs.length;
  // the entry each run is at and its keys, and a binary heap of the runs by it (the first ranked on top)
  const pos = new Int32Array(R);
  const head = new Int32Array(R);
  const hk = new Float64Array(3 * R);
  const heap = new Int32Array(R);
  const load = (q: number): void => {
    const e = (head[q] = starts[q] + runs[q][pos[q]]);
    hk[3 * q] = keys[4 * e];
    hk[3 * q + 1] = keys[4 * e + 1];
    hk[3 * q + 2] = keys[4 * e + 2];
  };
  const before = (a: number, b: number): boolean => ahead(hk, 3 * a, head[a], hk, 3 * b, head[b]);
  for (let q = 0; q < R; q++) {
    load(q);
    heap[q] = q;
  }
  let size = R;
  const down = (i: number): void => {
    const q = heap[i];
    for (;;) {
      let c = 2 * i + 1;
      if (c >= size) break;
      if (c + 1 < size && before(heap[c + 1], heap[c])) c++;
      if (!before(heap[c], q)) break;
      heap[i] = heap[c];
      i = c;
    }
    heap[i] = q;
  };
  for (let i = (size >> 1) - 1; i >= 0; i--) down(i);
  for (let o = 0; o < n; o++) {
    const q = heap[0];
    out.entries[o] = head[q];
    out.keys[3 * o] = hk[3 * q];
    out.keys[3 * o + 1] = hk[3 * q + 1];
    out.keys[3 * o + 2] = hk[3 * q + 2];
    if (++pos[q] < runs[q].length) load(q);
    else heap[0] = heap[--size];
    if (size > 0) down(0);
  }
  return out;
}

/** Two orders merged into one. */
function mergeTwo(a: Run, b: Run): Run {
  const n = a.entries.length + b.entries.length;
  const out: Run = { entries: new Int32Array(n), keys: new Float64Array(3 * n) };
  let i = 0;
  let j = 0;
  for (let o = 0; o < n; o++) {
    const takeB =
      i >= a.entries.length ||
      (j < b.entries.length && ahead(b.keys, 3 * j, b.entries[j], a.keys, 3 * i, a.entries[i]));
    const src = takeB ? b : a;
    const x = takeB ? j++ : i++;
    out.entries[o] = src.entries[x];
    out.keys[3 * o] = src.keys[3 * x];
    out.keys[3 * o + 1] = src.keys[3 * x + 1];
    out.keys[3 * o + 2] = src.keys[3 * x + 2];
  }
  return out;
}
