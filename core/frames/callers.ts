// Callers and callees of frames, for the inverted (bottom-up) flame graph and the sandwich view of one function.
// All take a stack's frame keys leaf first (as FrameTable.stackKeys / CallTreeOptions.stackKeys give them) and
// return keys leaf first again, so buildCallTree (call-tree.ts) turns them into the wanted tree. Each stack
// counts once, so every tree's total is the bytes of the stacks it covers.

/** Bottom-up: the tree's roots are the leaves (allocation sites), their children the callers. */
export function invertedKeys(keys: ArrayLike<number>): Int32Array {
  const out = new Int32Array(keys.length);
  for (let i = 0; i < keys.length; i++) out[i] = keys[keys.length - 1 - i];
  return out;
}

/**
 * Callers of `fn`: a tree rooted at fn whose children are its callers, up to the root. From fn's innermost
 * occurrence, so a recursive function's own outer calls show as its callers. null when the stack lacks fn.
 */
export function callerKeys(keys: ArrayLike<number>, fn: number): Int32Array | null {
  for (let i = 0; i < keys.length; i++) {
    if (keys[i] !== fn) continue;
    const out = new Int32Array(keys.length - i);
    for (let k = 0; k < out.length; k++) out[k] = keys[keys.length - 1 - k];
    return out;
  }
  return null;
}

/**
 * Callees of `fn`: a tree rooted at fn whose children are what it calls, down to the allocation site. From fn's
 * outermost occurrence, so recursion shows below it. null when the stack lacks fn.
 */
export function calleeKeys(keys: ArrayLike<number>, fn: number): Int32Array | null {
  for (let i = keys.length - 1; i >= 0; i--) {
    if (keys[i] !== fn) continue;
    return Int32Array.from({ length: i + 1 }, (_, k) => keys[k]);
  }
  return null;
}
