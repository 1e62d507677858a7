// The one "same visible frames" row key for rows.ts: two stacks are one row exactly when their shown frames are the
// same list (folded frames do not count), and a stack the view drops is in no row. The app's Growth table asks it
// over its frame catalog's keys (growth-table.ts); `heaplens top`/`diff` (the engine's top and diff listings,
// stack-listings.ts) over the shown frames at a granularity, except in the merged view at line granularity without
// filters, where every frame is shown and each stack is its own row.

import type { RowKey } from './rows.js';
import { atGranularity, frameKey, type Granularity } from '../frames/stack-filter.js';
import type { Frame } from '../frames/describe.js';
import type { FrameCatalog } from '../frames/catalog.js';
import type { StackViewer } from '../frames/view.js';
import type { ViewOptions } from '../model/vocab.js';

/**
 * A stack's shown frames as part numbers, leaf first: equal numbers, the same shown frame (null: the view drops the
 * stack). The array may be reused by the next call: the key reads it at once.
 */
export type ShownParts = (stackId: number) => ArrayLike<number> | null;

/** the key's UTF-16 units, reused: one string a stack, made by one decode (no string per frame) */
let units = new Uint16Array(256);
const UTF16 = new TextDecoder('utf-16le');

/**
 * The row key: a stack's parts as a string, equal exactly when the lists are. Each number (below 2^30) is two
 * UTF-16 units of 15 bits (fixed width, so equal keys are equal lists): shorter to build and hash than decimal
 * digits and separators, and never a surrogate, which the decoder would replace (two lists, one key).
 * `perStack`: each stack its own row.
 */
export function sameFramesKey(parts: ShownParts, perStack = false): RowKey {
  return (id) => {
    const p = parts(id);
    if (!p) return null;
    if (perStack) return String(id);
    if (units.length < 2 * p.length) units = new Uint16Array(4 * p.length);
    let u = 0;
    for (let i = 0; i < p.length; i++) {
      const n = p[i];
      units[u++] = n & 0x7fff;
      units[u++] = n >>> 15;
    }
    return UTF16.decode(units.subarray(0, u));
  };
}

/** The Growth table's stacks: their keys in the view over the process's frame catalog (core/frames/catalog.ts). */
export function catalogParts(table: FrameCatalog, view: ViewOptions): ShownParts {
  return (id) => (table.dropped(id, view) ? null : table.stackKeys(id, view));
}

/** What a shown frame contributes to its stack's parts at the granularity. */
function framePart(f: Frame, g: Granularity): string {
  return f.function || f.kind === 'python' || g === 'files' ? frameKey(f, g) : f.address;
}

/** Where a frame keeps its part's number for the parts being numbered (not a JSON field: a symbol key). */
const PART = Symbol('row key part');
type Tagged = Frame & { [PART]?: number };
/** Each shownParts numbers parts on its own: a tag is `context + number`, valid only for its own context. */
const CONTEXT = 2 ** 32;
let contexts = 0;

/**
 * The listings' stacks: the view's shown frames at the granularity, each distinct part (framePart) numbered once,
 * so a stack's key is a short list of numbers instead of its frames' texts joined: building and hashing those long
 * strings for every stack was most of `top`'s row time. Frames are shared objects (core/frames/describe.ts
 * NativeFrames), and a frame carries its number under a symbol key: a property read costs less than a Map lookup
 * per frame (most of the key's time with the map).
 */
export function shownParts(view: StackViewer, g: Granularity): ShownParts {
  const ids = new Map<string, number>();
  const context = ++contexts * CONTEXT;
  let parts = new Int32Array(256);
  return (id) => {
    const stack = view(id);
    if (!stack) return null;
    const frames = g === 'files' ? atGranularity(stack.frames, g) : stack.frames;
    if (parts.length < frames.length) parts = new Int32Array(2 * frames.length);
    for (let i = 0; i < frames.length; i++) {
      const f: Tagged = frames[i];
      const tag = f[PART];
      let n: number;
      if (tag !== undefined && tag >= context && tag < context + CONTEXT) n = tag - context;
      else {
        const part = framePart(f, g);
        const known = ids.get(part);
        if (known === undefined) ids.set(part, (n = ids.size));
        else n = known;
        f[PART] = context + n;
      }
      parts[i] = n;
    }
    return parts.subarray(0, frames.length);
  };
}

const NO_PARTS = new Int32Array(0);

/** The listings' row key: the shown frames at the granularity; each stack its own row in the merged view at lines. */
export function listingRowKey(
  view: StackViewer,
  options: Pick<ViewOptions, 'mode' | 'filters'>,
  g: Granularity,
): RowKey {
  const perStack = options.mode === 'merged' && g === 'lines' && (options.filters?.length ?? 0) === 0;
  // each stack its own row: its frames are not even numbered
  if (perStack) return sameFramesKey((id) => (view(id) ? NO_PARTS : null), true);
  return sameFramesKey(shownParts(view, g));
}
