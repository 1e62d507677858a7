// The analysis worker: owns the loaded Job and answers the UI's queries. The UI thread never parses text.

/// <reference lib="webworker" />
import { classifyFiles, groupProcesses, loadJob } from '../../../analysis/load-job.ts';
import { withPrefetch } from './prefetch.ts';
import { diffSnapshots } from '../../../analysis/diff.ts';
import { leastSquaresSlope, rankGrowth } from '../../../analysis/growth.ts';
import { addStackToFunctions, finishFunctionRows } from '../../../analysis/function-diff.ts';
import { buildCallTree } from '../../../analysis/call-tree.ts';
import type { Job, ProcessSeries, Snapshot } from '../../../analysis/model.ts';
import { JobAssembler } from '../../../analysis/job-batches.ts';
import type { InputFile } from '../../../parsers/input-file.ts';
import { FrameTable } from './frames.ts';
import { Symbolizer, type SymbolTable } from '../../../symbolize/symbolize.ts';
import { compileAddr2line, type CompiledWasm } from '../../../symbolize/wasm-addr2line.ts';
import type { SymbolFile, SymbolFileSource } from '../../../symbolize/files.ts';
import { isPerfMapName, parsePerfMap, type PerfMap } from '../../../symbolize/perf-map.ts';
import addr2lineWasmUrl from 'virtual:heaplens/addr2line-wasm-url';
import reportViewerJs from 'virtual:heaplens/report-viewer';
import { resolveStack, stackTarget } from '../../../session/notes.ts';
import type { Session, StackTarget } from '../../../session/schema.ts';
import { buildReportData, type SanitizeOptions } from '../../../report/build-report.ts';
import { buildReportHtml } from '../../../report/html.ts';
import { reopenReport } from '../../../report/reopen.ts';
import { processFrameSource, type FrameSource } from '../../../export/frames.ts';
import { toPprof } from '../../../export/pprof.ts';
import { toFolded } from '../../../export/folded.ts';
import { toSpeedscope } from '../../../export/speedscope.ts';
import type { ExportInput } from '../../../export/samples.ts';
import { suspectsResult } from './suspects.ts';
import { lastCompleteIndex, snapshotTotalBytes } from '../../../analysis/snapshot-status.ts';
import { denseVariances, withinNoise } from '../../../analysis/sampling-error.ts';
import type {
  FlameData,
  FrameInfo,
  FromWorker,
  FunctionRow,
  GrowthResult,
  JobSummary,
  LoadProgress,
  ProcessSummary,
  Request,
  Response,
  SourceFile,
  StackDetail,
  StackRow,
  StackSeries,
  ToWorker,
  ViewOptions,
  ExportFormat,
  WarningSummary,
} from '../lib/protocol.ts';

declare const self: DedicatedWorkerGlobalScope;

let job: Job | null = null;
let summary: JobSummary | null = null;
const frameTables = new Map<number, FrameTable>();
const symbolTables = new Map<number, SymbolTable>();
let compiledWasm: Promise<CompiledWasm> | null = null;
const growthCache = new Map<number, Map<number, { score: number; slope: number; growingFraction: number }>>();
const controllers = new Map<number, AbortController>();
const pendingReads = new Map<number, { resolve: (b: Uint8Array) => void; reject: (e: Error) => void }>();
let nextRead = 1;
let staged: SourceFile[] = [];
/** a job arriving in batches (a dataset the desktop app's main process reads), until 'loadBatches' */
let assembling: JobAssembler<SymbolTable> | null = null;

function post(msg: FromWorker, transfer: Transferable[] = []): void {
  self.postMessage(msg, transfer);
}

function hostRead(hostPath: string, offset: number, length: number): Promise<Uint8Array> {
  const id = nextRead++;
  return new Promise((resolve, reject) => {
    pendingReads.set(id, { resolve, reject });
    post({ read: id, hostPath, offset, length });
  });
}

let readWaitMs = 0;

function toInputFile(f: SourceFile): InputFile {
  const blob = f.blob;
  const hostPath = f.hostPath;
  const file = blob instanceof File ? blob : null;
  return {
    path: f.path,
    size: f.size >= 0 ? f.size : (blob?.size ?? 0),
    mtimeMs: f.mtimeMs ?? (file && file.lastModified > 0 ? file.lastModified : null),
    async read(offset: number, length: number): Promise<Uint8Array> {
      const t0 = performance.now();
      try {
        if (blob) return new Uint8Array(await (offset === 0 && length >= blob.size ? blob : blob.slice(offset, offset + length)).arrayBuffer());
        if (hostPath) return await hostRead(hostPath, offset, length);
        throw new Error(`no content for ${f.path}`);
      } finally {
        readWaitMs += performance.now() - t0;
      }
    },
  };
}

function proc(i: number): ProcessSeries {
  if (!job) throw new Error('no job loaded');
  const p = job.processes[i];
  if (!p) throw new Error(`no process ${i}`);
  return p;
}

function frameTable(i: number): FrameTable {
  let t = frameTables.get(i);
  if (!t) {
    t = new FrameTable(proc(i), symbolTables.get(i) ?? null);
    frameTables.set(i, t);
  }
  return t;
}

/** The loaded files as a symbol source: binaries and debug files the user dropped next to the dumps. */
function symbolSource(files: InputFile[]): { source: SymbolFileSource; dirs: string[] } {
  const byPath = new Map<string, InputFile>();
  const dirs = new Set<string>();
  for (const f of files) {
    const p = f.path.replace(/^\/+/, '');
    byPath.set(p, f);
    // every folder on the way: a symbol folder may be a sysroot (usr/lib/…) or flat
    dirs.add('');
    for (let i = p.indexOf('/'); i >= 0; i = p.indexOf('/', i + 1)) dirs.add(p.slice(0, i));
  }
  const source: SymbolFileSource = {
    async open(path: string): Promise<SymbolFile | null> {
      const f = byPath.get(path.replace(/^\/+/, ''));
      if (!f) return null;
      return { path: f.path, size: f.size, mtimeMs: f.mtimeMs, read: (o, l) => f.read(o, l), close: async () => undefined };
    },
  };
  return { source, dirs: [...dirs] };
}

async function symbolizeAll(j: Job, files: InputFile[], extra: InputFile[], signal: AbortSignal, progress: (p: LoadProgress) => void): Promise<Map<number, SymbolTable>> {
  const symbolTables = new Map<number, SymbolTable>();
  const withMaps = j.processes.filter((p) => p.maps);
  if (withMaps.length === 0) return symbolTables;
  const dumps = new Set(j.processes.flatMap((p) => p.snapshots.map((s) => s.file)));
  const others = files.filter((f) => !dumps.has(f.path));
  const perfMaps: PerfMap[] = [];
  for (const f of others) {
    if (isPerfMapName(f.path.slice(f.path.lastIndexOf('/') + 1)) && f.size < 256 << 20) perfMaps.push(parsePerfMap(new TextDecoder().decode(await f.read(0, f.size)), f.path));
  }
  compiledWasm ??= fetch(addr2lineWasmUrl)
    .then((r) => r.arrayBuffer())
    .then((b) => compileAddr2line(new Uint8Array(b)));
  const { source, dirs } = symbolSource(others.concat(extra));
  const symbolizer = new Symbolizer(source, { wasm: await compiledWasm, symbolDirs: dirs, sysroot: null, hostPaths: false, cacheStore: null });
  try {
    for (let k = 0; k < j.processes.length; k++) {
      const p = j.processes[k];
      if (!p.maps) continue;
      signal.throwIfAborted();
      progress({ phase: 'symbolize', filesDone: k, filesTotal: j.processes.length, bytesDone: k, bytesTotal: j.processes.length, file: p.key });
      try {
        symbolTables.set(k, await symbolizer.symbolizeProcess(p, { perfMaps }));
      } catch (e) {
        j.warnings.push({ file: p.snapshots[p.snapshots.length - 1]?.file ?? p.key, message: `symbolization failed: ${e instanceof Error ? e.message : String(e)}` });
      }
    }
  } finally {
    await symbolizer.dispose();
  }
  // what the symbolizer could not find or verify becomes a warning (once per module)
  const seen = new Set<string>();
  symbolTables.forEach((t, k) => {
    const file = j.processes[k].snapshots[j.processes[k].snapshots.length - 1]?.file ?? j.processes[k].key;
    for (const m of t.modules) {
      const key = `${m.mappingPath}|${m.binaryPath}|${m.binary}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (m.binary === 'mismatch') j.warnings.push({ file, message: `binary ${m.binaryPath} does not match the mapping of ${m.mappingPath} (${m.reason}): its frames are marked unverified` });
      else if (m.binary === 'unverified' && m.binaryPath) j.warnings.push({ file, message: `unverified binary ${m.binaryPath} for ${m.mappingPath}: ${m.reason}` });
      if (m.error) j.warnings.push({ file, message: `${m.mappingPath}: ${m.error}` }); // e.g. out of memory: its frames stay module+offset
    }
  });
  return symbolTables;
}

function growthInfo(i: number): Map<number, { score: number; slope: number; growingFraction: number }> {
  let g = growthCache.get(i);
  if (!g) {
    g = new Map();
    // over the complete dumps: a cut last dump would read as every stack shrinking at the end
    for (const s of rankGrowth(proc(i), { to: lastCompleteIndex(proc(i)) })) g.set(s.stackId, { score: s.score, slope: s.slopeBytesPerSnapshot, growingFraction: s.growingFraction });
    growthCache.set(i, g);
  }
  return g;
}


function warningKind(message: string): WarningSummary['kind'] {
  if (/truncat|ended early|incomplete/i.test(message)) return 'truncated';
  if (/maps/i.test(message)) return 'maps';
  if (/binary|build.?id|unverified|symbol/i.test(message)) return 'binary';
  return 'other';
}

function summarize(j: Job, loadMs: number, bytesTotal: number, waitMs: number): JobSummary {
  const processes: ProcessSummary[] = j.processes.map((p, index) => {
    // totals: a cut dump's header total (its records are partial), else the sum of records
    const live = p.snapshots.map(snapshotTotalBytes);
    const table = frameTable(index);
    return {
      index,
      key: p.key,
      pid: p.pid,
      prefix: p.prefix,
      snapshots: p.snapshots.map((s, si) => ({
        index: si,
        file: s.file,
        seq: s.seq,
        trigger: s.trigger,
        liveBytes: s.live.bytes,
        liveObjects: s.live.objects,
        truncated: s.truncated !== null,
        complete: s.complete,
        headerLiveBytes: s.headerLiveBytes,
        mtimeMs: s.mtimeMs,
      })),
      lastLiveBytes: live[live.length - 1] ?? 0,
      firstLiveBytes: live[0] ?? 0,
      maxLiveBytes: live.reduce((a, b) => Math.max(a, b), 0),
      slopeBytesPerSnapshot: leastSquaresSlope(live),
      endedWithoutFinalDump: p.endedWithoutFinalDump,
      stackCount: p.stacks.count,
      hasPythonFrames: table.hasPython,
      truncatedCount: p.snapshots.filter((s) => s.truncated !== null).length,
    };
  });
  const warnings: WarningSummary[] = j.warnings.map((w) => ({ ...w, kind: warningKind(w.message) }));
  // files read as binaries or debug files by the symbolizer are not "ignored"
  const used = new Set<string>();
  symbolTables.forEach((t) => {
    for (const m of t.modules) {
      if (m.binaryPath) used.add(m.binaryPath.replace(/^\/+/, ''));
      if (m.debugPath) used.add(m.debugPath.replace(/^\/+/, ''));
    }
  });
  const ignoredFiles = j.ignoredFiles.filter((f) => !used.has(f.replace(/^\/+/, '')));
  // A truncated snapshot always shows a warning, even if the loader reported it differently.
  for (const p of j.processes) {
    for (const s of p.snapshots) {
      if (s.truncated && !warnings.some((w) => w.file === s.file && w.kind === 'truncated')) {
        warnings.push({ file: s.file, byteOffset: s.truncated.byteOffset, line: s.truncated.line, message: `truncated at byte ${s.truncated.byteOffset}: the dump ended early (complete records kept)`, kind: 'truncated' });
      }
    }
  }
  return { processes, warnings, ignoredFiles, loadMs, readWaitMs: waitMs, bytesTotal };
}

/** Frame keys of a stack, leaf first, after allocator hiding and mode filtering. */
function stackKeys(_p: ProcessSeries, table: FrameTable, stackId: number, view: ViewOptions): Int32Array {
  return table.stackKeys(stackId, view);
}

function labelOf(table: FrameTable, keys: ArrayLike<number>, mode: ViewOptions['mode'] = 'merged'): { label: string; context: string; kind: FrameInfo['kind'] } {
  if (keys.length === 0) return { label: mode === 'python' ? '(no Python frames)' : '(no frames)', context: '', kind: 'unknown' };
  const f = table.frames[keys[0]];
  const ctx: string[] = [];
  for (let i = 1; i < Math.min(keys.length, 4); i++) ctx.push(table.frames[keys[i]].label);
  return { label: f.label, context: ctx.join(' ← '), kind: f.kind };
}

function growth(i: number, base: number, target: number, view: ViewOptions, limit: number): GrowthResult {
  const p = proc(i);
  const table = frameTable(i);
  const deltas = diffSnapshots(p, base, target);
  const g = growthInfo(i);
  const varBase = denseVariances(p.stacks.count, p.snapshots[base]);
  const varTarget = denseVariances(p.stacks.count, p.snapshots[target]);
  // one row per visible stack: stacks that differ only in hidden frames (allocator paths, native frames in
  // the Python view, Python frames in the native view) are summed
  const groups = new Map<string, StackRow>();
  const repAbs = new Map<StackRow, number>();
  for (const d of deltas) {
    const keys = stackKeys(p, table, d.stackId, view);
    const gk = keys.join(',');
    const gi = g.get(d.stackId);
    let r = groups.get(gk);
    if (!r) {
      const l = labelOf(table, keys, view.mode);
      r = {
        stackId: d.stackId,
        members: [],
        label: l.label,
        context: l.context,
        kind: l.kind,
        baseBytes: 0,
        targetBytes: 0,
        deltaBytes: 0,
        deltaPct: 0,
        baseObjects: 0,
        targetObjects: 0,
        status: 'same',
        score: 0,
        slope: 0,
        growingFraction: 0,
        sigmaDeltaBytes: 0,
        withinNoise: false,
      };
      groups.set(gk, r);
    }
    const best = repAbs.get(r) ?? -1;
    if (Math.abs(d.deltaBytes) > best) {
      r.stackId = d.stackId;
      repAbs.set(r, Math.abs(d.deltaBytes));
    }
    r.members.push(d.stackId);
    r.baseBytes += d.baseBytes;
    r.targetBytes += d.targetBytes;
    r.baseObjects += d.baseObjects;
    r.targetObjects += d.targetObjects;
    // variances add (σ² here, its root below)
    r.sigmaDeltaBytes += varBase[d.stackId] + varTarget[d.stackId];
    r.score += gi?.score ?? 0;
    r.slope += gi?.slope ?? 0;
    r.growingFraction = Math.max(r.growingFraction, gi?.growingFraction ?? 0);
  }
  const rows = [...groups.values()];
  for (const r of rows) {
    r.deltaBytes = r.targetBytes - r.baseBytes;
    r.sigmaDeltaBytes = Math.sqrt(r.sigmaDeltaBytes);
    r.withinNoise = withinNoise(r.deltaBytes, r.sigmaDeltaBytes);
    r.deltaPct = r.baseBytes > 0 ? (100 * r.deltaBytes) / r.baseBytes : r.targetBytes > 0 ? Infinity : 0;
    const inBase = r.baseBytes !== 0 || r.baseObjects !== 0;
    const inTarget = r.targetBytes !== 0 || r.targetObjects !== 0;
    r.status = !inBase ? 'new' : !inTarget ? 'gone' : r.deltaBytes > 0 ? 'grown' : r.deltaBytes < 0 ? 'shrunk' : 'same';
  }
  rows.sort((a, b) => Math.abs(b.deltaBytes) - Math.abs(a.deltaBytes) || b.targetBytes - a.targetBytes);
  const stacks = rows.slice(0, limit);
  // per-function self/total, in the current stack mode
  const fn = new Map<number, FunctionRow>();
  const row = (k: number): FunctionRow => {
    let r = fn.get(k);
    if (!r) {
      const f = table.frames[k];
      r = { key: k, label: f.label, kind: f.kind, selfBase: 0, selfTarget: 0, selfDelta: 0, totalBase: 0, totalTarget: 0, totalDelta: 0 };
      fn.set(k, r);
    }
    return r;
  };
  const seen = new Set<FunctionRow>();
  let baseTotal = 0;
  let targetTotal = 0;
  for (const d of deltas) {
    baseTotal += d.baseBytes;
    targetTotal += d.targetBytes;
    addStackToFunctions(stackKeys(p, table, d.stackId, view), d.baseBytes, d.targetBytes, row, seen);
  }
  const functions = finishFunctionRows([...fn.values()]);
  functions.sort((a, b) => b.totalDelta - a.totalDelta);
  return { proc: i, pid: p.pid, base, target, stacks, stackCount: rows.length, functions: functions.slice(0, limit), baseTotal, targetTotal };
}

function flame(i: number, snapshot: number, base: number | null, view: ViewOptions): { flame: FlameData; transfer: Transferable[] } {
  const p = proc(i);
  const table = frameTable(i);
  let stackIds: ArrayLike<number>;
  let bytes: ArrayLike<number>;
  let objects: ArrayLike<number> | undefined;
  let baseBytes: ArrayLike<number> | undefined;
  if (base === null) {
    const s = p.snapshots[snapshot];
    if (!s) throw new Error(`no snapshot ${snapshot}`);
    stackIds = s.stackIds;
    bytes = s.liveBytes;
    objects = s.liveObjects;
  } else {
    const deltas = diffSnapshots(p, base, snapshot);
    stackIds = Uint32Array.from(deltas, (d) => d.stackId);
    bytes = Float64Array.from(deltas, (d) => d.targetBytes);
    objects = Float64Array.from(deltas, (d) => d.targetObjects);
    baseBytes = Float64Array.from(deltas, (d) => d.baseBytes);
  }
  const tree = buildCallTree(p.stacks, { stackIds, bytes, objects, baseBytes }, { stackKeys: (id) => table.stackKeys(id, view) });
  const deltaVar = base === null ? null : nodeDeltaVariance(tree, stackIds, p.stacks.count, p.snapshots[base], p.snapshots[snapshot]);
  const frames: Record<number, FrameInfo> = {};
  for (let n = 1; n < tree.size; n++) {
    const k = tree.key[n];
    if (frames[k] === undefined) frames[k] = table.frames[k];
  }
  const stackNodes: Record<number, number> = {};
  for (let j = 0; j < stackIds.length; j++) stackNodes[stackIds[j]] = tree.stackNode[j];
  const data: FlameData = {
    size: tree.size,
    depth: tree.depth,
    end: tree.end,
    parent: tree.parent,
    key: tree.key,
    total: tree.total,
    self: tree.self,
    totalObjects: tree.totalObjects,
    baseTotal: tree.baseTotal,
    absDeltaTotal: tree.absDeltaTotal,
    deltaVar,
    maxDepth: tree.maxDepth,
    frames,
    stackNodes,
    baseGrand: tree.baseTotal ? tree.baseTotal[0] : 0,
    targetGrand: tree.total[0],
  };
  const transfer: Transferable[] = [tree.depth.buffer, tree.end.buffer, tree.parent.buffer, tree.key.buffer, tree.total.buffer, tree.self.buffer, tree.totalObjects.buffer];
  if (tree.baseTotal) transfer.push(tree.baseTotal.buffer);
  if (tree.absDeltaTotal) transfer.push(tree.absDeltaTotal.buffer);
  if (deltaVar) transfer.push(deltaVar.buffer);
  return { flame: data, transfer };
}

/** Per node of a diff tree: the variance of its Δ, the sum over the stacks through it of Var_base + Var_target. */
function nodeDeltaVariance(tree: { size: number; parent: Int32Array; stackNode: Int32Array }, stackIds: ArrayLike<number>, count: number, a: Snapshot, b: Snapshot): Float64Array {
  const va = denseVariances(count, a);
  const vb = denseVariances(count, b);
  const self = new Float64Array(tree.size);
  for (let j = 0; j < stackIds.length; j++) self[tree.stackNode[j]] += va[stackIds[j]] + vb[stackIds[j]];
  // preorder: a child's index is above its parent's, so one pass from the end sums subtrees
  for (let n = tree.size - 1; n > 0; n--) self[tree.parent[n]] += self[n];
  return self;
}

function valueIn(p: ProcessSeries, snapshot: number, stackId: number): number {
  const s = p.snapshots[snapshot];
  if (!s) return 0;
  const ids = s.stackIds;
  for (let j = 0; j < ids.length; j++) if (ids[j] === stackId) return s.liveBytes[j];
  return 0;
}

function stackDetail(i: number, stackId: number, members: number[], base: number, target: number, view: ViewOptions): StackDetail {
  const p = proc(i);
  const table = frameTable(i);
  const frames = table.stackDetail(stackId, view.mode);
  const ids = members.length > 0 ? members : [stackId];
  const series = p.snapshots.map((_, si) => ids.reduce((sum, id) => sum + valueIn(p, si, id), 0));
  return { stackId, frames, series, baseBytes: series[base] ?? 0, targetBytes: series[target] ?? 0 };
}

function stackSeries(i: number, n: number, view: ViewOptions): StackSeries {
  const p = proc(i);
  const table = frameTable(i);
  if (p.snapshots.length === 0) return { stackIds: [], labels: [], values: [] };
  // stacks with the same visible frames in this view are one series
  const groupOf = new Int32Array(p.stacks.count).fill(-1);
  const groupKey = new Map<string, number>();
  const rep: number[] = [];
  const group = (id: number): number => {
    let g = groupOf[id];
    if (g < 0) {
      const k = stackKeys(p, table, id, view).join(',');
      g = groupKey.get(k) ?? -1;
      if (g < 0) {
        g = rep.length;
        rep.push(id);
        groupKey.set(k, g);
      }
      groupOf[id] = g;
    }
    return g;
  };
  // top-N groups by peak bytes over the series
  let sums: Float64Array<ArrayBuffer> = new Float64Array(64);
  let peak: Float64Array<ArrayBuffer> = new Float64Array(64);
  for (const s of p.snapshots) {
    sums.fill(0);
    for (let j = 0; j < s.stackIds.length; j++) {
      const g = group(s.stackIds[j]);
      if (g >= sums.length) {
        const grow = (a: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> => {
          const b = new Float64Array(Math.max(g + 1, a.length * 2));
          b.set(a);
          return b;
        };
        sums = grow(sums);
        peak = grow(peak);
      }
      sums[g] += s.liveBytes[j];
    }
    for (let g = 0; g < rep.length; g++) if (sums[g] > peak[g]) peak[g] = sums[g];
  }
  const top = Array.from({ length: rep.length }, (_, g) => g)
    .sort((x, y) => peak[y] - peak[x])
    .slice(0, n);
  const slot = new Map<number, number>();
  top.forEach((g, k) => slot.set(g, k));
  const values: number[][] = Array.from({ length: top.length + 1 }, () => new Array<number>(p.snapshots.length).fill(0));
  p.snapshots.forEach((s, si) => {
    for (let j = 0; j < s.stackIds.length; j++) {
      const k = slot.get(groupOf[s.stackIds[j]]);
      values[k === undefined ? top.length : k][si] += s.liveBytes[j];
    }
  });
  const labels = top.map((g) => {
    const l = labelOf(table, stackKeys(p, table, rep[g], view), view.mode);
    return l.context ? `${l.label} ← ${l.context.split(' ← ')[0]}` : l.label;
  });
  labels.push('other stacks');
  return { stackIds: top.map((g) => rep[g]), labels, values };
}

// -- notes, reports, exports ----------------------------------------------------------------------

function stackTargets(i: number, stackIds: number[]): StackTarget[] {
  const p = proc(i);
  const table = frameTable(i);
  return stackIds.map((id) => {
    const keys = table.stackKeys(id, { mode: 'merged', hideAllocator: true });
    const label = keys.length > 0 ? table.frames[keys[0]].label : undefined;
    return stackTarget(p, id, label);
  });
}

function resolveStacks(targets: StackTarget[]): ({ proc: number; stackId: number } | null)[] {
  if (!job) return targets.map(() => null);
  const byKey = new Map(job.processes.map((p, i) => [p.key, i] as const));
  return targets.map((t) => {
    const i = byKey.get(t.process);
    if (i === undefined) return null;
    const id = resolveStack(proc(i), t);
    return id === null ? null : { proc: i, stackId: id };
  });
}

function frameSource(i: number, view: ViewOptions): FrameSource {
  return processFrameSource(proc(i), { symbols: symbolTables.get(i) ?? null, stackMode: view.mode });
}

async function report(procs: number[], base: number, target: number, session: Session, title: string, sanitize: SanitizeOptions, view: ViewOptions, previewOnly: boolean) {
  if (!job) throw new Error('no job loaded');
  const focusedKey = session.selection.process;
  const inputs = procs.map((i) => {
    const p = proc(i);
    const input: { proc: ProcessSeries; frames: FrameSource; base?: number; target?: number } = { proc: p, frames: frameSource(i, view) };
    if (p.key === focusedKey && base >= 0 && target >= 0 && base < p.snapshots.length && target < p.snapshots.length) {
      input.base = base;
      input.target = target;
    }
    return input;
  });
  const { data, preview } = buildReportData(inputs, {
    title,
    generator: 'heaplens app',
    stackMode: view.mode,
    showAllocator: !view.hideAllocator,
    symbolized: procs.some((i) => symbolTables.has(i)),
    session,
    warnings: job.warnings,
    sanitize,
  });
  if (previewOnly) return { html: null, preview, bytes: 0 };
  const html = await buildReportHtml(data, { js: reportViewerJs });
  return { html, preview, bytes: new TextEncoder().encode(html).length };
}

function exportSnapshot(format: ExportFormat, procs: number[], snapshot: number, view: ViewOptions): { data: string | Uint8Array; name: string; mime: string } {
  const inputs: ExportInput[] = procs.map((i) => {
    const p = proc(i);
    // the snapshot index applies to the focused process; others export their last snapshot
    const s = i === procs[0] ? Math.min(snapshot, p.snapshots.length - 1) : p.snapshots.length - 1;
    return { proc: p, snapshotIndex: s, frames: frameSource(i, view) };
  });
  const first = inputs[0]?.proc;
  const stem = `heaplens-${first?.pid ?? 'job'}-${first ? (first.snapshots[inputs[0].snapshotIndex].seq ?? inputs[0].snapshotIndex) : 0}`;
  const opts = { showAllocator: !view.hideAllocator };
  switch (format) {
    case 'pprof':
      return { data: toPprof(inputs, { ...opts, comments: ['heaplens app export'] }), name: `${stem}.pb`, mime: 'application/octet-stream' };
    case 'folded':
      return { data: toFolded(inputs, opts), name: `${stem}.folded`, mime: 'text/plain' };
    case 'speedscope':
      return { data: JSON.stringify(toSpeedscope(inputs, { ...opts, name: stem })), name: `${stem}.speedscope.json`, mime: 'application/json' };
  }
}

async function handle(id: number, req: Request): Promise<{ res: Response; transfer?: Transferable[] }> {
  switch (req.type) {
    case 'load': {
      const ctrl = new AbortController();
      controllers.set(id, ctrl);
      const t0 = performance.now();
      let lastPost = 0;
      try {
        // the previous job stays until this one has loaded (a cancelled load leaves it in place)
        const all = staged.concat(req.files);
        staged = [];
        const direct = all.map(toInputFile);
        // the loader's own order, so read-ahead fetches what it will read next
        const classified = await classifyFiles(direct);
        const index = new Map<InputFile, number>();
        direct.forEach((f, i) => index.set(f, i));
        const order: number[] = [];
        for (const g of groupProcesses(classified.dumps)) for (const d of g.dumps) order.push(index.get(d.file) as number);
        const files = withPrefetch(direct, order, (i) => direct[i].read(0, direct[i].size));
        readWaitMs = 0;
        let waited = 0;
        const timed = files.map((f) => ({
          ...f,
          read: async (o: number, l: number) => {
            const t = performance.now();
            try {
              return await f.read(o, l);
            } finally {
              waited += performance.now() - t;
            }
          },
        }));
        const j = await loadJob(timed, {
          signal: ctrl.signal,
          onProgress: (pr: LoadProgress) => {
            const now = performance.now();
            if (now - lastPost > 50 || pr.filesDone === pr.filesTotal) {
              lastPost = now;
              post({ id, progress: { phase: pr.phase, filesDone: pr.filesDone, filesTotal: pr.filesTotal, bytesDone: pr.bytesDone, bytesTotal: pr.bytesTotal, file: pr.file } });
            }
          },
        });
        if (ctrl.signal.aborted) throw new DOMException('cancelled', 'AbortError');
        let symbols = new Map<number, SymbolTable>();
        try {
          symbols = await symbolizeAll(j, direct, (req.symbolFiles ?? []).map(toInputFile), ctrl.signal, (pr) => post({ id, progress: pr }));
        } catch (e) {
          if (ctrl.signal.aborted) throw e;
          j.warnings.push({ file: '', message: `symbolization unavailable: ${e instanceof Error ? e.message : String(e)}; frames show module+offset` });
        }
        job = j;
        frameTables.clear();
        growthCache.clear();
        symbolTables.clear();
        symbols.forEach((t, k) => symbolTables.set(k, t));
        summary = summarize(j, performance.now() - t0, direct.reduce((a, f) => a + f.size, 0), waited);
        return { res: { type: 'load', summary } };
      } finally {
        controllers.delete(id);
      }
    }
    case 'loadBatches': {
      const t0 = performance.now();
      const asm = assembling;
      assembling = null;
      if (!asm) throw new Error('no job batches arrived');
      const { job: j, symbols } = asm.finish();
      job = j;
      frameTables.clear();
      growthCache.clear();
      symbolTables.clear();
      symbols.forEach((t, k) => symbolTables.set(k, t));
      summary = summarize(j, performance.now() - t0, 0, 0);
      return { res: { type: 'loadBatches', summary } };
    }
    case 'summary':
      if (!summary) throw new Error('no job loaded');
      return { res: { type: 'summary', summary } };
    case 'stackSeries':
      return { res: { type: 'stackSeries', series: stackSeries(req.proc, req.n, req.view) } };
    case 'growth':
      return { res: { type: 'growth', growth: growth(req.proc, req.base, req.target, req.view, req.limit) } };
    case 'suspects': {
      if (!job) throw new Error('no job loaded');
      const view = req.view;
      const suspects = suspectsResult(job, req.limit, (i, id) => labelOf(frameTable(i), stackKeys(proc(i), frameTable(i), id, view), view.mode));
      return { res: { type: 'suspects', suspects } };
    }
    case 'flame': {
      const { flame: f, transfer } = flame(req.proc, req.snapshot, req.base, req.view);
      return { res: { type: 'flame', flame: f }, transfer };
    }
    case 'stack':
      return { res: { type: 'stack', stack: stackDetail(req.proc, req.stackId, req.members ?? [], req.base, req.target, req.view) } };
    case 'stackTargets':
      return { res: { type: 'stackTargets', targets: stackTargets(req.proc, req.stackIds) } };
    case 'resolveStacks':
      return { res: { type: 'resolveStacks', ids: resolveStacks(req.targets) } };
    case 'report': {
      const r = await report(req.procs, req.base, req.target, req.session, req.title, req.sanitize, req.view, req.previewOnly);
      return { res: { type: 'report', ...r } };
    }
    case 'export': {
      const r = exportSnapshot(req.format, req.procs, req.snapshot, req.view);
      return { res: { type: 'export', ...r }, transfer: typeof r.data === 'string' ? [] : [r.data.buffer as ArrayBuffer] };
    }
    case 'reopenReport': {
      const r = reopenReport(req.html);
      return { res: { type: 'reopenReport', session: r.session, data: r.data } };
    }
    case 'close':
      job = null;
      summary = null;
      frameTables.clear();
      growthCache.clear();
      return { res: { type: 'close' } };
  }
}

self.onmessage = (ev: MessageEvent<ToWorker>) => {
  const msg = ev.data;
  if ('stage' in msg) {
    staged.push(...msg.stage);
    return;
  }
  if ('jobBatch' in msg) {
    // a 'job' batch starts a job afresh (what an interrupted earlier one left is dropped)
    if (msg.jobBatch.kind === 'job' || !assembling) assembling = new JobAssembler<SymbolTable>();
    assembling.add(msg.jobBatch);
    return;
  }
  if ('cancel' in msg) {
    controllers.get(msg.cancel)?.abort();
    return;
  }
  if ('readReply' in msg) {
    const r = pendingReads.get(msg.readReply);
    pendingReads.delete(msg.readReply);
    if (!r) return;
    if (msg.bytes) r.resolve(msg.bytes);
    else r.reject(new Error(msg.error ?? 'read failed'));
    return;
  }
  const { id, req } = msg;
  const t0 = performance.now();
  handle(id, req).then(
    ({ res, transfer }) => post({ id, ok: true, res, ms: performance.now() - t0 }, transfer ?? []),
    (e: unknown) => {
      const err = e instanceof Error ? e : new Error(String(e));
      post({ id, ok: false, error: err.message, cancelled: err.name === 'AbortError' });
    },
  );
};
