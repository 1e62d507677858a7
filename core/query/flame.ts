// Flame-graph trees (the worker's `flame` answer): a snapshot's stacks, or the change from a base, as a call tree
// in preorder (core/stats/call-tree.ts) over the view's frames, in a shape: as recorded, bottom-up, or the callers /
// callees of one frame (the sandwich view, core/frames/callers.ts); weighed by bytes or by each stack's steady
// growth. A diff tree carries each node's variance of Δ from jemalloc's sampling.

import type { Snapshot } from '../model/model.js';
import type { ViewOptions } from '../model/vocab.js';
import type { FrameInfo } from '../frames/catalog.js';
import { calleeKeys, callerKeys, invertedKeys } from '../frames/callers.js';
import { buildCallTree } from '../stats/call-tree.js';
import { diffSnapshots } from '../stats/diff.js';
import { denseVariances } from '../model/sampling-error.js';
import type { QuerySession, Steadiness } from './session.js';
import { compareByName, StartupFolder, type StartupFold } from './flame-startup.js';

/**
 * The shape of a flame-graph tree: as recorded (root on top), bottom-up (allocation sites as roots), or the
 * callers / callees of one frame key (the sandwich view). `by`: weigh by the snapshot's bytes (or the diff's
 * target and Δ when a base is given), or by each stack's steady-growth slope.
 */
export interface FlameShape {
  kind: 'normal' | 'inverted' | 'callers' | 'callees';
  key?: number;
  by?: 'bytes' | 'growth';
  /** fold each stack's root-side start-up frames into one marker (flame-startup.ts; normal and inverted) */
  startup?: boolean;
  /** siblings heaviest first (left-heavy, the default) or by name (stable across dumps) */
  siblings?: 'heaviest' | 'name';
}

/** Flame graph of a snapshot (base null) or a diff. Arrays are in preorder; node 0 is the root. */
export interface FlameData {
  size: number;
  depth: Uint16Array;
  end: Int32Array;
  parent: Int32Array;
  key: Int32Array;
  total: Float64Array;
  self: Float64Array;
  totalObjects: Float64Array;
  baseTotal: Float64Array | null;
  absDeltaTotal: Float64Array | null;
  /** Σ |bytes| through each node where some stack's figure is below 0 (a pprof delta profile): its width; else absent */
  absTotal?: Float64Array | null;
  /** diff only: variance (bytes²) of each node's Δ from the sampling model (Var_base + Var_target of its stacks); absent in reports */
  deltaVar?: Float64Array | null;
  maxDepth: number;
  /** frame info by key (only keys present in the tree) */
  frames: Record<number, FrameInfo>;
  /** node where each stack ends: stackId → node */
  stackNodes: Record<number, number>;
  baseGrand: number;
  targetGrand: number;
  /** the start-up folds of the tree (absent: none asked for, or none found) */
  startup?: StartupFold[];
}

export interface FlameRequest {
  proc: number;
  snapshot: number;
  base: number | null;
  view: ViewOptions;
  shape?: FlameShape;
}

/** The tree and the buffers under its arrays (a worker hands them over instead of copying them). */
export function flameTree(s: QuerySession, req: FlameRequest): { flame: FlameData; buffers: ArrayBufferLike[] } {
  const { proc: i, snapshot, base, view } = req;
  const shape = req.shape ?? { kind: 'normal' };
  const p = s.values(i, view);
  const table = s.catalog(i);
  let stackIds: ArrayLike<number>;
  let bytes: ArrayLike<number>;
  let objects: ArrayLike<number>;
  let baseBytes: ArrayLike<number> | undefined;
  if (base === null) {
    const snap = p.snapshots[snapshot];
    if (!snap) throw new Error(`no snapshot ${snapshot}`);
    const keep = Array.from(snap.stackIds.keys()).filter((j) => !table.dropped(snap.stackIds[j], view));
    stackIds = Uint32Array.from(keep, (j) => snap.stackIds[j]);
    bytes = Float64Array.from(keep, (j) => snap.liveBytes[j]);
    objects = Float64Array.from(keep, (j) => snap.liveObjects[j]);
  } else {
    const deltas = diffSnapshots(p, base, snapshot).filter((d) => !table.dropped(d.stackId, view));
    stackIds = Uint32Array.from(deltas, (d) => d.stackId);
    bytes = Float64Array.from(deltas, (d) => d.targetBytes);
    objects = Float64Array.from(deltas, (d) => d.targetObjects);
    baseBytes = Float64Array.from(deltas, (d) => d.baseBytes);
  }
  const keysOf = (id: number): Int32Array => table.stackKeys(id, view);
  const folded = (k: number): boolean => table.frames[k].kind === 'folded';
  const growthBy = shape.by === 'growth' ? s.steadiness(i, view) : null;
  const folder =
    shape.startup && (shape.kind === 'normal' || shape.kind === 'inverted') ? new StartupFolder(table) : null;
  const shaped = shapeStacks(shape, { stackIds, bytes, objects, baseBytes }, keysOf, folded, growthBy, folder);
  const built = buildCallTree(p.stacks, shaped.values, {
    stackKeys: shaped.stackKeys,
    ...(shape.siblings === 'name' ? { order: 'key' as const, compareKeys: compareByName(table.frames) } : {}),
  });
  const arranged = folder ? folder.finish(built) : null;
  const tree = arranged ? arranged.tree : built;
  stackIds = shaped.values.stackIds;
  // σ of sampling is of live bytes: none for other sample types or for trees weighed by growth
  const sigmaOk = base !== null && shape.by !== 'growth' && (view.sample ?? 'inuse_space') === 'inuse_space';
  const deltaVar =
    sigmaOk && base !== null
      ? nodeDeltaVariance(tree, stackIds, p.stacks.count, p.snapshots[base], p.snapshots[snapshot])
      : null;
  const frames: Record<number, FrameInfo> = {};
  for (let n = 1; n < tree.size; n++) {
    const k = tree.key[n];
    if (frames[k] === undefined) frames[k] = table.frames[k];
  }
  const stackNodes: Record<number, number> = {};
  for (let j = 0; j < stackIds.length; j++) stackNodes[stackIds[j]] = tree.stackNode[j];
  const flame: FlameData = {
    size: tree.size,
    depth: tree.depth,
    end: tree.end,
    parent: tree.parent,
    key: tree.key,
    total: tree.total,
    self: tree.self,
    totalObjects: tree.totalObjects,
    baseTotal: tree.baseTotal,
    absDeltaTotal: tree.absDeltaTotal,
    absTotal: tree.absTotal,
    deltaVar,
    maxDepth: tree.maxDepth,
    frames,
    stackNodes,
    baseGrand: tree.baseTotal ? tree.baseTotal[0] : 0,
    targetGrand: tree.total[0],
  };
  if (arranged && arranged.folds.length > 0) flame.startup = arranged.folds;
  const buffers: ArrayBufferLike[] = [
    tree.depth.buffer,
    tree.end.buffer,
    tree.parent.buffer,
    tree.key.buffer,
    tree.total.buffer,
    tree.self.buffer,
    tree.totalObjects.buffer,
  ];
  if (tree.baseTotal) buffers.push(tree.baseTotal.buffer);
  if (tree.absDeltaTotal) buffers.push(tree.absDeltaTotal.buffer);
  if (tree.absTotal) buffers.push(tree.absTotal.buffer);
  if (deltaVar) buffers.push(deltaVar.buffer);
  return { flame, buffers };
}

interface TreeValues {
  stackIds: ArrayLike<number>;
  bytes: ArrayLike<number>;
  objects: ArrayLike<number>;
  baseBytes?: ArrayLike<number>;
}

/**
 * The stacks of a tree request in the requested shape: as they are, bottom-up (inverted), or the callers or
 * callees of one frame key (only the stacks through it). Weighed by growth (`growthBy`), each stack counts its
 * steady-growth slope instead of its bytes, and only growing stacks count.
 */
function shapeStacks(
  shape: FlameShape,
  v: TreeValues,
  keysOf: (id: number) => Int32Array,
  folded: (key: number) => boolean,
  growthBy: Map<number, Steadiness> | null,
  folder: StartupFolder | null = null,
): {
  values: { stackIds: Uint32Array; bytes: Float64Array; objects: Float64Array; baseBytes?: Float64Array };
  stackKeys: (id: number) => ArrayLike<number>;
} {
  const keep: number[] = [];
  const shapedKeys = new Map<number, Int32Array>();
  for (let j = 0; j < v.stackIds.length; j++) {
    const id = v.stackIds[j];
    const keys = keysOf(id);
    let k: Int32Array | null = keys;
    if (growthBy && !((growthBy.get(id)?.slope ?? 0) > 0)) continue;
    // the start-up run is on the root side: folded before a bottom-up tree turns the stack over
    if (folder) k = folder.fold(keys, v.bytes[j] - (v.baseBytes ? v.baseBytes[j] : 0) || v.bytes[j]);
    // bottom-up: the roots are the first surviving frames (a leaf-side run of folded frames is not a root)
    if (shape.kind === 'inverted') k = invertedKeys(dropLeadingMarkers(k, folded));
    else if (shape.kind === 'callers') k = callerKeys(keys, shape.key ?? -1);
    else if (shape.kind === 'callees') k = calleeKeys(keys, shape.key ?? -1);
    if (!k) continue;
    shapedKeys.set(id, k);
    keep.push(j);
  }
  const { stackIds, bytes, objects, baseBytes } = v;
  const values = {
    stackIds: Uint32Array.from(keep, (j) => stackIds[j]),
    bytes: Float64Array.from(keep, (j) => (growthBy ? (growthBy.get(stackIds[j])?.slope ?? 0) : bytes[j])),
    objects: Float64Array.from(keep, (j) => objects[j]),
    ...(baseBytes && !growthBy ? { baseBytes: Float64Array.from(keep, (j) => baseBytes[j]) } : {}),
  };
  return { values, stackKeys: (id) => shapedKeys.get(id) ?? keysOf(id) };
}

function dropLeadingMarkers(keys: Int32Array, folded: (key: number) => boolean): Int32Array {
  let n = 0;
  while (n < keys.length && folded(keys[n])) n++;
  return n === 0 ? keys : keys.subarray(n);
}

/** Per node of a diff tree: the variance of its Δ, the sum over the stacks through it of Var_base + Var_target. */
function nodeDeltaVariance(
  tree: { size: number; parent: Int32Array; stackNode: Int32Array },
  stackIds: ArrayLike<number>,
  count: number,
  a: Snapshot,
  b: Snapshot,
): Float64Array {
  const va = denseVariances(count, a);
  const vb = denseVariances(count, b);
  const self = new Float64Array(tree.size);
  for (let j = 0; j < stackIds.length; j++) self[tree.stackNode[j]] += va[stackIds[j]] + vb[stackIds[j]];
  // preorder: a child's index is above its parent's, so one pass from the end sums subtrees
  for (let n = tree.size - 1; n > 0; n--) self[tree.parent[n]] += self[n];
  return self;
}
