// Parsers for reference symbolizer output (GNU addr2line -a -f -i -C, llvm-symbolizer --addresses) and the
// frame-by-frame comparison the tests and the benchmark use. Pure.

export interface RefFrame {
  function: string | null;
  /** base name of the file */
  file: string | null;
  line: number | null;
}

function base(path: string): string {
  const i = path.lastIndexOf('/');
  return i >= 0 ? path.slice(i + 1) : path;
}

function parseLocation(loc: string): { file: string | null; line: number | null } {
  const clean = loc.replace(/\s+\(discriminator \d+\)$/, '');
  // GNU: file:line ; LLVM: file:line:column
  const m = /^(.*?):(\d+|\?)(?::(\d+))?$/.exec(clean);
  if (!m) return { file: null, line: null };
  const file = m[1] === '??' || m[1] === '' ? null : base(m[1]);
  const line = m[2] === '?' || m[2] === '0' ? null : Number(m[2]);
  return { file, line };
}

function frame(func: string, loc: string): RefFrame {
  const { file, line } = parseLocation(loc);
  return { function: func === '??' ? null : func, file, line };
}

/** GNU `addr2line -a -f -i -C`: address line, then function/location pairs. Keys are hex without 0x padding. */
export function parseGnuAddr2line(text: string): Map<string, RefFrame[]> {
  const out = new Map<string, RefFrame[]>();
  const lines = text.split('\n');
  let cur: RefFrame[] | null = null;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (/^0x[0-9a-f]+$/.test(l)) {
      cur = [];
      out.set(BigInt(l).toString(16), cur);
    } else if (cur && l !== '' && i + 1 < lines.length) {
      cur.push(frame(l, lines[i + 1]));
      i++;
    }
  }
  return out;
}

/** `llvm-symbolizer --addresses`: address line, function/location pairs, blank line. */
export function parseLlvmSymbolizer(text: string): Map<string, RefFrame[]> {
  const out = new Map<string, RefFrame[]>();
  for (const block of text.split(/\n\n+/)) {
    const lines = block.split('\n').filter((l) => l !== '');
    if (lines.length === 0 || !/^0x[0-9a-f]+$/.test(lines[0])) continue;
    const frames: RefFrame[] = [];
    for (let i = 1; i + 1 < lines.length; i += 2) frames.push(frame(lines[i], lines[i + 1]));
    out.set(BigInt(lines[0]).toString(16), frames);
  }
  return out;
}

/** Frames that carry nothing (`??` at `??:0`) are what the tools print when they know nothing. */
export function meaningful(frames: readonly RefFrame[]): RefFrame[] {
  return frames.filter((f) => f.function !== null || f.file !== null);
}

export interface Comparison {
  addresses: number;
  /** reference frames, inlined included (at least 1 per address: an unknown address counts as one frame) */
  frames: number;
  /** frames with the same file base name and line at the same position */
  sameLocation: number;
  /** frames with the same function name at the same position */
  sameFunction: number;
  /** frames where the reference knows file:line (not padding or symbol-only code) */
  locatedFrames: number;
  /** of those, frames with the same function name */
  sameFunctionLocated: number;
  functionMismatches: { address: string; ref: string | null; ours: string | null }[];
  /** addresses whose whole frame list has the same file:line sequence */
  sameStack: number;
  mismatches: { address: string; ref: RefFrame[]; ours: RefFrame[] }[];
}

/** A frame's location for comparison: `file:line`, or '?' when the tool knows no line (file alone, as GNU
 *  prints `crtstuff.c:?` from STT_FILE symbols, is not a location). */
function locKey(f: RefFrame | undefined): string {
  return f && f.file !== null && f.line !== null ? `${f.file}:${f.line}` : '?';
}

export function compareFrames(ref: Map<string, RefFrame[]>, ours: Map<string, RefFrame[]>): Comparison {
  const c: Comparison = {
    addresses: 0,
    frames: 0,
    sameLocation: 0,
    sameFunction: 0,
    locatedFrames: 0,
    sameFunctionLocated: 0,
    functionMismatches: [],
    sameStack: 0,
    mismatches: [],
  };
  for (const [addr, refFramesRaw] of ref) {
    const r = meaningful(refFramesRaw);
    const o = meaningful(ours.get(addr) ?? []);
    c.addresses++;
    // An address nobody can place counts as one frame with an unknown location.
    const n = Math.max(r.length, o.length, 1);
    c.frames += n;
    let same = 0;
    for (let i = 0; i < n; i++) {
      if (locKey(r[i]) === locKey(o[i])) same++;
      const sameFn = (r[i]?.function ?? null) === (o[i]?.function ?? null);
      if (sameFn) c.sameFunction++;
      if (locKey(r[i]) !== '?') {
        c.locatedFrames++;
        if (sameFn) c.sameFunctionLocated++;
        else c.functionMismatches.push({ address: addr, ref: r[i]?.function ?? null, ours: o[i]?.function ?? null });
      }
    }
    c.sameLocation += same;
    if (same === n) c.sameStack++;
    else c.mismatches.push({ address: addr, ref: r, ours: o });
  }
  return c;
}
