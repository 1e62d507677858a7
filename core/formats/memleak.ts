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
// libbpf-tools' memleak (C, iovisor/bcc libbpf-tools/memleak.c) prints the same report unpadded and less indented:
//
//   [9:5:3] Top 2 stacks with outstanding allocations:      (hours, minutes, seconds not zero-padded)
//   655360 bytes in 10 allocations from stack               (no indentation)
//   	addr = 0x7f3a1c000b70 size = 65536                   (-a)
//   	0 [<000055d0c3a0e1b3>] leak_step+0x13 [leaky]         (frame number, address, symbol+offset, module)
//   	1 [<00007f7b0eb2324a>] <null sym>
//
// and "Top N" there is the number of stacks it prints, so a last report with fewer is cut.
// Copies from a terminal or a web page turn tabs into spaces (bcc's own example files have spaces): indentation is
// read as any whitespace. A copy without its header line (the stacks alone) is read as one report without a time.
//
// Each report is a snapshot of the outstanding bytes and allocations by stack (the top N stacks only, as bcc
// prints them), frames leaf first. Lines this reader does not know are skipped and counted; a file whose reports hold no stack says so (never a
// silent 0 B); a report cut by the
// end of the file (no final newline, a stack with no frames at the end, fewer stacks than libbpf-tools announced)
// is marked incomplete. The reader takes one line at a time (MemleakReader), so a log of any size is read as a
// stream: memory grows with the stacks it keeps, not with the file (the -a address lines are only counted).

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
  /** 1-based line of the `[HH:MM:SS] Top N stacks …` header (of the first stack when the header is missing) */
  line: number;
  byteOffset: number;
  /** the stamp: seconds since midnight of the tracer's local day; null for stacks without a header line */
  secondsOfDay: number | null;
  /** days since the first report (the stamp went back: midnight passed) */
  day: number;
  /** N of "Top N stacks"; null without a header */
  top: number | null;
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
  /**
   * 'default' (bcc, address column), 'combined' (bcc --combined-only: no address column), 'libbpf'
   * (libbpf-tools' C memleak), 'bpftrace' (memleak.bt); null before any frame
   */
  mode: 'default' | 'combined' | 'libbpf' | 'bpftrace' | null;
  /** "Attaching to kernel allocators": the stacks are the kernel's */
  kernel: boolean;
  /** memleak.bt's `# date:` line: the local date and UTC offset of the first report (`2026-12-01`, `+0000`) */
  date: { day: string; offsetMinutes: number | null } | null;
  reports: MemleakReport[];
  problems: MemleakProblem[];
  /** problems beyond the MAX_PROBLEMS kept */
  problemsOmitted: number;
  /** lines that are none of the above (bcc's warnings, a shell prompt): skipped */
  skippedLines: number;
  /** 1-based line of the first skipped line, null when none */
  firstSkippedLine: number | null;
  /** lines read */
  lines: number;
}

/** Bounds on untrusted text: bcc prints at most -T stacks of at most 127 frames; these are far above. */
export const MAX_MEMLEAK_STACKS_PER_REPORT = 100_000;
export const MAX_MEMLEAK_FRAMES = 1024;
/** Stacks kept over the whole file (each a few hundred bytes with its frames shared): the reader's memory bound. */
export const MAX_MEMLEAK_STACKS = 4_000_000;
export const MAX_MEMLEAK_LINE_CHARS = 64 * 1024;
const MAX_PROBLEMS = 100;

const HEADER = /^\s*\[(\d{1,2}):(\d{1,2}):(\d{1,2})\] Top (\d+) stacks with outstanding allocations:\s*$/;
const STACK = /^\s*(\d+) bytes in (\d+) allocations from stack(?: id\(?-?\d+\)?)?\s*$/;
const ALLOC = /^\s*addr = (?:0x)?[0-9a-fA-F]+ size = \d+\s*$/;
const ATTACH = /^Attaching to pid (\d+), Ctrl\+C to quit\.\s*$/;
const KERNEL = /^Attaching to kernel allocators, Ctrl\+C to quit\.\s*$/;
const EXECUTE = /^Executing '(.*)' and tracing the resulting process\.\s*$/;
const COMMENT = /^# (pid|cmdline): (.*)$/;
const BT_MAP = /^@outstanding_(bytes|allocs)\[\s*$/;
const BT_END = /^\]: (-?\d+)\s*$/;
const BT_FRAME = /^\t([0-9a-fA-F]{1,16}) (.*?)(?: \(([^()]*)\))?\s*$/;
const BT_CALLS = /^@calls: (\d+)\s*$/;
const BT_AT = /^# at: (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?\s*$/;
const BT_DATE = /^# date: (\d{4}-\d\d-\d\d) \d\d:\d\d:\d\d(?: ([+-])(\d\d)(\d\d))?\s*$/;
const FRAME_ADDR = /^(0x[0-9a-fA-F]{1,16})\s+(.*)$/;
/** libbpf-tools: `0 [<000055d0c3a0e1b3>] leak_step+0x13 [leaky]`, `1 [<…>] <null sym>`, `2 [<…>] (3 entries)` */
const LIBBPF_FRAME = /^(\d+) \[<([0-9a-fA-F]{1,16})>\](?: (.*))?$/;
/** libbpf-tools built with blazesym: an inlined entry under `(N entries)`: `fn@0x401136 /src/leaky.c:12` */
const LIBBPF_INLINED = /^(\S+)@0x[0-9a-fA-F]+(?: (.*):(\d+))?$/;
const SYMBOL = /^(.*?)(?:\+(0x[0-9a-fA-F]+))?(?: \[([^\]]*)\])?$/;

/** True when the first bytes look like a memleak report (its attach line, a report header, or a stack's line). */
export function looksLikeMemleak(head: string): boolean {
  const lines = head.split('\n').map((l) => l.replace(/\r$/, ''));
  return lines.some(
    (l) =>
      HEADER.test(l) ||
      STACK.test(l) ||
      ATTACH.test(l) ||
      KERNEL.test(l) ||
      EXECUTE.test(l) ||
      /^# heaplens memleak\.bt/.test(l),
  );
}

function parseFrame(body: string, address: string | null): MemleakFrame {
  const text = body.trim();
  if (text === '[unknown]' || text === 'stack information lost' || text === '<null sym>')
    return { text: text === '<null sym>' ? '[unknown]' : text, symbol: null, offset: null, module: null, address };
  const m = SYMBOL.exec(text);
  let symbol: string | null = m?.[1] ?? text;
  if (symbol === '[unknown]' || symbol === '') symbol = null;
  return { text, symbol, offset: m?.[2] ?? null, module: m?.[3] ?? null, address };
}

/** A libbpf-tools frame body: `sym+0xoff [dso]`, blazesym's `sym+0xoff /path/file.c:12`, `<null sym>`. */
function libbpfFrame(body: string, address: string): MemleakFrame {
  const src = /^(\S+?)(?:\+(0x[0-9a-fA-F]+))? (\/?\S+):(\d+)$/.exec(body);
  if (src) return { text: body, symbol: src[1], offset: src[2] ?? null, module: null, address };
  return parseFrame(body, address);
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

/**
 * Reads a memleak output one line at a time (`line`), then `finish`. Frames printed the same way are one object
 * (a log repeats its stacks in every report), so the memory kept is that of the distinct frames and the stacks.
 */
export class MemleakReader {
  private readonly out: MemleakFile = {
    pid: null,
    command: null,
    mode: null,
    kernel: false,
    date: null,
    reports: [],
    problems: [],
    problemsOmitted: 0,
    skippedLines: 0,
    firstSkippedLine: null,
    lines: 0,
  };
  // memleak.bt: the map being read, and the stacks of this report by their addresses (bytes and allocs paired)
  private btMap: { which: 'bytes' | 'allocs'; frames: MemleakFrame[]; line: number } | null = null;
  private btStacks = new Map<string, MemleakStack>();
  private btEnded = true;
  private report: MemleakReport | null = null;
  private stack: MemleakStack | null = null;
  /** the stack's last frame was libbpf's `(N entries)`: its inlined entries follow */
  private inlinedAt: string | null = null;
  private lastSeconds = -1;
  private day = 0;
  private lineNo = 0;
  private byteOffset = 0;
  private stacksKept = 0;
  private readonly frames = new Map<string, MemleakFrame>();

  private problem(line: number, message: string): void {
    if (this.out.problems.length < MAX_PROBLEMS) this.out.problems.push({ line, message });
    else this.out.problemsOmitted++;
  }

  /** One frame object per distinct printed frame. */
  private intern(key: string, make: () => MemleakFrame): MemleakFrame {
    let f = this.frames.get(key);
    if (!f) this.frames.set(key, (f = make()));
    return f;
  }

  private skip(): void {
    this.out.skippedLines++;
    this.out.firstSkippedLine ??= this.lineNo;
    this.stack = null;
  }

  /** A report for stacks printed without a header line (a copy of the stacks alone). */
  private headerless(byteOffset: number): MemleakReport {
    const r: MemleakReport = {
      line: this.lineNo,
      byteOffset,
      secondsOfDay: null,
      day: this.day,
      top: null,
      stacks: [],
      allocationLines: 0,
      complete: true,
      preciseSecondsOfDay: null,
      calls: null,
    };
    this.out.reports.push(r);
    this.problem(
      this.lineNo,
      'stacks without a "[HH:MM:SS] Top N stacks with outstanding allocations:" line: read as one report without a time',
    );
    return r;
  }

  /** Reads one line (without its newline); `bytes` is its length in the file with the newline, for offsets. */
  line(raw: string, bytes = raw.length + 1): void {
    const out = this.out;
    const startOffset = this.byteOffset;
    this.byteOffset += bytes;
    const lineNo = ++this.lineNo;
    out.lines = lineNo;
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.length > MAX_MEMLEAK_LINE_CHARS) {
      this.problem(lineNo, `line longer than ${MAX_MEMLEAK_LINE_CHARS} characters skipped`);
      return;
    }
    let m: RegExpExecArray | null;
    if ((m = HEADER.exec(line))) {
      const [h, mi, se] = [Number(m[1]), Number(m[2]), Number(m[3])];
      if (h > 23 || mi > 59 || se > 60) {
        this.problem(lineNo, `report stamp ${m[1]}:${m[2]}:${m[3]} is not a time of day; report skipped`);
        this.report = null;
        this.stack = null;
        return;
      }
      const secs = h * 3600 + mi * 60 + se;
      if (secs < this.lastSeconds) this.day++; // the tracer ran past midnight
      this.lastSeconds = secs;
      this.closeLibbpfReport();
      const report: MemleakReport = {
        line: lineNo,
        byteOffset: startOffset,
        secondsOfDay: secs,
        day: this.day,
        top: Number(m[4]),
        stacks: [],
        allocationLines: 0,
        complete: true,
        preciseSecondsOfDay: null,
        calls: null,
      };
      if (!this.btEnded && out.mode === 'bpftrace') {
        const prev = out.reports[out.reports.length - 1];
        if (prev) {
          prev.complete = false;
          this.problem(lineNo, `the report of line ${prev.line} has no "# end of report" (cut); it is partial`);
        }
      }
      out.reports.push(report);
      this.report = report;
      this.stack = null;
      this.btMap = null;
      this.btStacks = new Map();
      this.btEnded = false;
    } else if (this.btMap) {
      const btMap = this.btMap;
      if ((m = BT_END.exec(line))) {
        const v = Number(m[1]);
        const key = btMap.frames.map((f) => f.address).join(' ');
        let st = this.btStacks.get(key);
        if (!st && this.report) {
          st = { bytes: 0, allocations: 0, frames: btMap.frames, line: btMap.line };
          this.btStacks.set(key, st);
          this.report.stacks.push(st);
          this.stacksKept++;
        }
        // a frame named in one map and [unknown] in the other keeps its name
        if (st)
          st.frames = st.frames.map((f, i) => (f.symbol === null && btMap.frames[i]?.symbol ? btMap.frames[i] : f));
        if (st && Number.isSafeInteger(v) && v >= 0) {
          if (btMap.which === 'bytes') st.bytes = v;
          else st.allocations = v;
        } else if (st) this.problem(lineNo, `stack value ${m[1]} is not a size; counted as 0`);
        this.btMap = null;
      } else if ((m = BT_FRAME.exec(line))) {
        const [, hex, sym, path] = m;
        if (btMap.frames.length < MAX_MEMLEAK_FRAMES)
          btMap.frames.push(this.intern(`bt\u0000${line}`, () => btFrame(hex, sym, path)));
      } else {
        this.problem(lineNo, 'a stack of memleak.bt ends without its "]: value" line; skipped');
        this.btMap = null;
      }
    } else if ((m = BT_MAP.exec(line))) {
      out.mode = 'bpftrace';
      if (!this.report) {
        this.problem(lineNo, 'a stack before any report header; skipped');
        return;
      }
      if (this.report.stacks.length >= MAX_MEMLEAK_STACKS_PER_REPORT || this.stacksKept >= MAX_MEMLEAK_STACKS) return;
      this.btMap = { which: m[1] === 'bytes' ? 'bytes' : 'allocs', frames: [], line: lineNo };
    } else if ((m = BT_CALLS.exec(line))) {
      if (this.report && !this.btEnded) this.report.calls = Number(m[1]);
    } else if ((m = BT_AT.exec(line))) {
      if (this.report && !this.btEnded)
        this.report.preciseSecondsOfDay =
          Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) + Number(`0.${m[4] ?? '0'}`);
    } else if (line.startsWith('# end of report')) {
      this.btEnded = true;
    } else if ((m = BT_DATE.exec(line))) {
      out.date = {
        day: m[1],
        offsetMinutes: m[2] ? (m[2] === '-' ? -1 : 1) * (Number(m[3]) * 60 + Number(m[4])) : null,
      };
    } else if ((m = STACK.exec(line))) {
      const report = (this.report ??= this.headerless(startOffset));
      const bytes = Number(m[1]);
      const allocations = Number(m[2]);
      if (!Number.isSafeInteger(bytes) || !Number.isSafeInteger(allocations) || bytes > 0 !== allocations > 0) {
        this.problem(lineNo, `stack counts ${m[1]} bytes / ${m[2]} allocations are not sizes; stack skipped`);
        this.stack = null;
        return;
      }
      if (report.stacks.length >= MAX_MEMLEAK_STACKS_PER_REPORT) {
        if (report.stacks.length === MAX_MEMLEAK_STACKS_PER_REPORT)
          this.problem(lineNo, `more than ${MAX_MEMLEAK_STACKS_PER_REPORT} stacks in one report; the rest skipped`);
        this.stack = null;
        return;
      }
      if (this.stacksKept >= MAX_MEMLEAK_STACKS) {
        if (this.stacksKept === MAX_MEMLEAK_STACKS)
          this.problem(lineNo, `more than ${MAX_MEMLEAK_STACKS} stacks in the file; the rest are not read`);
        this.stacksKept++;
        this.stack = null;
        return;
      }
      this.stack = { bytes, allocations, frames: [], line: lineNo };
      this.inlinedAt = null;
      report.stacks.push(this.stack);
      this.stacksKept++;
    } else if (ALLOC.test(line) && this.report) {
      this.report.allocationLines++;
    } else if (this.stack && /^\s/.test(line) && line.trim() !== '') {
      this.frameLine(this.stack, line.trim());
    } else if ((m = ATTACH.exec(line))) {
      out.pid = Number(m[1]);
    } else if (KERNEL.test(line)) {
      out.kernel = true;
    } else if ((m = EXECUTE.exec(line))) {
      out.command = m[1];
    } else if ((m = COMMENT.exec(line))) {
      if (m[1] === 'pid' && /^\d{1,10}$/.test(m[2].trim())) out.pid = Number(m[2].trim());
      else if (m[1] === 'cmdline') out.command = m[2].slice(0, 4096);
    } else if (line.trim() !== '' && !line.startsWith('#')) {
      this.skip();
    }
  }

  /** One indented line under a stack: a frame in one of the formats. */
  private frameLine(stack: MemleakStack, body: string): void {
    const out = this.out;
    let m: RegExpExecArray | null;
    if ((m = LIBBPF_FRAME.exec(body))) {
      out.mode = 'libbpf';
      const address = '0x' + BigInt('0x' + m[2]).toString(16);
      const rest = m[3] ?? '<null sym>';
      if (/^\(\d+ entries\)$/.test(rest)) {
        this.inlinedAt = address; // its entries follow, innermost first
        return;
      }
      this.inlinedAt = null;
      if (stack.frames.length < MAX_MEMLEAK_FRAMES)
        stack.frames.push(this.intern(`l\u0000${address}\u0000${rest}`, () => libbpfFrame(rest, address)));
      return;
    }
    if (this.inlinedAt !== null && (m = LIBBPF_INLINED.exec(body))) {
      // inlined entries share their address: keyed by their text, so each is its own frame
      const [, fn, file, ln] = m;
      if (stack.frames.length < MAX_MEMLEAK_FRAMES)
        stack.frames.push(
          this.intern(`i\u0000${body}`, () => ({
            text: file ? `${fn} ${file}:${ln}` : fn,
            symbol: fn,
            offset: null,
            module: null,
            address: null,
          })),
        );
      return;
    }
    const a = FRAME_ADDR.exec(body);
    if (out.mode === null) out.mode = a ? 'default' : 'combined';
    if (stack.frames.length >= MAX_MEMLEAK_FRAMES) return;
    stack.frames.push(
      this.intern(`b\u0000${body}`, () => parseFrame(a ? a[2] : body, a ? '0x' + BigInt(a[1]).toString(16) : null)),
    );
  }

  /** libbpf-tools announces how many stacks it prints: fewer at the end is a cut. */
  private closeLibbpfReport(): boolean {
    const r = this.report;
    if (!r || this.out.mode !== 'libbpf' || r.top === null || r.stacks.length >= r.top) return true;
    if (this.stacksKept > MAX_MEMLEAK_STACKS) return true;
    r.complete = false;
    this.problem(
      r.line,
      `the report of line ${r.line} announces ${r.top} stacks but has ${r.stacks.length}: it is partial`,
    );
    return false;
  }

  /** The file read; `endsWithNewline` false when its last line had no newline (cut while written). */
  finish(endsWithNewline: boolean): MemleakFile {
    const out = this.out;
    const lineNo = this.lineNo;
    const last = out.reports[out.reports.length - 1];
    if (last && out.mode === 'bpftrace') {
      if (!this.btEnded) {
        last.complete = false;
        this.problem(
          lineNo,
          'the file ends inside its last report (no "# end of report": the tracer was stopped while printing); that report is partial',
        );
      }
    } else if (last) {
      const lastStack = last.stacks[last.stacks.length - 1];
      const libbpfCut = last === this.report && !this.closeLibbpfReport();
      if (!libbpfCut && (!endsWithNewline || (lastStack && lastStack.frames.length === 0 && out.mode !== 'libbpf'))) {
        last.complete = false;
        this.problem(
          lineNo,
          'the file ends inside its last report (cut while the tracer was writing?); that report is partial',
        );
      }
    }
    // bcc and bpftrace name frames while printing: once the process exits, the same return address prints as
    // [unknown]. A name printed for an address in any report names it in all of them.
    const named = new Map<string, MemleakFrame>();
    for (const f of this.frames.values())
      if (f.address !== null && f.symbol !== null && !named.has(f.address)) named.set(f.address, f);
    if (named.size > 0)
      for (const r of out.reports)
        for (const st of r.stacks)
          if (st.frames.some((f) => f.symbol === null && f.address !== null && named.has(f.address)))
            st.frames = st.frames.map((f) =>
              f.symbol === null && f.address !== null ? (named.get(f.address) ?? f) : f,
            );
    if (out.reports.length === 0)
      this.problem(lineNo, 'no "[HH:MM:SS] Top N stacks with outstanding allocations:" report');
    else if (out.reports.every((r) => r.stacks.length === 0))
      this.problem(
        out.reports[0].line,
        `${out.reports.length} report header(s) but no stack read` +
          (out.skippedLines > 0
            ? `: ${out.skippedLines} line(s) not understood, the first at line ${out.firstSkippedLine}`
            : ' (memleak found no outstanding allocation)'),
      );
    return out;
  }
}

/** Reads a whole memleak output (text already decoded). */
export function parseMemleak(text: string): MemleakFile {
  const r = new MemleakReader();
  let offset = 0;
  while (offset < text.length) {
    let end = text.indexOf('\n', offset);
    if (end < 0) end = text.length;
    r.line(text.slice(offset, end));
    offset = end + 1;
  }
  return r.finish(text.length === 0 || text.endsWith('\n'));
}

/**
 * Reads a memleak output from its (decompressed) bytes as a stream of lines into `r` (whose lines stay read when
 * the stream throws): a log of any size, in memory only
 * what the reader keeps. A line longer than MAX_MEMLEAK_LINE_CHARS is skipped without being held.
 */
export async function readMemleakLines(
  chunks: AsyncIterable<Uint8Array>,
  r: MemleakReader = new MemleakReader(),
): Promise<MemleakFile> {
  const decoder = new TextDecoder('utf-8');
  let pending = '';
  let pendingBytes = 0;
  let overlong = false;
  let lastByte = 10;
  for await (const chunk of chunks) {
    if (chunk.length === 0) continue;
    lastByte = chunk[chunk.length - 1];
    let from = 0;
    while (from < chunk.length) {
      const nl = chunk.indexOf(10, from);
      const end = nl < 0 ? chunk.length : nl;
      if (!overlong) {
        pending += decoder.decode(chunk.subarray(from, end), { stream: true });
        if (pending.length > MAX_MEMLEAK_LINE_CHARS) {
          overlong = true;
          pending = 'x'.repeat(MAX_MEMLEAK_LINE_CHARS + 1); // said as too long by the reader, never held whole
        }
      }
      pendingBytes += end - from;
      if (nl < 0) break;
      pending += decoder.decode();
      r.line(pending, pendingBytes + 1);
      pending = '';
      pendingBytes = 0;
      overlong = false;
      from = nl + 1;
    }
  }
  pending += decoder.decode();
  if (pendingBytes > 0) r.line(pending, pendingBytes);
  return r.finish(lastByte === 10);
}
