// valgrind massif output (massif.out.<pid>, format of massif/ms_main.c's write_snapshots_to_file):
//   desc: / cmd: / time_unit: (i, ms or B), then per snapshot "snapshot=N", time=, mem_heap_B=,
//   mem_heap_extra_B=, mem_stacks_B=, heap_tree=empty|detailed|peak and, for detailed and peak snapshots, the
//   allocation tree: one node a line, "n<children>: <bytes> <what>", indented one space per level, where <what>
//   is "0xADDR: fn (file:line)", "(heap allocation functions) …" at the root, or "in N places, … below massif's
//   threshold (…)" for what massif folded together.
// Each tree leaf becomes a stack: its path from the root, which massif writes allocation site first (the root's
// children call malloc), the root's "heap allocation functions" left out; a below-threshold entry is one stack
// under its parent. Heap, heap-admin ("extra") and stack bytes are kept apart.
// Every snapshot totals mem_heap_B, as ms_print's useful-heap column: what a node holds beyond its children (massif's
// trees need not add up, with --pages-as-heap=yes above all) is a stack ending at that node, and what the tree does
// not explain at all is its own row, "(heap massif's tree does not explain)". A node is bounded by its parent (the
// root by mem_heap_B): a larger one is damage, said and cut to its parent's size.
// Inlined frames: massif writes an inlined call chain as nodes at one address (innermost first); they become one
// address with several frames, innermost first (as pprof's Location.line), so a view prints each once.

import type { DumpRecord, ParseProblem } from './heap-dump.js';
import type { ProfileFrame } from './dump-types.js';
import { MAX_FRAMES_PER_STACK, MAX_LINE_BYTES } from './limits.js';

export interface MassifStack {
  /** leaf first: an address ("0x…", synthetic for folded entries) and its frames, innermost inlined first */
  frames: { address: bigint; frames: ProfileFrame[] }[];
  bytes: number;
}

export interface MassifSnapshot {
  index: number;
  /** in the file's time unit */
  time: number;
  heapBytes: number;
  heapExtraBytes: number;
  stacksBytes: number;
  tree: 'empty' | 'detailed' | 'peak';
  stacks: MassifStack[];
  /** bytes of mem_heap_B the tree does not explain (its own row among `stacks`), 0 when it adds up */
  unexplainedBytes: number;
  /** 1-based line of "snapshot=N" */
  line: number;
}

export interface MassifFile {
  desc: string;
  cmd: string;
  /** "i" (instructions), "ms" (milliseconds since start) or "B" (bytes allocated and freed) */
  timeUnit: string;
  snapshots: MassifSnapshot[];
  problems: ParseProblem[];
}

/** Snapshots read from one file: massif's --max-snapshots is at most 1000. */
export const MAX_MASSIF_SNAPSHOTS = 1000;

/** Largest massif file read (it is text read whole): massif keeps at most 1000 snapshots of small trees. */
export const MAX_MASSIF_BYTES = 256 * 1024 * 1024;

/** Synthetic addresses of folded ("below threshold") entries: "ma" in the top bits, outside user space. */
const FOLDED_BASE = 0x6d61n << 48n;
/** The heap a snapshot's tree does not explain. */
const UNEXPLAINED = {
  address: 0x6d61fffen << 32n,
  frames: [{ function: "(heap massif's tree does not explain)", file: null, line: null }],
};

interface OpenNode {
  frame: { address: bigint; frame: ProfileFrame } | null;
  left: number;
  bytes: number;
  childBytes: number;
  children: number;
}

/** The frames of a path (root first = allocation site first), one address per inlined chain. */
function pathFrames(path: readonly OpenNode[]): MassifStack['frames'] {
  const out: MassifStack['frames'] = [];
  for (const p of path) {
    if (!p.frame) continue;
    const prev = out[out.length - 1];
    // the same address as the node above, another function: inlined there (a recursion repeats the same frame)
    if (prev && prev.address === p.frame.address && !prev.frames.some((f) => sameFrame(f, p.frame!.frame)))
      prev.frames.push(p.frame.frame);
    else out.push({ address: p.frame.address, frames: [p.frame.frame] });
  }
  return out;
}

const sameFrame = (a: ProfileFrame, b: ProfileFrame) =>
  a.function === b.function && a.file === b.file && a.line === b.line;

const NODE = /^( *)n(\d+): (\d+) (.*)$/;
const CODE = /^(0x[0-9a-fA-F]+): (.*?)(?: \(([^()]*?)(?::(\d+))?\))?$/;

/** Parses a massif file's text. Never throws: damage becomes problems naming the line. */
export function parseMassif(text: string): MassifFile {
  const problems: ParseProblem[] = [];
  const out: MassifFile = { desc: '', cmd: '', timeUnit: 'i', snapshots: [], problems };
  const problem = (line: number, message: string) => {
    if (problems.length < 50) problems.push({ line, byteOffset: 0, message });
  };
  const lines = text.split('\n');
  let snap: MassifSnapshot | null = null;
  // the open path of the tree being read: per depth, the node's frame, the children it still expects, its bytes
  let path: OpenNode[] = [];
  const folded = new Map<string, bigint>();
  let sum = 0;
  /** A node is complete: what it holds beyond its children is a stack ending at it. */
  const close = (n: number, lineNo: number) => {
    while (path.length > n) {
      const node = path[path.length - 1];
      if (snap && node.left > 0)
        problem(
          lineNo,
          `snapshot ${snap.index}: its tree ends before all the children a node announces (${node.left} missing)`,
        );
      const own = node.bytes - node.childBytes;
      if (snap && node.children > 0 && own > 0) {
        const frames = pathFrames(path);
        if (frames.length > 0) {
          snap.stacks.push({ frames, bytes: own });
          sum += own;
        }
      }
      path.pop();
    }
  };
  const finishTree = (lineNo: number) => {
    if (snap && snap.tree !== 'empty' && path.some((p) => p.left > 0))
      problem(lineNo, `snapshot ${snap.index}: its tree ends before all the children it announces`);
    else close(0, lineNo);
    path = [];
    if (snap && snap.tree !== 'empty' && snap.heapBytes > sum) {
      snap.unexplainedBytes = snap.heapBytes - sum;
      snap.stacks.push({ frames: [UNEXPLAINED], bytes: snap.unexplainedBytes });
    }
    path = [];
    sum = 0;
  };
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i];
    const lineNo = i + 1;
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.length > MAX_LINE_BYTES) {
      problem(lineNo, `line longer than ${MAX_LINE_BYTES} bytes skipped`);
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    let m: RegExpExecArray | null;
    if (!snap && (m = /^(desc|cmd|time_unit): ?(.*)$/.exec(line))) {
      if (m[1] === 'desc') out.desc = m[2];
      else if (m[1] === 'cmd') out.cmd = m[2];
      else out.timeUnit = m[2].trim();
      continue;
    }
    if ((m = /^snapshot=(\d+)$/.exec(line))) {
      finishTree(lineNo);
      snap = {
        index: Number(m[1]),
        time: 0,
        heapBytes: 0,
        heapExtraBytes: 0,
        stacksBytes: 0,
        tree: 'empty',
        stacks: [],
        unexplainedBytes: 0,
        line: lineNo,
      };
      out.snapshots.push(snap);
      continue;
    }
    if (!snap) {
      problem(lineNo, `unrecognized line before the first snapshot skipped: ${JSON.stringify(line.slice(0, 80))}`);
      continue;
    }
    if ((m = /^(time|mem_heap_B|mem_heap_extra_B|mem_stacks_B)=(\d+(?:\.\d+)?)$/.exec(line))) {
      const v = Number(m[2]);
      if (!Number.isFinite(v) || v > Number.MAX_SAFE_INTEGER) {
        problem(
          lineNo,
          `${m[1]} ${m[2].length > 30 ? 'with ' + m[2].length + ' digits' : m[2]} is not a usable figure`,
        );
        continue;
      }
      if (m[1] === 'time') snap.time = v;
      else if (m[1] === 'mem_heap_B') snap.heapBytes = v;
      else if (m[1] === 'mem_heap_extra_B') snap.heapExtraBytes = v;
      else snap.stacksBytes = v;
      continue;
    }
    if ((m = /^heap_tree=(empty|detailed|peak)$/.exec(line))) {
      snap.tree = m[1] as MassifSnapshot['tree'];
      path = [];
      continue;
    }
    if ((m = NODE.exec(line))) {
      if (snap.tree === 'empty') {
        problem(lineNo, `snapshot ${snap.index}: tree line in a snapshot whose heap_tree=empty, skipped`);
        continue;
      }
      const depth = m[1].length;
      const children = Number(m[2]);
      let bytes = Number(m[3]);
      const what = m[4];
      // depth must follow the open path: a child of the node above, or of one of its open ancestors
      close(depth, lineNo);
      if (depth !== path.length || (depth > 0 && path[depth - 1].left <= 0) || depth >= MAX_FRAMES_PER_STACK) {
        problem(lineNo, `snapshot ${snap.index}: tree node at depth ${depth} has no parent expecting it, skipped`);
        continue;
      }
      // a node holds at most what its parent does (the root: mem_heap_B); more is damage (a 400-digit figure)
      const bound = depth > 0 ? path[depth - 1].bytes - path[depth - 1].childBytes : snap.heapBytes;
      if (!Number.isSafeInteger(bytes) || bytes > bound) {
        problem(
          lineNo,
          `snapshot ${snap.index}: a tree node of ${m[3].length > 15 ? m[3].length + ' digits' : m[3] + ' B'} is more than ${depth > 0 ? 'what its parent has left' : 'mem_heap_B'} (${bound} B): counted as ${bound} B`,
        );
        bytes = bound;
      }
      if (depth > 0) {
        path[depth - 1].left--;
        path[depth - 1].childBytes += bytes;
      }
      let frame: { address: bigint; frame: ProfileFrame } | null = null;
      const code = CODE.exec(what);
      if (depth === 0)
        frame = null; // "(heap allocation functions) malloc/new/new[], --alloc-fns, etc."
      else if (code && BigInt(code[1]) !== 0n) {
        frame = {
          address: BigInt(code[1]),
          frame: { function: code[2], file: code[3] ?? null, line: code[4] ? Number(code[4]) : null },
        };
      } else {
        // "in 2 places, all below massif's threshold (1.00%)": one stack under its parent; "0x0: ???" (pages
        // massif found no code address for) likewise by its text
        const label = code ? `(${code[2]} at no code address)` : `(${what.replace(/^in /, '')})`;
        let a = folded.get(label);
        if (a === undefined) folded.set(label, (a = FOLDED_BASE + BigInt(folded.size)));
        frame = { address: a, frame: { function: label, file: null, line: null } };
      }
      path.push({ frame, left: children, bytes, childBytes: 0, children });
      if (children === 0 && (depth > 0 || bytes > 0)) {
        // the root's children called malloc, their children called them: root to leaf is leaf-first already
        const frames = pathFrames(path);
        if (frames.length > 0) {
          snap.stacks.push({ frames, bytes });
          sum += bytes;
        }
      }
      continue;
    }
    problem(lineNo, `unrecognized line skipped: ${JSON.stringify(line.slice(0, 80))}`);
  }
  finishTree(lines.length);
  return out;
}

/** A snapshot without a tree: its heap as one stack of this frame (massif wrote totals only). */
const NO_TREE = 0x6d61ffffn << 32n;

/** One snapshot in the dump readers' terms: a record per stack (objects unknown to massif: 1 per stack), names by address. */
export function massifRecords(s: MassifSnapshot): { records: DumpRecord[]; symbols: Map<string, ProfileFrame[]> } {
  const symbols = new Map<string, ProfileFrame[]>();
  const stacks: MassifStack[] =
    s.tree === 'empty' || s.stacks.length === 0
      ? s.heapBytes > 0
        ? [
            {
              frames: [
                {
                  address: NO_TREE,
                  frames: [{ function: '(massif kept no allocation tree for this snapshot)', file: null, line: null }],
                },
              ],
              bytes: s.heapBytes,
            },
          ]
        : []
      : s.stacks;
  const records: DumpRecord[] = [];
  for (const st of stacks) {
    if (st.bytes <= 0) continue;
    const words = new Uint32Array(st.frames.length * 2);
    st.frames.forEach((f, j) => {
      words[2 * j] = Number(f.address >> 32n) >>> 0;
      words[2 * j + 1] = Number(f.address & 0xffffffffn) >>> 0;
      symbols.set('0x' + f.address.toString(16), f.frames);
    });
    records.push({
      frameWords: words,
      counts: { liveBytes: st.bytes, liveObjects: 1, accumBytes: 0, accumObjects: 0 },
      threads: [],
      line: s.line,
    });
  }
  return { records, symbols };
}

/** The snapshot a view opens on: the last with an allocation tree (massif keeps trees for a few only), else the last. */
export function massifDefaultSnapshot(snapshots: readonly Pick<MassifSnapshot, 'tree'>[]): number {
  for (let i = snapshots.length - 1; i >= 0; i--) if (snapshots[i].tree !== 'empty') return i;
  return snapshots.length - 1;
}
