// The hex frame addresses of a backtrace line ("0x7f… 0x7079…", blank-separated) as 64-bit values split in
// 32-bit words. This is the dump reader's inner loop: most of a dump's bytes are frame text.
//
// Why it is shaped so: a loop that tests every digit for the token's end mispredicts once per token (tokens
// are 12 digits for native frames, 16 for Python pseudo-addresses, interleaved). So a token is first tried as
// exactly 12 or 16 digits — the byte after it a blank or the line's end, every digit's value looked up and
// OR-ed into one validity check, no branch per digit — and only any other width takes the digit-at-a-time
// loop. The values are the same either way (tested against a BigInt reference on real dumps).

const SPACE = 32;
const TAB = 9;
const D0 = 48;
/** a digit's value; INVALID (a bit no value has) for any other byte, so one OR over a token checks it */
const INVALID = 256;
const VALUE = new Uint16Array(256).fill(INVALID);
for (let c = 0; c < 10; c++) VALUE[48 + c] = c;
for (let c = 0; c < 6; c++) VALUE[65 + c] = VALUE[97 + c] = 10 + c;

/**
 * Scans b[s, e) into `out` as (hi, lo) word pairs, frame k at out[2k], out[2k+1], storing at most `cap`
 * frames (out must hold 2·cap words). Returns how many frames the text has (more than cap when it has more),
 * or -1 when a token is not a hex address: no digits, a non-blank after them, or more than 16 significant
 * digits. Each token may start with "0x"/"0X"; digits may be either case; blanks are spaces and tabs.
 */
export function scanFrameWords(b: Uint8Array, s: number, e: number, out: Uint32Array, cap: number): number {
  const V = VALUE;
  let n = 0;
  let i = s;
  for (;;) {
    while (i < e && (b[i] === SPACE || b[i] === TAB)) i++;
    if (i >= e) break;
    if (b[i] === D0 && i + 1 < e && (b[i + 1] | 0x20) === 120 /* x */) i += 2;
    let hi = 0;
    let lo = 0;
    let width = 0;
    if (i + 12 <= e && (i + 12 === e || b[i + 12] === SPACE || b[i + 12] === TAB)) {
      const a0 = V[b[i]],
        a1 = V[b[i + 1]],
        a2 = V[b[i + 2]],
        a3 = V[b[i + 3]];
      const l0 = V[b[i + 4]],
        l1 = V[b[i + 5]],
        l2 = V[b[i + 6]],
        l3 = V[b[i + 7]];
      const l4 = V[b[i + 8]],
        l5 = V[b[i + 9]],
        l6 = V[b[i + 10]],
        l7 = V[b[i + 11]];
      if (((a0 | a1 | a2 | a3 | l0 | l1 | l2 | l3 | l4 | l5 | l6 | l7) & INVALID) === 0) {
        hi = (a0 << 12) | (a1 << 8) | (a2 << 4) | a3;
        lo = ((l0 << 28) | (l1 << 24) | (l2 << 20) | (l3 << 16) | (l4 << 12) | (l5 << 8) | (l6 << 4) | l7) >>> 0;
        width = 12;
      }
    } else if (i + 16 <= e && (i + 16 === e || b[i + 16] === SPACE || b[i + 16] === TAB)) {
      const a0 = V[b[i]],
        a1 = V[b[i + 1]],
        a2 = V[b[i + 2]],
        a3 = V[b[i + 3]];
      const a4 = V[b[i + 4]],
        a5 = V[b[i + 5]],
        a6 = V[b[i + 6]],
        a7 = V[b[i + 7]];
      const l0 = V[b[i + 8]],
        l1 = V[b[i + 9]],
        l2 = V[b[i + 10]],
        l3 = V[b[i + 11]];
      const l4 = V[b[i + 12]],
        l5 = V[b[i + 13]],
        l6 = V[b[i + 14]],
        l7 = V[b[i + 15]];
      if (((a0 | a1 | a2 | a3 | a4 | a5 | a6 | a7 | l0 | l1 | l2 | l3 | l4 | l5 | l6 | l7) & INVALID) === 0) {
        hi = ((a0 << 28) | (a1 << 24) | (a2 << 20) | (a3 << 16) | (a4 << 12) | (a5 << 8) | (a6 << 4) | a7) >>> 0;
        lo = ((l0 << 28) | (l1 << 24) | (l2 << 20) | (l3 << 16) | (l4 << 12) | (l5 << 8) | (l6 << 4) | l7) >>> 0;
        width = 16;
      }
    }
    if (width > 0) {
      i += width;
    } else {
      // any other width (or a bad digit inside a 12/16-byte token): a digit at a time
      const start = i;
      let d = 0;
      while (i < e && (d = V[b[i]]) !== INVALID) {
        hi = ((hi << 4) | (lo >>> 28)) >>> 0;
        lo = ((lo << 4) | d) >>> 0;
        i++;
      }
      const digits = i - start;
      if (digits === 0 || (i < e && b[i] !== SPACE && b[i] !== TAB)) return -1;
      // zero padding may make a valid address longer than 16 digits
      if (digits > 16 && digits - 16 > leadingZeros(b, start, i)) return -1;
    }
    if (n < cap) {
      out[2 * n] = hi;
      out[2 * n + 1] = lo;
    }
    n++;
  }
  return n;
}

/**
 * A stack's hash over its words (FNV-1a on 32-bit words, seeded with the frame count): the one the readers, their
 * backtrace cache and the merge all use, so a hash computed (or kept) while reading is the merge's too.
 */
export function framesHash(words: Uint32Array, from: number, to: number): number {
  let h = 0x811c9dc5 ^ ((to - from) >>> 1);
  for (let i = from; i < to; i++) h = Math.imul(h ^ words[i], 0x01000193);
  return h | 0;
}

/** Leading '0' digits of a hex run, its last digit not counted. */
function leadingZeros(b: Uint8Array, s: number, e: number): number {
  let k = 0;
  while (s + k < e - 1 && b[s + k] === D0) k++;
  return k;
}
