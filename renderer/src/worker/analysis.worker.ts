// The analysis worker: owns the loaded Job and answers the UI's queries. The UI thread never parses text.
// The same module runs in-page in a report (lib/in-page-worker.ts: `connect`, `receive`), over the job the
// report embeds.

/// <reference lib="webworker" />
import { postmortemQuery } from '../../../core/query/postmortem.ts';
import { contextParts } from './context-summary.ts';
import { classifyFiles, groupProcesses, loadJob } from '../../../core/load/load-job.ts';
import { withPrefetch } from './prefetch.ts';
import { createWebDumpPool, type ReaderFile } from './dump-pool-web.ts';
import type { DumpPool } from '../../../core/load/dump-pool.ts';
import { previewJob, type PreviewProcess } from '../../../core/load/job-preview.ts';
import { mtimeProblem } from '../../../core/model/snapshot-time.ts';
import { webInflater } from '../../../core/formats/inflate.ts';
import { diffSnapshots } from '../../../core/stats/diff.ts';
import { diffRows } from '../../../core/query/rows.ts';
import { leastSquaresSlope, rankGrowth } from '../../../core/stats/growth.ts';
import { addStackToFunctions, finishFunctionRows } from '../../../core/stats/function-diff.ts';
import { buildCallTree } from '../../../core/stats/call-tree.ts';
import { calleeKeys, callerKeys, invertedKeys } from '../../../core/frames/callers.ts';
import { callSite, interpreterModules, leadFrameIndex } from '../../../core/frames/stack-labels.ts';
import { processName } from '../../../core/model/process-name.ts';
import type { Job, LoadWarning, ProcessSeries, Snapshot } from '../../../core/model/model.ts';
import { JobAssembler } from '../../../core/model/job-batches.ts';
import type { InputFile } from '../../../core/formats/input-file.ts';
import { FrameCatalog } from '../../../core/frames/catalog.ts';
import { sampleSeries, sampleUnavailable, sampleUnit } from '../../../core/model/sample-type.ts';
import { missingBinaries } from '../../../core/symbolize/missing-binaries.ts';
import { compileAddr2line, type CompiledWasm } from '../../../core/symbolize/wasm-addr2line.ts';
import { inputFileSource, perfMapsAmong, symbolizeJob } from '../../../core/symbolize/symbolize-job.ts';
import addr2lineWasmUrl from 'virtual:heaplens/addr2line-wasm-url';
import reportApp from 'virtual:heaplens/report-app';
import { resolveStack, stackTarget } from '../../../core/notes/notes.ts';
import type { Session, StackTarget } from '../../../core/notes/schema.ts';
import { buildReport, type SanitizeOptions } from '../../../core/report/build-report.ts';
import { buildReportHtml } from '../../../core/report/html.ts';
import { reopenPayload, reopenReport } from '../../../core/report/reopen.ts';
import { fromBase64 } from '../../../core/report/payload.ts';
import { viewFolds, viewSource } from '../../../core/frames/view.ts';
import type { StackDescriber } from '../../../core/frames/describe.ts';
import { toPprof } from '../../../core/export/pprof.ts';
import { toFolded } from '../../../core/export/folded.ts';
import { toSpeedscope } from '../../../core/export/speedscope.ts';
import type { ExportInput } from '../../../core/export/samples.ts';
import { keepPatterns, stackVerdict, suspectsResult } from './suspects.ts';
import { lastCompleteIndex, snapshotTotalBytes } from '../../../core/model/snapshot-status.ts';
import { denseVariances } from '../../../core/model/sampling-error.ts';
import type { FrameGroup } from '../../../core/model/vocab.ts';
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
  FlameShape,
  JobPreview,
  WarningSummary,
} from '../lib/protocol.ts';

declare const self: DedicatedWorkerGlobalScope;

let job: Job | null = null;
let summary: JobSummary | null = null;
const frameTables = new Map<number, FrameCatalog>();
let compiledWasm: Promise<CompiledWasm> | null = null;
const controllers = new Map<number, AbortController>();
const pendingReads = new Map<number, { resolve: (b: Uint8Array) => void; reject: (e: Error) => void }>();
let nextRead = 1;
let staged: SourceFile[] = [];
/** a job arriving in batches (a dataset the desktop app's main process reads), until 'loadBatches' */
let assembling: JobAssembler | null = null;

let postOut: (msg: FromWorker, transfer: Transferable[]) => void = (msg, transfer) => self.postMessage(msg, transfer);

function post(msg: FromWorker, transfer: Transferable[] = []): void {
  postOut(msg, transfer);
}

/** In-page use (a report): where answers go instead of the worker's postMessage. */
export function connect(out: (msg: FromWorker) => void): void {
  postOut = (msg) => out(msg);
}

function hostRead(hostPath: string, offset: number, length: number): Promise<Uint8Array> {
  const id = nextRead++;
  return new Promise((resolve, reject) => {
    pendingReads.set(id, { resolve, reject });
    post({ read: id, hostPath, offset, length });
  });
}

// The model's memory budget in the app: a renderer process holds a few GB at most (V8 caps each heap
// near 4 GB and the readers need room too); beyond it the load stops with a message naming
// `heaplens ingest` (core/load/memory-budget.ts) rather than the tab crashing.
const APP_MEMORY_BUDGET = 2e9;

// How long the parse waits for the dump heads' preview before starting anyway: the first picture in
// seconds matters more than the same delay on a load of minutes.
const PREVIEW_HEAD_START_MS = 2000;

// Dump readers, one per core, started on the first load and kept; each load says where its files are.
let pool: DumpPool | null | undefined;
let poolFiles: {
  locate: Map<InputFile, ReaderFile>;
  read: (i: number, offset: number, length: number) => Promise<Uint8Array>;
} | null = null;
function dumpPool(): DumpPool | null {
  if (pool === undefined) {
    pool = createWebDumpPool({
      locate: (f) => poolFiles?.locate.get(f) ?? null,
      read: (source, offset, length) =>
        poolFiles ? poolFiles.read(Number(source), offset, length) : Promise.reject(new Error('no load in progress')),
    });
  }
  return pool;
}

/** Closes the dump readers (their heaps go with them); the next load starts fresh ones. */
function closeDumpPool(): void {
  pool?.close();
  pool = undefined;
}

/** Everything cached per loaded job (by process index). */
function resetCaches(): void {
  jobIsPartial = false;
  keepPatterns(false);
  frameTables.clear();
  growthCache2.clear();
  sampled.clear();
}

// While a job loads, the job so far goes to the window at most this often (each update re-renders its views).
const PARTIAL_INTERVAL_MS = 500;

/**
 * The load in progress: the job open before it (back in place if it is cancelled; its processes keep their
 * symbols), and whether it was replaced.
 */
let loading: {
  before: { job: Job | null; summary: JobSummary | null };
  replaced: boolean;
  stopTimer: () => void;
} | null = null;
/** the loaded job is the partial one of a load in progress (its ranking is redone as processes come in) */
let jobIsPartial = false;

/**
 * The job process by process while it loads (loadJob's onProcess): the first complete process at once, then at
 * most one update per PARTIAL_INTERVAL_MS (the last one waits on a timer). Each update makes the processes read
 * so far the worker's job, so the window's queries (suspects, growth, flame graphs) answer on them, and posts
 * its summary with the other processes from their dump heads.
 */
function partialPoster(
  id: number,
  signal: AbortSignal,
  preview: () => JobPreview | null,
  progress: () => LoadProgress,
): { onProcess: (processes: readonly ProcessSeries[], warnings: readonly LoadWarning[]) => void; stop: () => void } {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let last = -Infinity;
  let latest: { processes: readonly ProcessSeries[]; warnings: readonly LoadWarning[] } | null = null;
  let stopped = false;
  const state = {
    before: { job, summary },
    replaced: false,
    stopTimer: () => {
      if (timer !== null) clearTimeout(timer);
      timer = null;
    },
  };
  loading = state;
  const send = (): void => {
    timer = null;
    if (stopped || !latest || signal.aborted) return;
    const { processes, warnings } = latest;
    latest = null;
    last = performance.now();
    if (!state.replaced) {
      state.replaced = true;
      resetCaches();
    }
    // a new Job object each time: what is cached per job (the ranking) is of this prefix of the processes
    job = { processes: processes.slice(), warnings: warnings.slice(), ignoredFiles: [] };
    jobIsPartial = true;
    keepPatterns(true);
    summary = null;
    const done = summarize(job, 0, progress().bytesTotal, 0);
    const keys = new Set(job.processes.map((p) => p.key));
    const pending: ProcessSummary[] = [];
    let first = 0;
    for (const pp of preview()?.processes ?? []) {
      if (!keys.has(pp.key)) pending.push(pendingProcess(pp, done.processes.length + pending.length, first));
      first += pp.snapshots.length;
    }
    post({ id, progress: { ...progress(), partial: { ...done, processes: done.processes.concat(pending) } } });
  };
  return {
    onProcess(processes, warnings) {
      latest = { processes, warnings };
      const wait = last + PARTIAL_INTERVAL_MS - performance.now();
      if (wait <= 0) send();
      else timer ??= setTimeout(send, wait);
    },
    stop() {
      stopped = true;
      state.stopTimer();
    },
  };
}

/** A process whose dumps are still being read, from its dump heads: header totals, no stacks. */
function pendingProcess(p: PreviewProcess, index: number, first: number): ProcessSummary {
  const live = p.snapshots.map((s) => s.headerLiveBytes ?? 0);
  // on the wall clock when the files' times are plausible (as the loader will judge them), else by sequence
  const problem = mtimeProblem(p.snapshots);
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
      liveBytes: live[si],
      liveObjects: 0,
      truncated: false,
      complete: true,
      headerLiveBytes: s.headerLiveBytes,
      mtimeMs: s.mtimeMs,
      timeMs: problem === null ? s.mtimeMs : null,
      timeSource: problem === null ? 'mtime' : 'seq',
      memory: null,
    })),
    lastLiveBytes: live[live.length - 1] ?? 0,
    firstLiveBytes: live[0] ?? 0,
    maxLiveBytes: live.reduce((a, b) => Math.max(a, b), 0),
    slopeBytesPerSnapshot: leastSquaresSlope(live),
    endedWithoutFinalDump: false,
    stackCount: 0,
    hasPythonFrames: false,
    truncatedCount: 0,
    identity: null,
    limitBytes: null,
    time:
      problem === null
        ? { axis: 'wall', source: 'mtime', mtimeProblem: null }
        : { axis: 'seq', source: 'seq', mtimeProblem: `${problem}; its dumps are still being read` },
    pending: { first },
  };
}

function toInputFile(f: SourceFile): InputFile {
  const blob = f.blob;
  const hostPath = f.hostPath;
  const file = blob instanceof File ? blob : null;
  return {
    path: f.path,
    size: f.size >= 0 ? f.size : (blob?.size ?? 0),
    mtimeMs: f.mtimeMs ?? (file && file.lastModified > 0 ? file.lastModified : null),
    async read(offset: number, length: number): Promise<Uint8Array> {
      if (blob)
        return new Uint8Array(
          await (offset === 0 && length >= blob.size ? blob : blob.slice(offset, offset + length)).arrayBuffer(),
        );
      if (hostPath) return await hostRead(hostPath, offset, length);
      throw new Error(`no content for ${f.path}`);
    },
  };
}

function proc(i: number): ProcessSeries {
  if (!job) throw new Error('no job loaded');
  const p = job.processes[i];
  if (!p) throw new Error(`no process ${i}`);
  return p;
}

const sampled = new Map<string, ProcessSeries>();

/** The process with the view's sample values in its columns (core/model/sample-type.ts); an error says why not. */
function valuesProc(i: number, view: ViewOptions): ProcessSeries {
  const t = view.sample ?? 'inuse_space';
  if (t === 'inuse_space') return proc(i);
  const k = `${i}|${t}`;
  let p = sampled.get(k);
  if (!p) {
    const sp = sampleSeries(proc(i), t);
    if (!sp) throw new Error(`${proc(i).key}: ${sampleUnavailable(proc(i), t)}`);
    p = sp;
    sampled.set(k, p);
  }
  return p;
}

function frameTable(i: number): FrameCatalog {
  let t = frameTables.get(i);
  if (!t) {
    t = new FrameCatalog(proc(i));
    frameTables.set(i, t);
  }
  return t;
}

/**
 * Symbolizes the job (core/symbolize/symbolize-job.ts) over the files loaded with it (binaries and debug files the
 * user dropped beside the dumps) and `extra` (symbol folders): each process's table goes onto the model, and what
 * could not be found or trusted becomes a warning (missing binaries have their own view: 'missingBinaries').
 */
async function symbolizeAll(
  j: Job,
  files: InputFile[],
  extra: InputFile[],
  signal: AbortSignal,
  progress: (p: LoadProgress) => void,
): Promise<void> {
  if (!j.processes.some((p) => p.maps)) return;
  const dumps = new Set(j.processes.flatMap((p) => p.snapshots.map((s) => s.file)));
  const others = files.filter((f) => !dumps.has(f.path));
  compiledWasm ??= fetch(addr2lineWasmUrl)
    .then((r) => r.arrayBuffer())
    .then((b) => compileAddr2line(new Uint8Array(b)));
  const { source, dirs } = inputFileSource(others.concat(extra));
  const problems = await symbolizeJob(j, {
    source,
    wasm: await compiledWasm,
    symbolDirs: dirs,
    sysroot: null,
    hostPaths: false,
    cacheStore: null,
    perfMaps: await perfMapsAmong(others),
    signal,
    onProgress: progress,
  });
  for (const pr of problems) if (pr.kind !== 'missing') j.warnings.push({ file: pr.file, message: pr.message });
}

const growthCache2 = new Map<string, Map<number, { steadiness: number; slope: number; growingFraction: number }>>();
function growthInfo(
  i: number,
  view: ViewOptions = { mode: 'merged', hideAllocator: true },
): Map<number, { steadiness: number; slope: number; growingFraction: number }> {
  const k = `${i}|${view.sample ?? 'inuse_space'}`;
  let g = growthCache2.get(k);
  if (!g) {
    g = new Map();
    // over the complete dumps: a cut last dump would read as every stack shrinking at the end
    for (const s of rankGrowth(valuesProc(i, view), { to: lastCompleteIndex(proc(i)) }))
      g.set(s.stackId, {
        steadiness: s.steadiness,
        slope: s.slopeBytesPerSnapshot,
        growingFraction: s.growingFraction,
      });
    growthCache2.set(k, g);
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
  const ctx = contextParts(j);
  const processes: ProcessSummary[] = j.processes.map((p, index) => {
    // totals: a cut dump's header total (its records are partial), else the sum of records
    const live = p.snapshots.map(snapshotTotalBytes);
    const table = frameTable(index);
    const c = ctx[index];
    return {
      index,
      key: p.key,
      pid: p.pid,
      prefix: p.prefix,
      name: c.identity?.name ?? processName(p),
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
        ...c.snapshots[si],
      })),
      lastLiveBytes: live[live.length - 1] ?? 0,
      firstLiveBytes: live[0] ?? 0,
      maxLiveBytes: live.reduce((a, b) => Math.max(a, b), 0),
      slopeBytesPerSnapshot: leastSquaresSlope(live),
      endedWithoutFinalDump: p.endedWithoutFinalDump,
      stackCount: p.stacks.count,
      hasPythonFrames: table.hasPython,
      truncatedCount: p.snapshots.filter((s) => s.truncated !== null).length,
      identity: c.identity,
      treeOrder: c.treeOrder,
      limitBytes: c.limitBytes,
      time: c.time,
    };
  });
  const warnings: WarningSummary[] = j.warnings.map((w) => ({ ...w, kind: warningKind(w.message) }));
  // files read as binaries or debug files by the symbolizer are not "ignored"
  const used = new Set<string>();
  for (const p of j.processes) {
    for (const m of p.symbols?.modules ?? []) {
      if (m.binaryPath) used.add(m.binaryPath.replace(/^\/+/, ''));
      if (m.debugPath) used.add(m.debugPath.replace(/^\/+/, ''));
    }
  }
  const ignoredFiles = j.ignoredFiles.filter((f) => !used.has(f.replace(/^\/+/, '')));
  // A truncated snapshot always shows a warning, even if the loader reported it differently.
  for (const p of j.processes) {
    for (const s of p.snapshots) {
      if (s.truncated && !warnings.some((w) => w.file === s.file && w.kind === 'truncated')) {
        warnings.push({
          file: s.file,
          byteOffset: s.truncated.byteOffset,
          line: s.truncated.line,
          message: `truncated at byte ${s.truncated.byteOffset}: the dump ended early (complete records kept)`,
          kind: 'truncated',
        });
      }
    }
  }
  // the verdict once the whole job is in (the query ranks the job again: not per partial update)
  const pm = !jobIsPartial && j.processes.length > 0 ? postmortemQuery(j) : null;
  return {
    processes,
    warnings,
    ignoredFiles,
    loadMs,
    readWaitMs: waitMs,
    bytesTotal,
    verdict: pm?.verdict ?? null,
    logsRead: pm?.logsRead.map((l) => ({ file: l.file, gave: l.gave })) ?? [],
  };
}

/**
 * A stack's label: the frame that names it (core/frames/stack-labels.ts leadFrameIndex: in python-first, the first
 * Python frame; markers of folded frames never lead), a short caller chain, and its call site (`file:line`).
 */
function labelOf(
  table: FrameCatalog,
  keys: ArrayLike<number>,
  mode: ViewOptions['mode'] = 'merged',
): { label: string; context: string; group: FrameGroup; site: string | null } {
  const shown = Array.from(keys, (k) => table.frames[k]).filter((f) => f.kind !== 'folded');
  if (shown.length === 0)
    return {
      label: mode === 'python' ? '(no Python frames)' : '(no frames)',
      context: '',
      group: 'unknown',
      site: null,
    };
  const lead = leadFrameIndex(shown, mode);
  const f = shown[lead];
  const ctx = shown.slice(lead + 1, lead + 4).map((c) => c.label);
  return { label: f.label, context: ctx.join(' ← '), group: f.group, site: callSite(shown.slice(lead)) };
}

function growth(
  i: number,
  base: number,
  target: number,
  view: ViewOptions,
  limit: number,
  functionLimit: number = limit,
): GrowthResult {
  const p = valuesProc(i, view);
  const table = frameTable(i);
  const g = growthInfo(i, view);
  // σ of jemalloc's sampling is of live bytes: other sample types get none (no row is greyed as noise)
  const liveSample = (view.sample ?? 'inuse_space') === 'inuse_space';
  // one row per visible stack (core/query/rows.ts): stacks that differ only in hidden frames (allocator paths,
  // native frames in the Python view, Python frames in the native view) are summed
  const keyOf = (id: number): string | null => (table.dropped(id, view) ? null : table.stackKeys(id, view).join(','));
  const { rows: dataRows, deltas } = diffRows(p, base, target, { key: keyOf, sigma: liveSample, order: 'magnitude' });
  const rows: StackRow[] = dataRows.map((r) => {
    const l = labelOf(table, table.stackKeys(r.stackId, view), view.mode);
    let steadiness = 0;
    let slope = 0;
    let growingFraction = 0;
    for (const id of r.members) {
      const gi = g.get(id);
      steadiness += gi?.steadiness ?? 0;
      slope += gi?.slope ?? 0;
      growingFraction = Math.max(growingFraction, gi?.growingFraction ?? 0);
    }
    const deltaPct = r.baseBytes > 0 ? (100 * r.deltaBytes) / r.baseBytes : r.targetBytes > 0 ? Infinity : 0;
    return {
      stackId: r.stackId,
      members: r.members,
      label: l.label,
      context: l.context,
      frameGroup: l.group,
      site: l.site,
      baseBytes: r.baseBytes,
      targetBytes: r.targetBytes,
      deltaBytes: r.deltaBytes,
      deltaPct,
      baseObjects: r.baseObjects,
      targetObjects: r.targetObjects,
      status: r.status,
      steadiness,
      slope,
      growingFraction,
      sigmaDeltaBytes: r.sigmaDeltaBytes,
      withinNoise: r.withinNoise,
    };
  });
  const stacks = rows.slice(0, limit);
  // per-function self/total, in the current stack mode
  const fn = new Map<number, FunctionRow>();
  const row = (k: number): FunctionRow => {
    let r = fn.get(k);
    if (!r) {
      const f = table.frames[k];
      r = {
        key: k,
        label: f.label,
        frameGroup: f.group,
        file: f.file,
        module: f.module,
        selfBase: 0,
        selfTarget: 0,
        selfDelta: 0,
        totalBase: 0,
        totalTarget: 0,
        totalDelta: 0,
      };
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
    // markers of folded frames are not functions: the by-function table leaves them out
    addStackToFunctions(
      table.stackKeys(d.stackId, view).filter((k) => table.frames[k].kind !== 'folded'),
      d.baseBytes,
      d.targetBytes,
      row,
      seen,
    );
  }
  const functions = finishFunctionRows([...fn.values()]);
  functions.sort((a, b) => b.totalDelta - a.totalDelta);
  return {
    proc: i,
    pid: p.pid,
    base,
    target,
    stacks,
    stackCount: rows.length,
    functions: functions.slice(0, functionLimit),
    functionCount: functions.length,
    baseTotal,
    targetTotal,
  };
}

function flame(
  i: number,
  snapshot: number,
  base: number | null,
  view: ViewOptions,
  shape: FlameShape = { kind: 'normal' },
): { flame: FlameData; transfer: Transferable[] } {
  const p = valuesProc(i, view);
  const table = frameTable(i);
  let stackIds: ArrayLike<number>;
  let bytes: ArrayLike<number>;
  let objects: ArrayLike<number> | undefined;
  let baseBytes: ArrayLike<number> | undefined;
  if (base === null) {
    const s = p.snapshots[snapshot];
    if (!s) throw new Error(`no snapshot ${snapshot}`);
    const keep = Array.from(s.stackIds.keys()).filter((j) => !table.dropped(s.stackIds[j], view));
    stackIds = Uint32Array.from(keep, (j) => s.stackIds[j]);
    bytes = Float64Array.from(keep, (j) => s.liveBytes[j]);
    objects = Float64Array.from(keep, (j) => s.liveObjects[j]);
  } else {
    const deltas = diffSnapshots(p, base, snapshot).filter((d) => !table.dropped(d.stackId, view));
    stackIds = Uint32Array.from(deltas, (d) => d.stackId);
    bytes = Float64Array.from(deltas, (d) => d.targetBytes);
    objects = Float64Array.from(deltas, (d) => d.targetObjects);
    baseBytes = Float64Array.from(deltas, (d) => d.baseBytes);
  }
  const shaped = shapeStacks(shape, stackIds, bytes, objects, baseBytes, (id) => table.stackKeys(id, view), i, view);
  const tree = buildCallTree(p.stacks, shaped.values, { stackKeys: shaped.stackKeys });
  stackIds = shaped.values.stackIds;
  // σ of sampling is of live bytes: none for other sample types or for trees weighed by growth
  const sigmaOk = base !== null && shape.by !== 'growth' && (view.sample ?? 'inuse_space') === 'inuse_space';
  const deltaVar =
    sigmaOk && base !== null
      ? nodeDeltaVariance(tree, stackIds, p.stacks.count, p.snapshots[base], p.snapshots[snapshot])
      : null;
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
  const transfer: Transferable[] = [
    tree.depth.buffer,
    tree.end.buffer,
    tree.parent.buffer,
    tree.key.buffer,
    tree.total.buffer,
    tree.self.buffer,
    tree.totalObjects.buffer,
  ];
  if (tree.baseTotal) transfer.push(tree.baseTotal.buffer);
  if (tree.absDeltaTotal) transfer.push(tree.absDeltaTotal.buffer);
  if (deltaVar) transfer.push(deltaVar.buffer);
  return { flame: data, transfer };
}

/** Per node of a diff tree: the variance of its Δ, the sum over the stacks through it of Var_base + Var_target. */
function nodeDeltaVariance(
  tree: { size: number; parent: Int32Array; stackNode: Int32Array },
  stackIds: ArrayLike<number>,
  count: number,
  a: Snapshot,
  b: Snapshot,
): Float64Array {
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

function stackDetail(
  i: number,
  stackId: number,
  members: number[],
  base: number,
  target: number,
  view: ViewOptions,
): StackDetail {
  const p = valuesProc(i, view);
  const table = frameTable(i);
  const frames = table.stackDetail(stackId, view.mode);
  const ids = members.length > 0 ? members : [stackId];
  const series = p.snapshots.map((_, si) => ids.reduce((sum, id) => sum + valueIn(p, si, id), 0));
  const v = job ? stackVerdict(job, i, stackId) : null;
  const verdict = v
    ? {
        pattern: v.s.pattern,
        score: v.s.score,
        sigmaBytes: v.s.sigmaBytes,
        withinNoise: v.s.withinNoise,
        lateRate: v.s.lateSlopePerSecond ?? v.s.lateSlopePerSnapshot,
        lateRatePerSecond: v.s.lateSlopePerSecond !== null,
        groupProcesses: v.s.groupProcesses,
        rank: v.rank,
        rowRank: v.s.group,
        rowScore: v.rowScore,
        note: v.s.note,
      }
    : undefined;
  return {
    stackId,
    frames,
    series,
    baseBytes: series[base] ?? 0,
    targetBytes: series[target] ?? 0,
    ...(verdict ? { verdict } : {}),
  };
}

function stackSeries(i: number, n: number, view: ViewOptions): StackSeries {
  const p = valuesProc(i, view);
  const table = frameTable(i);
  if (p.snapshots.length === 0) return { stackIds: [], labels: [], values: [] };
  // stacks with the same visible frames in this view are one series
  const groupOf = new Int32Array(p.stacks.count).fill(-1);
  const groupKey = new Map<string, number>();
  const rep: number[] = [];
  const group = (id: number): number => {
    let g = groupOf[id];
    if (g < 0) {
      const k = table.stackKeys(id, view).join(',');
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
      if (table.dropped(s.stackIds[j], view)) continue;
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
  const values: number[][] = Array.from({ length: top.length + 1 }, () =>
    new Array<number>(p.snapshots.length).fill(0),
  );
  p.snapshots.forEach((s, si) => {
    for (let j = 0; j < s.stackIds.length; j++) {
      if (groupOf[s.stackIds[j]] < 0) continue; // filtered out
      const k = slot.get(groupOf[s.stackIds[j]]);
      values[k === undefined ? top.length : k][si] += s.liveBytes[j];
    }
  });
  const labels = top.map((g) => {
    const l = labelOf(table, table.stackKeys(rep[g], view), view.mode);
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
    // a note's label is the stack's first surviving frame in the default (python-first) view
    const l = labelOf(table, table.stackKeys(id, { mode: 'python-first', hideAllocator: true }));
    const label = l.label.startsWith('(no ') ? undefined : l.label;
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

/** The frames an export or the report reads: the view's (core/frames/view.ts), as the CLI's exports read them. */
function frameSource(i: number, view: ViewOptions): StackDescriber {
  return viewSource(proc(i), view);
}

async function report(
  procs: number[],
  base: number,
  target: number,
  session: Session,
  title: string,
  sanitize: SanitizeOptions,
  view: ViewOptions,
  previewOnly: boolean,
) {
  if (!job) throw new Error('no job loaded');
  const focusedKey = session.selection.process;
  const inputs = procs.map((i) => {
    const p = proc(i);
    const input: { proc: ProcessSeries; base?: number; target?: number } = { proc: p };
    if (p.key === focusedKey && base >= 0 && target >= 0 && base < p.snapshots.length && target < p.snapshots.length) {
      input.base = base;
      input.target = target;
    }
    return input;
  });
  const {
    job: header,
    bytes,
    preview,
  } = buildReport(inputs, {
    title,
    generator: 'heaplens app',
    stackMode: view.mode,
    showAllocator: !view.hideAllocator,
    symbolized: procs.some((i) => proc(i).symbols !== null),
    session,
    warnings: job.warnings,
    sanitize,
  });
  if (previewOnly) return { html: null, preview, bytes: 0 };
  const html = await buildReportHtml(bytes, { title: header.title, generator: header.generator }, reportApp);
  return { html, preview, bytes: new TextEncoder().encode(html).length };
}

function exportSnapshot(
  format: ExportFormat,
  procs: number[],
  snapshot: number,
  view: ViewOptions,
): { data: string | Uint8Array; name: string; mime: string } {
  const inputs: ExportInput[] = procs.map((i) => {
    const p = proc(i);
    // the snapshot index applies to the focused process; others export their last snapshot
    const s = i === procs[0] ? Math.min(snapshot, p.snapshots.length - 1) : p.snapshots.length - 1;
    // pprof carries every sample type; folded and speedscope carry the view's sample
    return { proc: format === 'pprof' ? p : valuesProc(i, view), snapshotIndex: s, frames: frameSource(i, view) };
  });
  const first = inputs[0]?.proc;
  const stem = `heaplens-${first?.pid ?? 'job'}-${first ? (first.snapshots[inputs[0].snapshotIndex].seq ?? inputs[0].snapshotIndex) : 0}`;
  const opts = { showAllocator: !view.hideAllocator, measure: sampleUnit(view.sample ?? 'inuse_space') };
  switch (format) {
    case 'pprof':
      return {
        data: toPprof(inputs, { ...opts, comments: ['heaplens app export'], defaultSample: view.sample }),
        name: `${stem}.pb`,
        mime: 'application/octet-stream',
      };
    case 'folded':
      return { data: toFolded(inputs, opts), name: `${stem}.folded`, mime: 'text/plain' };
    case 'speedscope':
      return {
        data: JSON.stringify(toSpeedscope(inputs, { ...opts, name: stem })),
        name: `${stem}.speedscope.json`,
        mime: 'application/json',
      };
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
        for (const g of groupProcesses(classified.dumps))
          for (const d of g.dumps) order.push(index.get(d.file) as number);
        const files = withPrefetch(direct, order, (i) => direct[i].read(0, direct[i].size));
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
        // Blob-backed dumps are read by the pool's readers themselves; host paths through this worker's read-ahead.
        const locate = new Map<InputFile, ReaderFile>();
        timed.forEach((f, i) => locate.set(f, all[i].blob ? { blob: all[i].blob as Blob } : { source: String(i) }));
        poolFiles = { locate, read: (i, o, l) => timed[i].read(o, l) };
        const readers = dumpPool();
        // Every process's timeline from the dump heads first, while the readers parse.
        const bytesTotal = direct.reduce((a, f) => a + f.size, 0);
        // set by the heads' read (a callback: typed wide so the narrowing to null does not stick)
        let preview = null as JobPreview | null;
        const previewed = previewJob(direct, { inflate: webInflater(), signal: ctrl.signal }).then(
          (got) => {
            preview = got;
            if (!ctrl.signal.aborted)
              post({
                id,
                progress: {
                  phase: 'parse',
                  filesDone: 0,
                  filesTotal: preview.dumps,
                  bytesDone: 0,
                  bytesTotal,
                  file: '',
                  preview: got,
                },
              });
          },
          () => undefined,
        );
        // The heads go first (the readers would otherwise take the disk and cores from them), for a bounded time.
        await Promise.race([previewed, new Promise((r) => setTimeout(r, PREVIEW_HEAD_START_MS))]);
        let lastProgress: LoadProgress = {
          phase: 'parse',
          filesDone: 0,
          filesTotal: preview?.dumps ?? 0,
          bytesDone: 0,
          bytesTotal,
          file: '',
        };
        const partial = partialPoster(
          id,
          ctrl.signal,
          () => preview,
          () => lastProgress,
        );
        const j = await loadJob(timed, {
          ...(readers ? { runDump: readers.run, parallelism: 2 * readers.size, recycle: readers.recycle } : {}),
          memoryBudget: APP_MEMORY_BUDGET,
          signal: ctrl.signal,
          onProcess: partial.onProcess,
          onProgress: (pr: LoadProgress) => {
            lastProgress = {
              phase: pr.phase,
              filesDone: pr.filesDone,
              filesTotal: pr.filesTotal,
              bytesDone: pr.bytesDone,
              bytesTotal: pr.bytesTotal,
              file: pr.file,
            };
            // every dump is read (what is left is merging): the readers' heaps go now, before the job is put
            // together and ranked (the peak of a load); a next load starts fresh readers
            if (pr.filesDone === pr.filesTotal && pr.filesTotal > 0) closeDumpPool();
            const now = performance.now();
            if (now - lastPost > 50 || pr.filesDone === pr.filesTotal) {
              lastPost = now;
              post({ id, progress: lastProgress });
            }
          },
        });
        partial.stop();
        if (ctrl.signal.aborted) throw new DOMException('cancelled', 'AbortError');
        closeDumpPool();
        try {
          await symbolizeAll(j, direct, (req.symbolFiles ?? []).map(toInputFile), ctrl.signal, (pr) =>
            post({ id, progress: pr }),
          );
        } catch (e) {
          if (ctrl.signal.aborted) throw e;
          j.warnings.push({
            file: '',
            message: `symbolization unavailable: ${e instanceof Error ? e.message : String(e)}; frames show module+offset`,
          });
        }
        // frame tables made while the job was shown process by process serve the full job where nothing changed
        // (same series, no symbols found): made again, they were the second copy in memory at the load's end. The
        // growth of a series and its other sample types depend on the series alone: kept too (a sample-type copy
        // only while its series' symbols are the ones it was copied with).
        const made = loading?.replaced
          ? { tables: new Map(frameTables), growth: new Map(growthCache2), sampled: new Map(sampled) }
          : null;
        job = j;
        resetCaches();
        if (made) {
          made.tables.forEach((t, k) => {
            if (t.describes(j.processes[k])) frameTables.set(k, t);
          });
          made.growth.forEach((g, k) => growthCache2.set(k, g));
          made.sampled.forEach((p, k) => {
            if (p.symbols === j.processes[Number(k.slice(0, k.indexOf('|')))]?.symbols) sampled.set(k, p);
          });
        }
        summary = {
          ...summarize(
            j,
            performance.now() - t0,
            direct.reduce((a, f) => a + f.size, 0),
            waited,
          ),
          readers: readers?.size ?? 0,
        };
        return { res: { type: 'load', summary } };
      } catch (e) {
        // a cancelled or failed load leaves the job that was open before, also where its processes were shown
        if (loading?.replaced) {
          job = loading.before.job;
          summary = loading.before.summary;
          resetCaches();
        }
        throw e;
      } finally {
        loading?.stopTimer();
        loading = null;
        poolFiles = null;
        controllers.delete(id);
      }
    }
    case 'loadBatches': {
      const t0 = performance.now();
      const asm = assembling;
      assembling = null;
      if (!asm) throw new Error('no job batches arrived');
      const j = asm.finish();
      job = j;
      resetCaches();
      summary = summarize(j, performance.now() - t0, 0, 0);
      return { res: { type: 'loadBatches', summary } };
    }
    case 'summary':
      if (!summary) throw new Error('no job loaded');
      return { res: { type: 'summary', summary } };
    case 'stackSeries':
      return { res: { type: 'stackSeries', series: stackSeries(req.proc, req.n, req.view) } };
    case 'growth':
      return {
        res: {
          type: 'growth',
          growth: growth(req.proc, req.base, req.target, req.view, req.limit, req.functionLimit ?? req.limit),
        },
      };
    case 'suspects': {
      if (!job) throw new Error('no job loaded');
      const view = req.view;
      // the focus/ignore chips narrow the ranking as they narrow every view
      const filtered = (view.filters ?? []).length > 0;
      const suspects = suspectsResult(
        job,
        req.limit,
        (i, id) => labelOf(frameTable(i), frameTable(i).stackKeys(id, view), view.mode),
        filtered ? (i, id) => !frameTable(i).dropped(id, view) : undefined,
      );
      return { res: { type: 'suspects', suspects } };
    }
    case 'flame': {
      const { flame: f, transfer } = flame(req.proc, req.snapshot, req.base, req.view, req.shape);
      return { res: { type: 'flame', flame: f }, transfer };
    }
    case 'stack':
      return {
        res: {
          type: 'stack',
          stack: stackDetail(req.proc, req.stackId, req.members ?? [], req.base, req.target, req.view),
        },
      };
    case 'stackTargets':
      return { res: { type: 'stackTargets', targets: stackTargets(req.proc, req.stackIds) } };
    case 'resolveStacks':
      return { res: { type: 'resolveStacks', ids: resolveStacks(req.targets) } };
    case 'report': {
      if (jobIsPartial) throw new Error('the job is still loading: a report is made once every dump is read');
      const r = await report(
        req.procs,
        req.base,
        req.target,
        req.session,
        req.title,
        req.sanitize,
        req.view,
        req.previewOnly,
      );
      return { res: { type: 'report', ...r } };
    }
    case 'export': {
      const r = exportSnapshot(req.format, req.procs, req.snapshot, req.view);
      return {
        res: { type: 'export', ...r },
        transfer: typeof r.data === 'string' ? [] : [r.data.buffer as ArrayBuffer],
      };
    }
    case 'reopenReport': {
      // the report's job replaces the loaded one: every view then runs on it as on loaded dumps
      const t0 = performance.now();
      const r = req.payload !== undefined ? reopenPayload(fromBase64(req.payload)) : reopenReport(req.html ?? '');
      job = r.job;
      resetCaches();
      summary = summarize(r.job, performance.now() - t0, 0, 0);
      // the process table counts the stacks of the dumps, not only the ones the report kept
      summary.processes.forEach((p, k) => (p.stackCount = r.header.processes[k]?.stackCount ?? p.stackCount));
      return { res: { type: 'reopenReport', session: r.session, summary } };
    }
    case 'missingBinaries':
      return {
        res: {
          type: 'missingBinaries',
          summary: missingBinaries(proc(req.proc), req.snapshot, proc(req.proc).symbols?.modules ?? [], {
            includeAllocator: !req.view.hideAllocator,
            // the view's folded interpreter frames are not what it shows unresolved
            folded: viewFolds(proc(req.proc), req.view).interpreter ? interpreterModules(proc(req.proc)) : undefined,
          }),
          symbolized: proc(req.proc).symbols !== null,
        },
      };
    case 'close':
      job = null;
      summary = null;
      resetCaches();
      return { res: { type: 'close' } };
  }
}

/** One message from the UI (the worker's onmessage, or a direct call in-page). */
export function receive(msg: ToWorker): void {
  if ('stage' in msg) {
    staged.push(...msg.stage);
    return;
  }
  if ('jobBatch' in msg) {
    // a 'job' batch starts a job afresh (what an interrupted earlier one left is dropped)
    if (msg.jobBatch.kind === 'job' || !assembling) assembling = new JobAssembler();
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
}

// -- inverted flame graph and sandwich view (core/frames/callers.ts) -----------------------------------

/**
 * The stacks of a tree request in the requested shape: as they are, bottom-up (inverted), or the callers or
 * callees of one frame key (only the stacks through it). `by: 'growth'` weighs each stack by its steady-growth
 * slope (rankGrowth over the series) instead of its bytes.
 */
function shapeStacks(
  shape: FlameShape,
  stackIds: ArrayLike<number>,
  bytes: ArrayLike<number>,
  objects: ArrayLike<number> | undefined,
  baseBytes: ArrayLike<number> | undefined,
  keysOf: (id: number) => Int32Array,
  proc: number,
  view: ViewOptions,
): {
  values: { stackIds: Uint32Array; bytes: Float64Array; objects?: Float64Array; baseBytes?: Float64Array };
  stackKeys: (id: number) => ArrayLike<number>;
} {
  const growthBy = shape.by === 'growth' ? growthInfo(proc, view) : null;
  const keep: number[] = [];
  const shapedKeys = new Map<number, Int32Array>();
  for (let j = 0; j < stackIds.length; j++) {
    const id = stackIds[j];
    const keys = keysOf(id);
    let k: Int32Array | null = keys;
    // bottom-up: the roots are the first surviving frames (a leaf-side run of folded frames is not a root)
    if (shape.kind === 'inverted') k = invertedKeys(dropLeadingMarkers(keys, proc));
    else if (shape.kind === 'callers') k = callerKeys(keys, shape.key ?? -1);
    else if (shape.kind === 'callees') k = calleeKeys(keys, shape.key ?? -1);
    if (!k) continue;
    if (growthBy && !((growthBy.get(id)?.slope ?? 0) > 0)) continue;
    shapedKeys.set(id, k);
    keep.push(j);
  }
  const values = {
    stackIds: Uint32Array.from(keep, (j) => stackIds[j]),
    bytes: Float64Array.from(keep, (j) => (growthBy ? (growthBy.get(stackIds[j])?.slope ?? 0) : bytes[j])),
    ...(objects ? { objects: Float64Array.from(keep, (j) => objects[j]) } : {}),
    ...(baseBytes && !growthBy ? { baseBytes: Float64Array.from(keep, (j) => baseBytes[j]) } : {}),
  };
  return { values, stackKeys: (id) => shapedKeys.get(id) ?? keysOf(id) };
}

function dropLeadingMarkers(keys: Int32Array, i: number): Int32Array {
  const frames = frameTable(i).frames;
  let n = 0;
  while (n < keys.length && frames[keys[n]].kind === 'folded') n++;
  return n === 0 ? keys : keys.subarray(n);
}

// in a worker (not when imported in-page): messages come from the UI thread
if (typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !== 'undefined')
  self.onmessage = (ev: MessageEvent<ToWorker>) => receive(ev.data);
