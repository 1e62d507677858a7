// The listings' "same visible frames" key for rows.ts (`heaplens top`/`diff`, the engine's top and diff answers):
// stacks whose shown frames are the same at the granularity (folded frames do not count) are one row, except in the
// merged view at line granularity without filters, where every frame is shown and each stack is its own row.

import type { RowKey } from './rows.js';
import { atGranularity, frameKey, type Granularity } from '../frames/stack-filter.js';
import type { FoldedStack } from '../frames/stack-labels.js';
import type { Frame } from '../frames/describe.js';
import type { StackViewer } from '../frames/view.js';
import type { ViewOptions } from '../model/vocab.js';

/** What a shown frame contributes to its stack's row key at the granularity. */
function framePart(f: Frame, g: Granularity): string {
  return f.function || f.kind === 'python' || g === 'files' ? frameKey(f, g) : f.address;
}

/** Where a frame keeps its part's number for the row keys being built (not a JSON field: a symbol key). */
const PART = Symbol('row key part');
type Tagged = Frame & { [PART]?: number };
/** Each rowKey numbers parts on its own: a tag is `context + number`, valid only for its own context. */
const CONTEXT = 2 ** 32;
let contexts = 0;
/** the key's UTF-16 units, reused: one string a stack, made by one decode (no string per frame) */
let units = new Uint16Array(256);
const UTF16 = new TextDecoder('utf-16le');

/**
 * What makes two shown stacks the same row: their surviving frames at the granularity. Each distinct frame part
 * is numbered once (`ids`), and frames are shared objects (core/frames/describe.ts NativeFrames), so a stack's
 * key is a short list of numbers instead of its frames' texts joined: building and hashing those long strings
 * for every stack was most of `top`'s row time. Each number is two UTF-16 units of 15 bits (fixed width, so equal
 * keys are equal lists): shorter to build and hash than decimal digits and separators. A frame carries its number
 * under a symbol key: a property read costs less than a Map lookup per frame (most of the key's time with the map).
 */
export function shownKey(
  stack: FoldedStack<Frame>,
  g: Granularity,
  ids: Map<string, number> = new Map(),
  context: number = ++contexts * CONTEXT,
): string {
  const frames = g === 'files' ? atGranularity(stack.frames, g) : stack.frames;
  if (units.length < 2 * frames.length) units = new Uint16Array(4 * frames.length);
  let u = 0;
  for (let i = 0; i < frames.length; i++) {
    const f: Tagged = frames[i];
    const tag = f[PART];
    let id: number;
    if (tag !== undefined && tag >= context && tag < context + CONTEXT) id = tag - context;
    else {
      const part = framePart(f, g);
      const known = ids.get(part);
      if (known === undefined) ids.set(part, (id = ids.size));
      else id = known;
      f[PART] = context + id;
    }
    // 15 bits a unit: never a surrogate, which the decoder would replace (two ids, one key)
    units[u++] = id & 0x7fff;
    units[u++] = id >>> 15;
  }
  return UTF16.decode(units.subarray(0, u));
}

/** The row key of a view's stacks at the granularity (null: the view drops the stack). */
export function rowKey(view: StackViewer, options: Pick<ViewOptions, 'mode' | 'filters'>, g: Granularity): RowKey {
  const perStack = options.mode === 'merged' && g === 'lines' && (options.filters?.length ?? 0) === 0;
  const ids = new Map<string, number>();
  const context = ++contexts * CONTEXT;
  return (id) => {
    const stack = view(id);
    if (!stack) return null;
    return perStack ? String(id) : shownKey(stack, g, ids, context);
  };
}
