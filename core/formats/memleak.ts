// Reports of bcc's memleak (iovisor/bcc tools/memleak.py, `print_outstanding` and `print_outstanding_combined`)
// and of our native-tools/ebpf/memleak.bt, which prints the same format:
//
//   Attaching to pid 1234, Ctrl+C to quit.                  (or: Executing 'cmd' and tracing the resulting process.)
//   [20:14:03] Top 10 stacks with outstanding allocations:
//   	addr = 7f3a1c000b70 size = 65536                      (-a / --show-allocs, default mode only)
//   	655360 bytes in 10 allocations from stack
//   		0x000055d0c3a0e1b3	leak_step+0x13 [leaky]        (default mode: address, tab, symbol)
//   		main+0x5a [leaky]                                 (--combined-only: symbol only)
//   		[unknown] [libc.so.6]  /  [unknown]  /  stack information lost
//
// memleak.bt runs on bpftrace 0.17, which cannot iterate a map: it prints the same header, then two bpftrace maps
// keyed by the same user stacks (`ustack(perf)`: address, symbol+decimal offset, module path), then a trailer:
//
//   # at: 20:14:03.876296                                   (when the interval fired, µs)
//   @outstanding_bytes[
//   	55d0c3a0e1b3 leak_step+19 (/srv/job/leaky)
//   	7f7b0eb2324a 0x7f7b0eb2324a ([unknown])
//   ]: 655360
//   @outstanding_allocs[ … same stack … ]: 10
//   @calls: 30233
//   # end of report
//
// The two maps are paired by the stack's addresses (bpftrace names frames while printing, so a process that
// exits mid-report has the same stack named in one map and [unknown] in the other), and frames become bcc's
// `symbol+0xoff [module]`.
//
// Each report is a snapshot of the outstanding bytes and allocations by stack (the top N stacks only, as bcc
// prints them), frames leaf first. Lines this reader does not know are skipped and counted; a report cut by the
// end of the file (no final newline, or a stack with no frames at the end) is marked incomplete.

export interface MemleakFrame {
  /** the frame as printed, without the address column: `leak_step+0x13 [leaky]`, `[unknown]` */
  text: string;
  /** `leak_step`; null for `[unknown]` */
  symbol: string | null;
  /** `0x13` after the symbol; null without one */
  offset: string | null;
  /** `leaky`, `libc.so.6`; null when bcc printed none */
  module: string | null;
  /** the return address of the default mode's first column, normalized (`0x55d0c3a0e1b3`); null in --combined-only */
  address: string | null;
}

export interface MemleakStack {
  bytes: number;
  allocations: number;
  frames: MemleakFrame[];
  /** 1-based line of `N bytes in M allocations from stack` */
  line: number;
}

export interface MemleakReport {
  /** 1-based line of the `[HH:MM:SS] Top N stacks …` header */
  line: number;
  byteOffset: number;
  /** the stamp: seconds since midnight of the tracer's local day */
  secondsOfDay: number;
  /** days since the first report (the stamp went back: midnight passed) */
  day: number;
  /** N of "Top N stacks" */
  top: number;
  stacks: MemleakStack[];
  /** `addr = … size = …` lines (-a) in this report */
  allocationLines: number;
  /** false when the file ended inside this report */
  complete: boolean;
  /** memleak.bt: seconds since midnight with µs (`# at:`), null otherwise */
  preciseSecondsOfDay: number | null;
  /** memleak.bt: allocator calls traced so far (`@calls:`), null otherwise */
  calls: number | null;
}

export interface MemleakProblem {
  line: number;
  message: string;
}

export interface MemleakFile {
  pid: number | null;
  command: string | null;
  /** 'combined' when the frames carry no address column (--combined-only); 'bpftrace' for memleak.bt */
  mode: 'default' | 'combined' | 'bpftrace' | null;
  /** memleak.bt's `# date:` line: the local date and UTC offset of the first report (`2026-12-01`, `+0000`) */
  date: { day: string; offsetMinutes: number | null } | null;
  reports: MemleakReport[];
  problems: MemleakProblem[];
  /** lines that are none of the above (bcc's warnings, a shell prompt): skipped */
  skippedLines: number;
}

/** Bounds on untrusted text: bcc prints at most -T stacks of at most 127 frames; these are far above. */
export const MAX_MEMLEAK_STACKS_PER_REPORT = 100_000;
export const MAX_MEMLEAK_FRAMES = 1024;
const MAX_LINE_CHARS = 64 * 1024;
const MAX_PROBLEMS = 100;

const HEADER = /^\[(\d\d):(\d\d):(\d\d)\] Top (\d+) stacks with outstanding allocations:\s*$/;
const STACK = /^\t(\d+) bytes in (\d+) allocations from stack\s*$/;
const ALLOC = /^\taddr = [0-9a-fA-F]+ size = \d+\s*$/;
const ATTACH = /^Attaching to pid (\d+), Ctrl\+C to quit\.\s*$/;
const EXECUTE = /^Executing '(.*)' and tracing the resulting process\.\s*$/;
const COMMENT = /^# (pid|cmdline): (.*)$/;
const BT_MAP = /^@outstanding_(bytes|allocs)\[\s*$/;
const BT_END = /^\]: (-?\d+)\s*$/;
const BT_FRAME = /^\t([0-9a-fA-F]{1,16}) (.*?)(?: \(([^()]*)\))?\s*$/;
const BT_CALLS = /^@calls: (\d+)\s*$/;
const BT_AT = /^# at: (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?\s*$/;
const BT_DATE = /^# date: (\d{4}-\d\d-\d\d) \d\d:\d\d:\d\d(?: ([+-])(\d\d)(\d\d))?\s*$/;
const FRAME_ADDR = /^(0x[0-9a-fA-F]{1,16})\t(.*)$/;
const SYMBOL = /^(.*?)(?:\+(0x[0-9a-fA-F]+))?(?: \[([^\]]*)\])?$/;

/** True when the first bytes look like a memleak report (its attach line or a report header). */
export function looksLikeMemleak(head: string): boolean {
  const lines = head.split('\n').map((l) => l.replace(/\r$/, ''));
  return lines.some((l) => HEADER.test(l) || ATTACH.test(l) || EXECUTE.test(l) || /^# heaplens memleak\.bt/.test(l));
}

function parseFrame(body: string, address: string | null): MemleakFrame {
  const text = body.trim();
  if (text === '[unknown]' || text === 'stack information lost')
    return { text, symbol: null, offset: null, module: null, address };
  const m = SYMBOL.exec(text);
  let symbol: string | null = m?.[1] ?? text;
  if (symbol === '[unknown]' || symbol === '') symbol = null;
  return { text, symbol, offset: m?.[2] ?? null, module: m?.[3] ?? null, address };
}

/** A bpftrace `ustack(perf)` line as bcc prints the frame: `leak_step+0x13 [leaky]`, `[unknown]`. */
function btFrame(hex: string, sym: string, path: string | undefined): MemleakFrame {
  const address = '0x' + BigInt('0x' + hex).toString(16);
  const m = /^(.*)\+(\d+)$/.exec(sym);
  const symbol = sym === '' || /^0x[0-9a-f]+$/i.test(sym) || sym === '[unknown]' ? null : m ? m[1] : sym;
  const offset = symbol !== null && m ? '0x' + Number(m[2]).toString(16) : null;
  const module = path && path !== '[unknown]' ? path.slice(path.lastIndexOf('/') + 1) : null;
  const text = (symbol === null ? '[unknown]' : symbol + (offset ? '+' + offset : '')) + (module ? ` [${module}]` : '');
  return { text, symbol, offset, module, address };
}

/** Reads a whole memleak output (text already decoded). */
export function parseMemleak(text: string): MemleakFile {
  const out: MemleakFile = {
    pid: null,
    command: null,
    mode: null,
    date: null,
    reports: [],
    problems: [],
    skippedLines: 0,
  };
  // memleak.bt: the map being read, and the stacks of this report by their addresses (bytes and allocs paired)
  let btMap: { which: 'bytes' | 'allocs'; frames: MemleakFrame[]; line: number } | null = null;
  let btStacks = new Map<string, MemleakStack>();
  let btEnded = true;
  const problem = (line: number, message: string) => {
    if (out.problems.length < MAX_PROBLEMS) out.problems.push({ line, message });
  };
  const endsWithNewline = text.length === 0 || text.endsWith('\n');
  let report: MemleakReport | null = null;
  let stack: MemleakStack | null = null;
  let lastSeconds = -1;
  let day = 0;
  let offset = 0;
  let lineNo = 0;
  while (offset < text.length) {
    let end = text.indexOf('\n', offset);
    if (end < 0) end = text.length;
    const startOffset = offset;
    let line = text.slice(offset, end);
    offset = end + 1;
    lineNo++;
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (line.length > MAX_LINE_CHARS) {
      problem(lineNo, `line longer than ${MAX_LINE_CHARS} characters skipped`);
      continue;
    }
    let m: RegExpExecArray | null;
    if ((m = HEADER.exec(line))) {
      const secs = Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]);
      if (Number(m[1]) > 23 || Number(m[2]) > 59 || Number(m[3]) > 60) {
        problem(lineNo, `report stamp ${m[1]}:${m[2]}:${m[3]} is not a time of day; report skipped`);
        report = null;
        stack = null;
        continue;
      }
      if (secs < lastSeconds) day++; // the tracer ran past midnight
      lastSeconds = secs;
      report = {
        line: lineNo,
        byteOffset: startOffset,
        secondsOfDay: secs,
        day,
        top: Number(m[4]),
        stacks: [],
        allocationLines: 0,
        complete: true,
        preciseSecondsOfDay: null,
        calls: null,
      };
      if (!btEnded && out.mode === 'bpftrace') {
        const prev = out.reports[out.reports.length - 1];
        if (prev) {
          prev.complete = false;
          problem(lineNo, `the report of line ${prev.line} has no "# end of report" (cut); it is partial`);
        }
      }
      out.reports.push(report);
      stack = null;
      btMap = null;
      btStacks = new Map();
      btEnded = false;
    } else if (btMap) {
      if ((m = BT_END.exec(line))) {
        const v = Number(m[1]);
        const key = btMap.frames.map((f) => f.address).join(' ');
        let st = btStacks.get(key);
        if (!st && report) {
          st = { bytes: 0, allocations: 0, frames: btMap.frames, line: btMap.line };
          btStacks.set(key, st);
          report.stacks.push(st);
        }
        // a frame named in one map and [unknown] in the other keeps its name
        if (st)
          st.frames = st.frames.map((f, i) => (f.symbol === null && btMap!.frames[i]?.symbol ? btMap!.frames[i] : f));
        if (st && Number.isSafeInteger(v) && v >= 0) {
          if (btMap.which === 'bytes') st.bytes = v;
          else st.allocations = v;
        } else if (st) problem(lineNo, `stack value ${m[1]} is not a size; counted as 0`);
        btMap = null;
      } else if ((m = BT_FRAME.exec(line))) {
        if (btMap.frames.length < MAX_MEMLEAK_FRAMES) btMap.frames.push(btFrame(m[1], m[2], m[3]));
      } else {
        problem(lineNo, 'a stack of memleak.bt ends without its "]: value" line; skipped');
        btMap = null;
      }
    } else if ((m = BT_MAP.exec(line))) {
      out.mode = 'bpftrace';
      if (!report) {
        problem(lineNo, 'a stack before any report header; skipped');
        continue;
      }
      if (report.stacks.length >= MAX_MEMLEAK_STACKS_PER_REPORT) continue;
      btMap = { which: m[1] === 'bytes' ? 'bytes' : 'allocs', frames: [], line: lineNo };
    } else if ((m = BT_CALLS.exec(line))) {
      if (report && !btEnded) report.calls = Number(m[1]);
    } else if ((m = BT_AT.exec(line))) {
      if (report && !btEnded)
        report.preciseSecondsOfDay =
          Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) + Number(`0.${m[4] ?? '0'}`);
    } else if (line.startsWith('# end of report')) {
      btEnded = true;
    } else if ((m = BT_DATE.exec(line))) {
      out.date = {
        day: m[1],
        offsetMinutes: m[2] ? (m[2] === '-' ? -1 : 1) * (Number(m[3]) * 60 + Number(m[4])) : null,
      };
    } else if ((m = STACK.exec(line))) {
      if (!report) {
        problem(lineNo, 'a stack before any report header; skipped');
        continue;
      }
      const bytes = Number(m[1]);
      const allocations = Number(m[2]);
      if (!Number.isSafeInteger(bytes) || !Number.isSafeInteger(allocations) || bytes > 0 !== allocations > 0) {
        problem(lineNo, `stack counts ${m[1]} bytes / ${m[2]} allocations are not sizes; stack skipped`);
        stack = null;
        continue;
      }
      if (report.stacks.length >= MAX_MEMLEAK_STACKS_PER_REPORT) {
        problem(lineNo, `more than ${MAX_MEMLEAK_STACKS_PER_REPORT} stacks in one report; the rest skipped`);
        stack = null;
        continue;
      }
      stack = { bytes, allocations, frames: [], line: lineNo };
      report.stacks.push(stack);
    } else if (line.startsWith('\t\t') && stack) {
      const body = line.slice(2);
      const a = FRAME_ADDR.exec(body);
      if (out.mode === null) out.mode = a ? 'default' : 'combined';
      if (stack.frames.length >= MAX_MEMLEAK_FRAMES) continue;
      stack.frames.push(parseFrame(a ? a[2] : body, a ? '0x' + BigInt(a[1]).toString(16) : null));
    } else if (ALLOC.test(line) && report) {
      report.allocationLines++;
    } else if ((m = ATTACH.exec(line))) {
      out.pid = Number(m[1]);
    } else if ((m = EXECUTE.exec(line))) {
      out.command = m[1];
    } else if ((m = COMMENT.exec(line))) {
      if (m[1] === 'pid' && /^\d{1,10}$/.test(m[2].trim())) out.pid = Number(m[2].trim());
      else if (m[1] === 'cmdline') out.command = m[2].slice(0, 4096);
    } else if (line.trim() !== '' && !line.startsWith('#')) {
      out.skippedLines++;
      stack = null;
    }
  }
  const last = out.reports[out.reports.length - 1];
  if (last && out.mode === 'bpftrace') {
    if (!btEnded) {
      last.complete = false;
      problem(
        lineNo,
        'the file ends inside its last report (no "# end of report": the tracer was stopped while printing); that report is partial',
      );
    }
  } else if (last) {
    const lastStack = last.stacks[last.stacks.length - 1];
    if (!endsWithNewline || (lastStack && lastStack.frames.length === 0)) {
      last.complete = false;
      problem(
        lineNo,
        'the file ends inside its last report (cut while the tracer was writing?); that report is partial',
      );
    }
  }
  // bcc and bpftrace name frames while printing: once the process exits, the same return address prints as
  // [unknown]. A name printed for an address in any report names it in all of them.
  const named = new Map<string, MemleakFrame>();
  for (const r of out.reports)
    for (const st of r.stacks)
      for (const f of st.frames)
        if (f.address !== null && f.symbol !== null && !named.has(f.address)) named.set(f.address, f);
  if (named.size > 0)
    for (const r of out.reports)
      for (const st of r.stacks)
        st.frames = st.frames.map((f) => (f.symbol === null && f.address !== null ? (named.get(f.address) ?? f) : f));
  if (out.reports.length === 0) problem(lineNo, 'no "[HH:MM:SS] Top N stacks with outstanding allocations:" report');
  return out;
}
