// Whether two byte ranges are equal, 8 bytes a step through DataViews (V8 compiles an unaligned getFloat64 to a
// plain load): about 4× faster than reading the text again, in browsers and Node alike (Node's Buffer.compare
// is not in browsers). Shared by the readers' caches of what a thread has read before.
//
// Why doubles: a compare of two doubles is one instruction, and 8 bytes a step made a cached dump's parse ~10 %
// faster than 4 (bench/README.md). Exact: two doubles are equal only when their bits are, but for NaN (never
// equal, even to itself) and ±0 (equal, with different sign bits). So the double loop stops at the first step
// whose doubles differ or are zero (a NaN differs), and the integer loop, which compares every bit, reads on
// from that step.

/** a[as, as + len) equals b[bs, bs + len); av and bv are DataViews over the same bytes as a and b. */
export function sameBytes(
  a: Uint8Array,
  av: DataView,
  as: number,
  b: Uint8Array,
  bv: DataView,
  bs: number,
  len: number,
): boolean {
  let i = as;
  let j = bs;
  const end8 = as + len - 7;
  for (; i < end8; i += 8, j += 8) {
    const x = av.getFloat64(i, true);
    if (x !== bv.getFloat64(j, true) || x === 0) break;
  }
  const end4 = as + len - 3;
  for (; i < end4; i += 4, j += 4) if (av.getUint32(i) !== bv.getUint32(j)) return false;
  for (; i < as + len; i++, j++) if (a[i] !== b[j]) return false;
  return true;
}

/** A DataView over exactly the bytes of `a`. */
export function viewOf(a: Uint8Array): DataView {
  return new DataView(a.buffer, a.byteOffset, a.byteLength);
}
