// Deterministic mutations of real input files: the same seed gives the same mutants on every machine,
// so a failing case reproduces from its number alone.

/** xorshift32: small, fast, and the same sequence everywhere. */
export class Rng {
  constructor(private s: number) {
    if (this.s === 0) this.s = 0x9e3779b9;
  }
  next(): number {
    let x = this.s;
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    this.s = x >>> 0;
    return this.s;
  }
  int(n: number): number {
    return n <= 0 ? 0 : this.next() % n;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
}

const enc = new TextEncoder();
/** Text that hits the readers' edges: numbers out of range, signs, separators, controls, record starts. */
const TOKENS = [
  '18446744073709551616',
  '9'.repeat(400),
  '-1',
  '0',
  '100000000000000000000000',
  '\n',
  '\r\n',
  '\n\n',
  ' ',
  '\t',
  '@ ',
  '  t*: ',
  ': ',
  '[',
  ']',
  '0x',
  '0xffffffffffffffff',
  'MAPPED_LIBRARIES:\n',
  'PYFRAMES/1\n',
  'heap_v2/',
  '\u202e',
  '\u2028',
  '\u001b[2J',
  '\u0000',
  '"',
  '{',
  '}',
  '\\u0000',
  'null',
  '1e309',
].map((t) => enc.encode(t));

function splice(b: Uint8Array, at: number, delWanted: number, ins: Uint8Array): Uint8Array {
  const del = Math.max(0, Math.min(delWanted, b.length - at));
  const out = new Uint8Array(b.length - del + ins.length);
  out.set(b.subarray(0, at));
  out.set(ins, at);
  out.set(b.subarray(at + del), at + ins.length);
  return out;
}

/** Positions just after a newline (line starts), for line-level mutations. */
function lineStarts(b: Uint8Array): number[] {
  const out = [0];
  for (let i = b.indexOf(10); i >= 0 && out.length < 100_000; i = b.indexOf(10, i + 1)) out.push(i + 1);
  return out;
}

/** Bytes one repeat may add. */
const MAX_GROWTH = 256 << 10;

/** One mutant: 1–4 mutations of the kinds a damaged copy or a hostile writer makes. */
export function mutate(orig: Uint8Array, rng: Rng): Uint8Array {
  let b = orig;
  const n = 1 + rng.int(4);
  for (let k = 0; k < n; k++) {
    const at = rng.int(b.length + 1);
    switch (rng.int(9)) {
      case 0: // flip bytes
        b = b.slice();
        for (let j = 0, m = 1 + rng.int(8); j < m && b.length > 0; j++) b[rng.int(b.length)] ^= 1 << rng.int(8);
        break;
      case 1: // a token
        b = splice(b, at, rng.int(3) === 0 ? rng.int(8) : 0, rng.pick(TOKENS));
        break;
      case 2: // delete a range
        b = splice(b, at, rng.int(Math.min(b.length - at, 256) + 1), new Uint8Array(0));
        break;
      case 3: // duplicate a range
        {
          const len = rng.int(Math.min(b.length - at, 512) + 1);
          b = splice(b, at, 0, b.slice(at, at + len));
        }
        break;
      case 4: // truncate
        b = b.slice(0, at);
        break;
      case 5: // replace a number (a run of digits) by a token
        {
          let i = at;
          while (i < b.length && (b[i] < 48 || b[i] > 57)) i++;
          let j = i;
          while (j < b.length && b[j] >= 48 && b[j] <= 57) j++;
          b = splice(b, i, j - i, rng.pick(TOKENS.slice(0, 5)));
        }
        break;
      case 6: // swap or drop a line
        {
          const starts = lineStarts(b);
          const s = rng.pick(starts);
          const e = b.indexOf(10, s) + 1 || b.length;
          b = rng.int(2) === 0 ? splice(b, s, e - s, new Uint8Array(0)) : splice(b, rng.pick(starts), 0, b.slice(s, e));
        }
        break;
      case 7: // repeat a line many times (deep stacks, long lines, many records)
        {
          const starts = lineStarts(b);
          const s = rng.pick(starts);
          const e = b.indexOf(10, s) + 1 || b.length;
          const line = b.slice(s, e);
          // at most MAX_GROWTH more bytes: the point is many records or a deep stack, not a big input
          const times = Math.max(1, Math.min(1 + rng.int(2000), Math.floor(MAX_GROWTH / Math.max(1, line.length))));
          const rep = new Uint8Array(line.length * times);
          for (let t = 0; t < times; t++) rep.set(line, t * line.length);
          b = splice(b, s, 0, rep);
        }
        break;
      default: {
        // random bytes
        const r = new Uint8Array(1 + rng.int(32));
        for (let j = 0; j < r.length; j++) r[j] = rng.int(256);
        b = splice(b, at, 0, r);
      }
    }
  }
  return b;
}
