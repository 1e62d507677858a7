// Flame-graph tree of one snapshot or of a diff: root → leaf, children merged by frame key.
// Pure and DOM-free (runs in the renderer's worker). Frames of a stack are stored leaf first; the tree is built
// root first. Leading allocator frames (StackTable.allocatorDepth) are skipped when hiding allocator frames.

import type { StackTable } from '../model/model.js';

export interface CallTreeValues {
  /** stacks contributing to the tree */
  stackIds: ArrayLike<number>;
  /** value per entry of stackIds (bytes of the snapshot, or of the diff's target) */
  bytes: ArrayLike<number>;
  objects?: ArrayLike<number>;
  /** diff only: the base snapshot's bytes per entry of stackIds (0 for new stacks) */
  baseBytes?: ArrayLike<number>;
  baseObjects?: ArrayLike<number>;
}

export interface CallTreeOptions {
  /** skip each stack's leading allocator frames (default true) */
  hideAllocatorFrames?: boolean;
  /**
   * Frame keys of one address, innermost (leaf-most) first: several for inlined frames, none to drop the address
   * (e.g. native frames in a Python-only view). Default: the address id itself. Keys must be < 2^24.
   */
  expand?: (addressId: number) => ArrayLike<number>;
  /**
   * Frame keys of a whole stack, leaf first, already filtered for the view (allocator frames, Python/native
   * modes, inlined frames). When given, it replaces hideAllocatorFrames and expand.
   */
  stackKeys?: (stackId: number) => ArrayLike<number>;
  /** sibling order: heaviest first (default), or by key via compareKeys (stable across snapshots) */
  order?: 'heaviest' | 'key';
  compareKeys?: (a: number, b: number) => number;
}

/** Nodes in preorder (node 0 is the root); the subtree of node i is [i, end[i]). */
export interface CallTree {
  size: number;
  /** frame key; -1 for the root */
  key: Int32Array;
  parent: Int32Array;
  depth: Uint16Array;
  end: Int32Array;
  total: Float64Array;
  self: Float64Array;
  totalObjects: Float64Array;
  /** diff only (null otherwise) */
  baseTotal: Float64Array | null;
  baseSelf: Float64Array | null;
  /** diff only: Σ over the stacks through the node of |target − base| (for "width by |Δ|") */
  absDeltaTotal: Float64Array | null;
  /**
   * Σ over the stacks through the node of |value|, where some value is below 0 (a pprof delta profile's): the
   * node's width, so that children tile their parent as pprof's totals count magnitudes; null when none is
   */
  absTotal: Float64Array | null;
  maxDepth: number;
  /** for each entry of values.stackIds, the node where that stack ends */
  stackNode: Int32Array;
}

const KEY_LIMIT = 2 ** 24;

class Grow {
  data: Float64Array;
  constructor(n: number) {
    this.data = new Float64Array(n);
  }
  ensure(n: number): void {
    if (n <= this.data.length) return;
    const next = new Float64Array(Math.max(n, this.data.length * 2));
    next.set(this.data);
    this.data = next;
  }
}

export function buildCallTree(stacks: StackTable, values: CallTreeValues, options: CallTreeOptions = {}): CallTree {
  const hideAlloc = options.hideAllocatorFrames ?? true;
  const expand = options.expand;
  const isDiff = values.baseBytes !== undefined;
  const n = values.stackIds.length;

  // Build in insertion order first.
  let cap = 1024;
  const keyB = new Grow(cap);
  const parentB = new Grow(cap);
  const depthB = new Grow(cap);
  const totalB = new Grow(cap);
  const selfB = new Grow(cap);
  const objB = new Grow(cap);
  const baseTotalB = new Grow(isDiff ? cap : 0);
  const baseSelfB = new Grow(isDiff ? cap : 0);
  const absB = new Grow(isDiff ? cap : 0);
  const magB = new Grow(cap);
  let negative = false;
  const all = isDiff
    ? [keyB, parentB, depthB, totalB, selfB, objB, magB, baseTotalB, baseSelfB, absB]
    : [keyB, parentB, depthB, totalB, selfB, objB, magB];
  let size = 1;
  keyB.data[0] = -1;
  parentB.data[0] = -1;
  const childIndex = new Map<number, number>();
  const stackNodeBuild = new Int32Array(n);
  const path: number[] = [];
  const keysTmp: number[] = [];
  let maxDepth = 0;

  for (let i = 0; i < n; i++) {
    const s = values.stackIds[i];
    const v = values.bytes[i];
    const o = values.objects ? values.objects[i] : 0;
    const bv = isDiff ? (values.baseBytes as ArrayLike<number>)[i] : 0;
    const ad = Math.abs(v - bv);
    const mag = Math.abs(v);
    if (v < 0) negative = true;
    const start = stacks.offsets[s];
    const stop = stacks.offsets[s + 1];
    const first = hideAlloc ? Math.min(stop, start + (stacks.allocatorDepth[s] ?? 0)) : start;
    // collect keys root → leaf
    keysTmp.length = 0;
    if (options.stackKeys) {
      const ks = options.stackKeys(s);
      for (let k = ks.length - 1; k >= 0; k--) keysTmp.push(ks[k]);
    } else
      for (let f = stop - 1; f >= first; f--) {
        const addr = stacks.frames[f];
        if (expand) {
          const ks = expand(addr);
          for (let k = ks.length - 1; k >= 0; k--) keysTmp.push(ks[k]);
        } else keysTmp.push(addr);
      }
    path.length = 0;
    let node = 0;
    path.push(0);
    for (let k = 0; k < keysTmp.length; k++) {
      const key = keysTmp[k];
      if (key < 0 || key >= KEY_LIMIT || !Number.isInteger(key)) throw new RangeError(`frame key out of range: ${key}`);
      const ck = node * KEY_LIMIT + key;
      let child = childIndex.get(ck);
      if (child === undefined) {
        child = size++;
        if (size > cap) {
          cap *= 2;
          for (const b of all) b.ensure(cap);
        }
        keyB.data[child] = key;
        parentB.data[child] = node;
        depthB.data[child] = depthB.data[node] + 1;
        if (depthB.data[child] > maxDepth) maxDepth = depthB.data[child];
        childIndex.set(ck, child);
      }
      node = child;
      path.push(node);
    }
    for (const p of path) {
      totalB.data[p] += v;
      magB.data[p] += mag;
      objB.data[p] += o;
      if (isDiff) {
        baseTotalB.data[p] += bv;
        absB.data[p] += ad;
      }
    }
    selfB.data[node] += v;
    if (isDiff) baseSelfB.data[node] += bv;
    stackNodeBuild[i] = node;
  }

  // Children lists, sorted, then preorder renumbering.
  const childCount = new Int32Array(size);
  for (let c = 1; c < size; c++) childCount[parentB.data[c]]++;
  const childStart = new Int32Array(size + 1);
  for (let i = 0; i < size; i++) childStart[i + 1] = childStart[i] + childCount[i];
  const children = new Int32Array(Math.max(0, size - 1));
  const fill = childStart.slice(0, size);
  for (let c = 1; c < size; c++) children[fill[parentB.data[c]]++] = c;
  const heaviest = (options.order ?? 'heaviest') === 'heaviest';
  const cmpKeys = options.compareKeys ?? ((a: number, b: number) => a - b);
  const weight = (c: number): number => (isDiff ? Math.max(totalB.data[c], baseTotalB.data[c]) : totalB.data[c]);
  for (let p = 0; p < size; p++) {
    const a = childStart[p];
    const b = childStart[p + 1];
    if (b - a < 2) continue;
    const sub = Array.from(children.subarray(a, b));
    sub.sort((x, y) => (heaviest ? weight(y) - weight(x) : 0) || cmpKeys(keyB.data[x], keyB.data[y]) || x - y);
    children.set(sub, a);
  }

  const order = new Int32Array(size); // preorder position → old id
  const newId = new Int32Array(size);
  const stack: number[] = [0];
  let pos = 0;
  while (stack.length > 0) {
    const id = stack.pop() as number;
    newId[id] = pos;
    order[pos++] = id;
    for (let j = childStart[id + 1] - 1; j >= childStart[id]; j--) stack.push(children[j]);
  }

  const key = new Int32Array(size);
  const parent = new Int32Array(size);
  const depth = new Uint16Array(size);
  const total = new Float64Array(size);
  const self = new Float64Array(size);
  const totalObjects = new Float64Array(size);
  const baseTotal = isDiff ? new Float64Array(size) : null;
  const baseSelf = isDiff ? new Float64Array(size) : null;
  const absDeltaTotal = isDiff ? new Float64Array(size) : null;
  const absTotal = negative ? new Float64Array(size) : null;
  for (let p = 0; p < size; p++) {
    const id = order[p];
    key[p] = keyB.data[id];
    parent[p] = id === 0 ? -1 : newId[parentB.data[id]];
    depth[p] = Math.min(65535, depthB.data[id]);
    total[p] = totalB.data[id];
    self[p] = selfB.data[id];
    totalObjects[p] = objB.data[id];
    if (absTotal) absTotal[p] = magB.data[id];
    if (baseTotal && baseSelf && absDeltaTotal) {
      baseTotal[p] = baseTotalB.data[id];
      baseSelf[p] = baseSelfB.data[id];
      absDeltaTotal[p] = absB.data[id];
    }
  }
  // subtree ends: walk backwards, a node's end is the max end of its last descendant
  const end = new Int32Array(size);
  for (let p = size - 1; p >= 0; p--) {
    if (end[p] === 0) end[p] = p + 1;
    const par = parent[p];
    if (par >= 0 && end[p] > end[par]) end[par] = end[p];
  }
  const stackNode = new Int32Array(n);
  for (let i = 0; i < n; i++) stackNode[i] = newId[stackNodeBuild[i]];
  return {
    size,
    key,
    parent,
    depth,
    end,
    total,
    self,
    totalObjects,
    baseTotal,
    baseSelf,
    absDeltaTotal,
    absTotal,
    maxDepth,
    stackNode,
  };
}

/** Frame keys from the root to node `id` (root excluded). */
export function nodePath(tree: CallTree, id: number): number[] {
  const out: number[] = [];
  for (let p = id; p > 0; p = tree.parent[p]) out.push(tree.key[p]);
  return out.reverse();
}

/**
 * The tree with node 1 merged into the root when it is the root's only child (a flame graph's start-up fold that
 * every stack passes through reads as one row with the root): its children hang from the root, its self bytes
 * are the root's. The same tree otherwise.
 */
export function mergeOnlyChildIntoRoot(tree: CallTree): CallTree {
  if (tree.size < 2 || tree.end[1] !== tree.size) return tree;
  const size = tree.size - 1;
  const drop = <T extends Float64Array | Int32Array | Uint16Array>(a: T): T => {
    const out = a.slice(1) as T;
    out[0] = a[0];
    return out;
  };
  const key = drop(tree.key);
  const parent = new Int32Array(size);
  const depth = new Uint16Array(size);
  const end = new Int32Array(size);
  parent[0] = -1;
  end[0] = size;
  for (let n = 1; n < size; n++) {
    const p = tree.parent[n + 1];
    parent[n] = p <= 1 ? 0 : p - 1;
    depth[n] = tree.depth[n + 1] - 1;
    end[n] = tree.end[n + 1] - 1;
  }
  const self = drop(tree.self);
  self[0] = tree.self[0] + tree.self[1];
  let baseSelf: Float64Array | null = null;
  if (tree.baseSelf) {
    baseSelf = drop(tree.baseSelf);
    baseSelf[0] = tree.baseSelf[0] + tree.baseSelf[1];
  }
  return {
    size,
    key,
    parent,
    depth,
    end,
    total: drop(tree.total),
    self,
    totalObjects: drop(tree.totalObjects),
    baseTotal: tree.baseTotal ? drop(tree.baseTotal) : null,
    baseSelf,
    absDeltaTotal: tree.absDeltaTotal ? drop(tree.absDeltaTotal) : null,
    absTotal: tree.absTotal ? drop(tree.absTotal) : null,
    maxDepth: Math.max(0, tree.maxDepth - 1),
    stackNode: tree.stackNode.map((n) => (n <= 1 ? 0 : n - 1)),
  };
}
