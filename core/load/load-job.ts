// Files → parsers → model: turns the files a user copied off a dead job into per-process series.
// One bad file never stops the rest: it becomes a warning naming the file (and line or byte offset).

import type { InputFile } from '../formats/input-file.js';
import { webInflater, type Inflater } from '../formats/inflate.js';
import { parseMaps, type MapsEntry, type MapsParseProblem } from '../formats/proc-maps.js';
import { chooseProcessMaps, type DumpMaps } from './process-maps.js';
import { refusal, sniff, SNIFF_BYTES } from '../formats/sniff.js';
import { codecOf, decodedHead } from '../formats/decompress.js';
import type { ProfileFrame } from '../formats/dump-types.js';
import {
  basename as baseName,
  classifySideFile,
  dirName,
  isCaptureTempName,
  looksLikeDumpBytes,
  looksLikeDumpName,
  parseDumpName,
  profileNames,
  type DumpName,
  type SideFile,
} from '../formats/dump-filename.js';
import type { Job, JobEvidence, LoadWarning, ProcessSeries } from '../model/model.js';
import { AddressTexts, ProcessBuilder } from '../model/process-builder.js';
import { mergeDumpTask, runDumpTaskHere, type DumpTask, type DumpTaskResult } from './dump-task.js';
import { JobTooLargeError, snapshotBytes, stackTableBytes } from './memory-budget.js';
import { adoptSystingFrames } from './systing-frames.js';
import { decodeSystingSlot, parseSystingCodeMap, systingTokenFromMapsPaths } from '../formats/systing-codemap.js';
import { dumpSidecar, pythonFramesForDump, seriesPythonFrames } from '../frames/python-stacks.js';
import { parsePyFrames, PyFrameTableMerger, type PyFrameTable } from '../formats/pyframes.js';
import { contextForDump, isContextOnlyTable } from './dump-context-load.js';
import type { CaptureKind } from './capture-series.js';
import { framelessWarnings } from './frameless.js';
import { topFolders } from '../model/process-host.js';

import type { LoadProgress } from '../model/vocab.js';

export type { LoadProgress };

export interface LoadOptions {
  onProgress?: (p: LoadProgress) => void;
  signal?: AbortSignal;
  /**
   * Treat every dump as one series, in the order given (for comparing two files of different
   * processes: stacks then match by raw address, which only holds without ASLR or for the same binary
   * loaded at the same place).
   */
  singleSeries?: boolean;
  /** runs one dump's task (a worker pool's); in this thread when absent */
  runDump?: DumpRunner;
  /**
   * How many readers run the dump tasks (the pool's size); 1 when absent. The tasks started ahead of the merge are
   * TASKS_AHEAD_PER_READER a reader, within AHEAD_BYTES.
   */
  readers?: number;
  /** stop with a JobTooLargeError once the model would take more than this many bytes */
  memoryBudget?: number;
  /**
   * Called as each process's series is complete (in load order, so `processes` is always a prefix of the
   * job's list and an index stays valid): the app shows a job process by process while the rest is read.
   * RSS logs are attached to the series only at the end.
   */
  onProcess?: (processes: readonly ProcessSeries[], warnings: readonly LoadWarning[]) => void;
  /**
   * Called after each dump merged into a process not complete yet (`processes` are the complete ones before it):
   * `soFar()` is that process from its dumps read so far, for a provisional ranking while the first process is
   * read. Its arrays are the loader's own and grow with the next dump: use it before this call returns.
   */
  onDump?: (processes: readonly ProcessSeries[], dumps: number, soFar: () => ProcessSeries) => void;
  /**
   * `files` as classifyFiles already told them (over these same handles: see reclassify), so their first bytes
   * are not read a second time; told here when absent
   */
  classified?: ClassifiedFiles;
  /**
   * the host's native gunzip for what is read in this thread (node:zlib in the CLI: about half the CPU of Node's
   * DecompressionStream, measured on the deep bench job's dumps); the platform's DecompressionStream when absent
   */
  inflate?: Inflater | null;
}

/** Runs one dump task somewhere (this thread, a worker); rejects only when cancelled. */
export type DumpRunner = (
  task: DumpTask,
  onBytes: (bytesRead: number) => void,
  signal?: AbortSignal,
) => Promise<DumpTaskResult>;

// The platform's native gunzip when it has one (browsers, Electron, Node ≥ 18); else the reader uses pako.
const defaultInflater = webInflater();

interface DumpEntry {
  file: InputFile;
  name: DumpName | null;
  /** the reader (sniff.ts); a text dump when absent */
  kind?: 'text' | 'pprof' | 'massif';
  /** massif: the snapshot of the file this entry is */
  part?: number;
  /** groups entries by more than folder + name (a massif file is one process) */
  group?: string;
  /** pprof: the profile's own time (time_nanos, ms), which orders a series before names and mtimes do */
  timeMs?: number | null;
  /** pprof: the pid the samples' labels name, which wins over the file name's */
  labelPid?: number | null;
  /** pprof: the executable the profile is of (pprofIdentity.exe): different ones are different processes */
  exe?: string | null;
  /** pprof: the name's number keeps a series apart but is not said to be a pid (only jeprof's names say one) */
  keyNotPid?: boolean;
  /** a text dump: the file's first bytes as read to tell it (raw, perhaps compressed): the preview's head */
  head?: Uint8Array;
}

export interface ClassifiedFiles {
  dumps: DumpEntry[];
  side: { file: InputFile; side: SideFile }[];
  /** memleak reports and PyTorch snapshots, told by content (core/formats/sniff.ts) */
  captures: { file: InputFile; kind: CaptureKind }[];
  ignored: string[];
  /** capture temp files (also in `ignored`): a dump or table being written, or cut by a kill */
  unfinished: string[];
  /** recognized, or named like a profile, but not read: what the file is and what to do, one line each */
  refused: LoadWarning[];
  /** the ignored files themselves, for the evidence readers (core/load/evidence-load.ts) */
  other: InputFile[];
}

const MAX_MAPS_FILE = 64 * 1024 * 1024;
const textDecoder = new TextDecoder('utf-8');

/** Names a profile goes by, beyond jemalloc's: pprof's, massif's (an unknown file so named gets a warning). */
const PROFILE_NAME = /(?:\.pb|\.pprof|\.pb\.gz|\.heap\.\w+|\.prof\.\w+|(?:^|\/)massif\.out\.[^/]*|\.pickle)$/;

/** Sorts files into dumps, side files and the rest, each told by its content (core/formats/sniff.ts). */
export async function classifyFiles(
  files: readonly InputFile[],
  signal?: AbortSignal,
  inflate: Inflater | null = defaultInflater,
): Promise<ClassifiedFiles> {
  // Each file's first bytes are read (and a compressed head inflated) to tell it by content. One file at a time
  // that is a round trip per file before anything is shown (5.7 s on the 1,600-file bench job in Node, far more
  // through the browser's Blobs), so the reads overlap, a bounded number at once, and the answers are put back
  // in the input's order (the same order as the one-at-a-time loop).
  const parts: ClassifiedFiles[] = new Array<ClassifiedFiles>(files.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < files.length) {
      const i = next++;
      signal?.throwIfAborted();
      parts[i] = await classifyOne(files[i], inflate);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CLASSIFY_LANES, files.length) }, lane));
  const out = emptyClassified();
  for (const part of parts) {
    out.dumps.push(...part.dumps);
    out.side.push(...part.side);
    out.captures.push(...part.captures);
    out.ignored.push(...part.ignored);
    out.unfinished.push(...part.unfinished);
    out.refused.push(...part.refused);
    out.other.push(...part.other);
  }
  // pids and sequence numbers of pprof profiles are judged over the whole folder's names
  nameProfiles(out.dumps.filter((d) => d.kind === 'pprof'));
  return out;
}

/**
 * The same classification over other handles of the same files (the app's loader reads through wrappers that
 * time and prefetch; the heads told once before the wrappers existed stay true of them).
 */
export function reclassify(c: ClassifiedFiles, to: (file: InputFile) => InputFile): ClassifiedFiles {
  return {
    // the heads are the preview's, not the loader's
    dumps: c.dumps.map((d) => ({ ...d, file: to(d.file), head: undefined })),
    side: c.side.map((s) => ({ ...s, file: to(s.file) })),
    captures: c.captures.map((s) => ({ ...s, file: to(s.file) })),
    ignored: [...c.ignored],
    unfinished: [...c.unfinished],
    refused: [...c.refused],
    other: c.other.map(to),
  };
}

/** How many files are sniffed at once: enough to hide a read's latency, few enough to bound the heads held. */
const CLASSIFY_LANES = 32;

function emptyClassified(): ClassifiedFiles {
  return { dumps: [], side: [], captures: [], ignored: [], unfinished: [], refused: [], other: [] };
}

/** One file told by its name and content (the loop body of classifyFiles; `continue` is `return out`). */
async function classifyOne(file: InputFile, inflate: Inflater | null): Promise<ClassifiedFiles> {
  const out = emptyClassified();
  {
    if (isCaptureTempName(file.path)) {
      out.ignored.push(file.path);
      out.unfinished.push(file.path);
      return out;
    }
    const side = classifySideFile(file.path);
    if (side) {
      out.side.push({ file, side });
      return out;
    }
    const name = parseDumpName(file.path);
    const named = name !== null || looksLikeDumpName(file.path);
    if (file.size === 0) {
      if (named) out.dumps.push({ file, name });
      else out.ignored.push(file.path);
      return out;
    }
    let raw: Uint8Array;
    try {
      raw = await file.read(0, Math.min(SNIFF_BYTES, file.size));
    } catch (e) {
      // a dump's task says it could not be read; anything else is left out as before
      if (named) out.dumps.push({ file, name });
      else out.ignored.push(file.path);
      return out;
    }
    // the common case first: a jemalloc dump by its name and first bytes, nothing decompressed
    if (named && looksLikeDumpBytes(raw) && codecOf(raw) === null) {
      out.dumps.push({ file, name, head: raw });
      return out;
    }
    const codec = codecOf(raw);
    // a gzipped file with a jemalloc dump's full name (prefix.pid.seq.i<n>.heap.gz) is read as a dump without
    // inflating its head here: the dump reader inflates it anyway and says where it is not a dump; inflating
    // 800 heads cost the bench job ~2 s of CPU before its first timeline
    if (name !== null && codec === 'gzip') {
      out.dumps.push({ file, name, head: raw });
      return out;
    }
    const head = codec ? await decodedHead(file, codec, SNIFF_BYTES, inflate).catch(() => null) : raw;
    if (head === null) {
      // compressed, but nothing decodes: the dump reader says where it fails
      out.dumps.push({ file, name });
      return out;
    }
    const found = sniff(head);
    const kind = found.entry?.name;
    if (kind === 'jemalloc') out.dumps.push({ file, name, head: raw });
    else if (kind === 'memleak' || kind === 'pytorch-snapshot')
      out.captures.push({ file, kind: kind === 'memleak' ? 'memleak' : 'torch-snapshot' });
    else if (kind === 'pprof') {
      const [{ readWhole }, { MAX_PPROF_BYTES, pprofIdentity }] = await Promise.all([
        import('./profile-task.js'),
        import('../formats/pprof.js'),
      ]);
      const { bytes } = await readWhole(file, MAX_PPROF_BYTES, { inflate });
      const id = pprofIdentity(bytes);
      if (id.pids > 0)
        out.refused.push({
          file: file.path,
          message: `its samples name ${id.pids} processes (pid labels): read as one snapshot of one process`,
        });
      out.dumps.push({ file, name, kind: 'pprof', timeMs: id.timeMs, labelPid: id.pid, exe: id.exe });
    } else if (kind === 'massif') {
      const [{ readWhole }, { MAX_MASSIF_BYTES, MAX_MASSIF_SNAPSHOTS }] = await Promise.all([
        import('./profile-task.js'),
        import('../formats/massif.js'),
      ]);
      const { bytes, problem } = await readWhole(file, MAX_MASSIF_BYTES, { inflate });
      const found = (textDecoder.decode(bytes).match(/^snapshot=\d+\r?$/gm) ?? []).length;
      // too large to hold (the limit named), or cut by its decoder: said once here, what was read is read
      if (problem)
        out.refused.push({
          file: file.path,
          message: `valgrind massif output ${found === 0 ? 'not read' : `read in part (${found} snapshots)`}: ${problem}`,
        });
      const count = Math.min(found, MAX_MASSIF_SNAPSHOTS);
      if (found > count)
        out.refused.push({
          file: file.path,
          message: `${found} snapshots, more than massif writes (--max-snapshots is at most ${MAX_MASSIF_SNAPSHOTS}): the first ${count} are read`,
        });
      const pid = /massif\.out\.(\d+)/.exec(baseName(file.path));
      const massifName: DumpName | null = pid
        ? { prefix: 'massif', pidNamespace: null, pid: Number(pid[1]), seq: 0, trigger: 'unknown', triggerSeq: null }
        : null;
      if (count === 0 && !problem)
        out.refused.push({ file: file.path, message: 'valgrind massif output with no snapshot' });
      for (let part = 0; part < count; part++)
        out.dumps.push({
          file,
          name: massifName ? { ...massifName, seq: part } : null,
          kind: 'massif',
          part,
          group: `massif:${file.path}`,
        });
    } else {
      const why = refusal(found, head);
      if (why !== null && (found.entry || named || codec !== null || PROFILE_NAME.test(file.path)))
        out.refused.push({
          file: file.path,
          // where the text that explains itself is: its first non-blank line (of the decompressed bytes)
          line: codec ? 1 : firstTextLine(head),
          byteOffset: 0,
          message: codec && !found.entry?.compression ? `(${codec}-compressed) ${why}` : why,
        });
      else {
        out.ignored.push(file.path);
        out.other.push(file);
      }
    }
  }
  return out;
}

/**
 * Names pprof profiles as dumps are named, so a folder of them groups into processes and orders like dumps: the
 * pid from the samples' labels; else a number the names share (leaky-6287-001, leaky-6287-002…) keeps a series
 * apart, without being called a pid (digits in a name are a pid only in jeprof's naming, parseDumpName); the
 * sequence number from the name, else the profile's place in its series by time. Profiles of different
 * executables (pprofIdentity.exe: the main binary's name and build-id) are different processes, unless a pid
 * label joins them.
 */
function nameProfiles(entries: DumpEntry[]): void {
  const names = profileNames(entries.map((d) => d.file.path));
  const numberKey = (i: number) => `${dirName(entries[i].file.path)}\u0000${names[i].prefix}\u0000${names[i].pid}`;
  const shared = new Map<string, number>();
  entries.forEach((d, i) => {
    if (!d.name && d.labelPid == null && names[i].pid !== null)
      shared.set(numberKey(i), (shared.get(numberKey(i)) ?? 0) + 1);
  });
  const bySeries = new Map<string, DumpEntry[]>();
  entries.forEach((d, i) => {
    const n = names[i];
    if (d.name) return; // a jemalloc-style name keeps its meaning
    // by a label, the process is the folder's files with that pid, whatever their names
    const byLabel = d.labelPid != null;
    const pid = byLabel ? d.labelPid! : (shared.get(numberKey(i)) ?? 0) >= 2 ? n.pid : null;
    if (pid === null) return; // no pid, no shared number: the folder's series (a number of one file orders it)
    const prefix = byLabel ? 'pprof' : n.prefix;
    d.name = { prefix, pidNamespace: null, pid, seq: n.seq ?? 0, trigger: 'unknown', triggerSeq: null };
    if (!byLabel) d.keyNotPid = true;
    if (n.seq === null) {
      const key = `${dirName(d.file.path)}/${prefix}.${pid}`;
      bySeries.set(key, [...(bySeries.get(key) ?? []), d]);
    }
  });
  // several executables in what would be one process: one process each
  const exes = new Map<string, Set<string>>();
  for (const d of entries)
    if (d.labelPid == null && d.exe) {
      const k = processKey(d);
      exes.set(k, (exes.get(k) ?? new Set()).add(d.exe));
    }
  for (const d of entries)
    if (d.labelPid == null && d.exe && (exes.get(processKey(d))?.size ?? 0) > 1)
      d.group = `${processKey(d)} [${d.exe}]`;
  for (const series of bySeries.values()) series.sort(compareDumps).forEach((d, k) => d.name && (d.name.seq = k + 1));
}

/** The process a dump belongs to by its folder and name (groupProcesses' key, unless the entry has a group). */
function processKey(d: DumpEntry): string {
  const dir = dirName(d.file.path);
  const n = d.name;
  return n
    ? `${dir}/${n.prefix}${n.pidNamespace !== null ? '.' + n.pidNamespace : ''}.${n.pid}`
    : `${dir}/(unnamed dumps)`;
}

/** 1-based number of the first non-blank line. */
function firstTextLine(head: Uint8Array): number {
  let line = 1;
  for (const b of head) {
    if (b === 10) line++;
    else if (b !== 13 && b !== 32 && b !== 9) return line;
  }
  return 1;
}

interface ProcessGroup {
  key: string;
  dir: string;
  prefix: string;
  pid: number | null;
  pidNamespace: number | null;
  /** the top folder under the job root (core/model/process-host.ts topFolders), null when folders tell no hosts */
  host: string | null;
  dumps: DumpEntry[];
}

/** Groups dumps by folder, prefix and pid (pids repeat across the nodes of a job), ordered within each. */
export function groupProcesses(dumps: readonly DumpEntry[]): ProcessGroup[] {
  const groups = new Map<string, ProcessGroup>();
  for (const d of dumps) {
    const dir = dirName(d.file.path);
    const n = d.name;
    const key = d.group ?? processKey(d);
    let g = groups.get(key);
    if (!g) {
      const pid = d.keyNotPid ? null : (n?.pid ?? null);
      const pidNamespace = n?.pidNamespace ?? null;
      g = { key, dir, prefix: n?.prefix ?? '', pid, pidNamespace, host: null, dumps: [] };
      groups.set(key, g);
    }
    g.dumps.push(d);
  }
  for (const g of groups.values()) g.dumps.sort(compareDumps);
  const out = [...groups.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  // the same pid in node-a/ and node-b/ is two processes (the key has the folder): the folder names the host
  const hosts = topFolders(out.map((g) => g.dir));
  out.forEach((g, i) => (g.host = hosts[i]));
  return out;
}

function singleGroup(dumps: readonly DumpEntry[]): ProcessGroup {
  const pids = new Set(dumps.map((d) => d.name?.pid ?? null));
  const first = dumps[0]?.name ?? null;
  return {
    key: '(one series)',
    dir: '',
    prefix: first?.prefix ?? '',
    pid: pids.size === 1 ? (first?.pid ?? null) : null,
    pidNamespace: null,
    host: null,
    dumps: [...dumps],
  };
}

/** By the profiles' own times when both have one; by sequence number; files without one by mtime, then name. */
function compareDumps(a: DumpEntry, b: DumpEntry): number {
  if (a.timeMs != null && b.timeMs != null && a.timeMs !== b.timeMs) return a.timeMs - b.timeMs;
  const sa = a.name?.seq ?? Number.POSITIVE_INFINITY;
  const sb = b.name?.seq ?? Number.POSITIVE_INFINITY;
  if (sa !== sb) return sa - sb;
  const ma = a.file.mtimeMs ?? Number.POSITIVE_INFINITY;
  const mb = b.file.mtimeMs ?? Number.POSITIVE_INFINITY;
  if (ma !== mb) return ma - mb;
  return a.file.path < b.file.path ? -1 : a.file.path > b.file.path ? 1 : 0;
}

async function readText(file: InputFile): Promise<string> {
  return textDecoder.decode(await file.read(0, Math.min(file.size, MAX_MAPS_FILE)));
}

export async function loadJob(files: readonly InputFile[], options: LoadOptions = {}): Promise<Job> {
  const warnings: LoadWarning[] = [];
  const classified =
    options.classified ?? (await classifyFiles(files, options.signal, options.inflate ?? defaultInflater));
  warnings.push(...classified.refused);
  for (const f of classified.unfinished)
    warnings.push({
      file: f,
      message:
        'left out: a dump or table the capture library was still writing (or a kill cut); the finished dumps are read',
    });
  const groups = options.singleSeries ? [singleGroup(classified.dumps)] : groupProcesses(classified.dumps);
  const standaloneMaps = await readStandaloneMaps(classified.side, warnings);
  // PYFRAMES/1 sidecars (<dump>.pyframes), by path; tables appended to dumps come from the dump reader
  const codeMaps = classified.side.filter((s) => s.side.kind === 'pycode-map');
  const pyframeSidecars = new Map(
    classified.side.filter((s) => s.side.kind === 'pyframes').map((s) => [s.file.path, s.file] as const),
  );

  const bytesTotal = classified.dumps.reduce((s, d) => s + d.file.size, 0);
  const progress: LoadProgress = {
    phase: 'parse',
    filesDone: 0,
    filesTotal: classified.dumps.length,
    bytesDone: 0,
    bytesTotal,
    file: '',
  };
  const processes: ProcessSeries[] = [];
  const tasks = startDumpTasks(groups, options, progress, pyframeSidecars);
  let modelBytes = 0;
  let taskIndex = 0;
  // one text per distinct address for the whole job: its processes share a code base
  const texts = new AddressTexts();

  // the process read before: its frame count and stack-words buffer size the next one's builder
  let before: ProcessBuilder | null = null;
  for (const g of groups) {
    const builder: ProcessBuilder = new ProcessBuilder(
      texts,
      before && { frames: before.stacks.frames.length, words: before.handOverWords() },
    );
    const dumpMaps: (DumpMaps | null)[] = []; // by snapshot
    // merged as they come, while the readers read on (the last dump's merge is then short)
    const pyTables = new PyFrameTableMerger();
    let stackBytes = 0;
    let lastTrailer: { text: string | null; table: PyFrameTable | null } = { text: null, table: null };
    let profileSymbols: Map<string, ProfileFrame[]> | null = null;
    for (const d of g.dumps) {
      const result = await tasks.next(taskIndex++);
      warnings.push(...result.warnings);
      const parsed = result.parsed;
      if (!parsed) continue;
      const loaded = parsed.info;
      if (loaded.symbols) {
        profileSymbols ??= new Map();
        for (const [a, f] of loaded.symbols) profileSymbols.set(a, f);
      }
      // checked while the dump's stacks are interned too: one dump of 10^7 distinct stacks must stop here,
      // naming itself, before V8 runs out of heap in the middle of the merge (issue 24 item 13)
      const budget = options.memoryBudget;
      const cells = snapshotBytes(parsed.snapshot);
      const over = (file: string | null): void => {
        const now = modelBytes + cells + stackTableBytes(builder.stacks, builder.addresses.hex.length) - stackBytes;
        if (budget === undefined || now <= budget) return;
        tasks.cancel();
        throw new JobTooLargeError(now, budget, progress.filesDone, progress.filesTotal, file);
      };
      over(d.file.path);
      modelBytes += snapshotBytes(mergeDumpTask(builder, parsed, () => over(d.file.path)));
      const nowStackBytes = stackTableBytes(builder.stacks, builder.addresses.hex.length);
      modelBytes += nowStackBytes - stackBytes;
      stackBytes = nowStackBytes;
      if (budget !== undefined && modelBytes > budget) {
        tasks.cancel();
        throw new JobTooLargeError(modelBytes, budget, progress.filesDone, progress.filesTotal);
      }
      // A process's appended table is cumulative and often unchanged from one dump to the next: parsed once.
      if (loaded.trailerText !== null && loaded.trailerText !== lastTrailer.text) {
        lastTrailer = { text: loaded.trailerText, table: parsePyFrames(loaded.trailerText, 'dump') };
      }
      const trailer = loaded.trailerText === null ? null : (lastTrailer.table ?? loaded.trailerText);
      const py = await pythonFramesForDump(
        d.file.path,
        trailer,
        pyframeSidecars,
        warnings,
        loaded.mapsText,
        loaded.sidecar,
      );
      if (py) {
        builder.snapshots[builder.snapshots.length - 1].context = contextForDump(
          py,
          d.file.path,
          d.name?.pid ?? null,
          pyframeSidecars,
          warnings,
        );
        if (!isContextOnlyTable(py)) pyTables.add(py);
      }
      if (loaded.mapsText) {
        const parsed = parseMaps(loaded.mapsText, loaded.mapsFirstLine);
        mapsLineWarnings(d.file.path, parsed.problems, warnings);
        const ids = loaded.buildIds;
        if (ids) for (const e of parsed.entries) if (Object.hasOwn(ids, e.path)) e.buildId = ids[e.path];
        dumpMaps.push({
          file: d.file.path,
          entries: parsed.entries,
          complete: loaded.mapsComplete,
          dropped: parsed.problems.length,
        });
      } else {
        dumpMaps.push(null);
      }
      if (options.onDump && builder.snapshots.length > 0 && builder.snapshots.length < g.dumps.length) {
        const parts = { dumpMaps, pyTables, profileSymbols, standaloneMaps };
        // what telling the process so far finds (no maps yet, …) is said again, or not, once it is complete
        options.onDump(processes, builder.snapshots.length, () => seriesOf(g, builder, parts, [], true));
      }
    }
    if (builder.snapshots.length === 0) continue;
    const series = seriesOf(g, builder, { dumpMaps, pyTables, profileSymbols, standaloneMaps }, warnings);
    before = builder;
    await adoptSystingCodeMap(series, series.maps, codeMaps, warnings);
    processes.push(series);
    options.onProcess?.(processes, warnings);
  }
  // The readers of captures, RSS logs and evidence load only for a job that has such files (dynamic imports):
  // a job of jemalloc dumps alone, the usual one, does not pay for their modules.
  if (classified.captures.length > 0) {
    const { loadCapture } = await import('./capture-series.js');
    for (const c of classified.captures) {
      options.signal?.throwIfAborted();
      const read = {
        ...(options.runDump ? { run: options.runDump } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        inflate: options.inflate ?? defaultInflater,
      };
      for (const series of await loadCapture(c.file, c.kind, warnings, standaloneMaps, read)) {
        processes.push(series);
        options.onProcess?.(processes, warnings);
      }
    }
  }
  if (classified.side.some((s) => s.side.kind === 'rss-log')) {
    const [{ readRssLogs }, { attachRssLogs }] = await Promise.all([
      import('./rss-log-load.js'),
      import('./rss-log-align.js'),
    ]);
    attachRssLogs(processes, await readRssLogs(classified.side, warnings), warnings);
  }
  let evidence: JobEvidence | undefined;
  let unread: string[] = [];
  if (classified.other.length > 0) {
    const { applyEvidence } = await import('./evidence-load.js');
    ({ evidence, unread } = await applyEvidence(processes, classified.other, warnings));
  }
  options.onProgress?.({ ...progress, file: '' });
  // ignored: what no reader took (the evidence readers take some of the files the dump readers left)
  const read = new Set(classified.other.map((f) => f.path));
  for (const path of unread) read.delete(path);
  const ignoredFiles = classified.ignored.filter((path) => !read.has(path));
  return { processes, warnings, ignoredFiles, ...(evidence ? { evidence } : {}) };
}

/**
 * A process's series from what its dumps gave (the maps it is read with, its Python frames): once its dumps are
 * all merged, and for the ones merged so far while it is read (LoadOptions.onDump).
 */
function seriesOf(
  g: ProcessGroup,
  builder: ProcessBuilder,
  parts: {
    dumpMaps: readonly (DumpMaps | null)[];
    pyTables: PyFrameTableMerger;
    profileSymbols: Map<string, ProfileFrame[]> | null;
    standaloneMaps: readonly StandaloneMaps[];
  },
  warnings: LoadWarning[],
  soFar = false,
): ProcessSeries {
  const { dumpMaps, pyTables, profileSymbols, standaloneMaps } = parts;
  const chosen = chooseProcessMaps(dumpMaps, (i) => snapshotAddresses(builder, i), warnings);
  let maps = chosen?.entries ?? null;
  const baseComplete = chosen !== null && dumpMaps.some((m) => m?.file === chosen.base && m.complete);
  const fromFile = standaloneMaps.find(
    (m) => (m.pid !== null && m.pid === g.pid) || (m.pid === null && m.dir === g.dir),
  );
  if ((!maps || !baseComplete) && fromFile) {
    maps = fromFile.entries;
    // the snapshots say so once their process is read (a later dump's maps may be the ones chosen after all)
    if (!soFar) for (const s of builder.snapshots) if (s.mapsSource === null) s.mapsSource = 'file';
  }
  // a profile that names its own frames needs no maps to be read: an empty list, so symbolizing runs
  if (!maps && profileSymbols) maps = [];
  if (!maps) {
    warnings.push({
      file: g.dumps[g.dumps.length - 1].file.path,
      message: `no maps for process ${describeGroup(g)}: its dumps have no MAPPED_LIBRARIES section and no maps file (maps.<pid>, <pid>.maps, proc/<pid>/maps) was given, so frames cannot be attributed to binaries`,
    });
  }
  const series = builder.finish(g.key, { pid: g.pid, pidNamespace: g.pidNamespace, prefix: g.prefix }, maps);
  if (g.host !== null) series.host = g.host;
  framelessWarnings(series, warnings);
  if (profileSymbols) series.profileSymbols = profileSymbols;
  if (pyTables.size > 0)
    series.pythonFrames = seriesPythonFrames(pyTables.result(), g.dumps[g.dumps.length - 1].file.path, warnings);
  return series;
}

/** systing's Python code map for this process (by pid, and by token when its maps name one). */
async function adoptSystingCodeMap(
  series: ProcessSeries,
  maps: MapsEntry[] | null,
  codeMaps: ClassifiedFiles['side'],
  warnings: LoadWarning[],
): Promise<void> {
  if (series.pid === null || !series.addresses.hex.some((h) => decodeSystingSlot(h) !== null)) return;
  const token = maps ? systingTokenFromMapsPaths(maps.map((m) => m.path)) : null;
  for (const { file, side } of codeMaps) {
    if (side.pid !== series.pid) continue;
    if (token !== null && !file.path.toLowerCase().includes(`-${token}`)) continue;
    const map = parseSystingCodeMap(await readText(file));
    if (!map) {
      warnings.push({
        file: file.path,
        message: 'not a systing Python code map (no "# systing-pycode" header); its frames stay unresolved',
      });
      continue;
    }
    const r = adoptSystingFrames(series.addresses, map, series.pythonFrames ?? null);
    if (r.table) series.pythonFrames = r.table;
    if (r.unknown > 0)
      warnings.push({ file: file.path, message: `${r.unknown} Python frame(s) name code ids this map does not have` });
    return;
  }
  warnings.push({
    file: series.key,
    message: 'stacks hold systing Python slots (0x5059…) but no matching pycode-<pid>-<token>.map was given',
  });
}

function describeGroup(g: ProcessGroup): string {
  return g.pid !== null ? `${g.prefix || 'pid'} ${g.pid}` : `in ${g.dir || '.'}`;
}

/**
 * Dump tasks started ahead of the merge, per reader: enough for a reader to go on while the merging thread ranks a
 * process or posts an update (tasks reach a reader only when that thread asks for the next result). With two a
 * reader, the engine's readers waited a third of the 1,000-process job's load with a core free.
 */
export const TASKS_AHEAD_PER_READER = 16;

/**
 * Bytes of files started ahead of the merge, beyond two tasks a reader: large dumps' results waiting for a slow
 * merge must not pile up in memory (small ones, gzipped, are many to a megabyte).
 */
export const AHEAD_BYTES = 32 * 1024 * 1024;

/**
 * Runs the dump tasks in load order, ahead of the merge (TASKS_AHEAD_PER_READER a reader within AHEAD_BYTES, so
 * a slow merge never piles up results in memory), and hands them back in that order.
 */
function startDumpTasks(
  groups: readonly ProcessGroup[],
  options: LoadOptions,
  progress: LoadProgress,
  sidecars: ReadonlyMap<string, InputFile>,
) {
  const order = groups.flatMap((g) => g.dumps);
  const run =
    options.runDump ??
    ((task: DumpTask, onBytes: (n: number) => void, signal?: AbortSignal) =>
      runDumpTaskHere(task, { onBytes, ...(signal ? { signal } : {}), inflate: options.inflate ?? defaultInflater }));
  const readers = Math.max(1, options.readers ?? 1);
  const ahead = readers * TASKS_AHEAD_PER_READER;
  // the file bytes of the tasks started and not yet handed back
  let aheadBytes = 0;
  const started: Promise<DumpTaskResult>[] = [];
  const partial: number[] = [];
  let partialSum = 0;
  let doneBytes = 0;
  const report = () => {
    progress.bytesDone = doneBytes + partialSum;
    options.onProgress?.(progress);
  };
  const start = (i: number) => {
    const d = order[i];
    partial[i] = 0;
    progress.file = d.file.path;
    const name = d.name;
    const sidecar = d.kind === undefined || d.kind === 'text' ? dumpSidecar(d.file.path, sidecars) : null;
    const task: DumpTask = {
      ...(d.kind ? { kind: d.kind } : {}),
      ...(d.part !== undefined ? { part: d.part } : {}),
      ...(sidecar ? { sidecar } : {}),
      ...(order.length === 1 ? { alone: true } : {}),
      file: d.file,
      meta: {
        file: d.file.path,
        seq: name?.seq ?? null,
        trigger: name?.trigger ?? 'unknown',
        triggerSeq: name?.triggerSeq ?? null,
        mtimeMs: d.file.mtimeMs,
      },
    };
    const p = run(
      task,
      (n) => {
        partialSum += n - partial[i];
        partial[i] = n;
        report();
      },
      options.signal,
    ).then((r) => {
      partialSum -= partial[i];
      partial[i] = 0;
      doneBytes += d.file.size;
      progress.filesDone++;
      report();
      return r;
    });
    // Awaited later, in order; a rejection (cancel) must not count as unhandled meanwhile.
    p.catch(() => undefined);
    started[i] = p;
  };
  let cancelled = false;
  return {
    next(i: number): Promise<DumpTaskResult> {
      options.signal?.throwIfAborted();
      for (let k = started.length; k < Math.min(order.length, i + ahead) && !cancelled; k++) {
        if (k >= i + 2 * readers && aheadBytes >= AHEAD_BYTES) break;
        aheadBytes += order[k].file.size;
        start(k);
      }
      aheadBytes -= order[i]?.file.size ?? 0;
      const p = started[i];
      delete started[i];
      return p;
    },
    cancel(): void {
      cancelled = true;
    },
  };
}

/** Per-file warnings about maps lines beyond this many are summed up in one (their line numbers listed). */
const MAX_MAPS_LINE_WARNINGS = 50;

/** One warning per dropped maps line (its frames lose their module), naming the file and line. */
function mapsLineWarnings(file: string, problems: readonly MapsParseProblem[], warnings: LoadWarning[]): void {
  for (const p of problems.slice(0, MAX_MAPS_LINE_WARNINGS))
    warnings.push({ file, line: p.line, message: `maps line dropped (${p.message})` });
  const rest = problems.slice(MAX_MAPS_LINE_WARNINGS);
  if (rest.length > 0) {
    const lines = rest
      .slice(0, 200)
      .map((p) => p.line)
      .join(', ');
    warnings.push({
      file,
      line: rest[0].line,
      message: `${rest.length} more maps lines dropped: lines ${lines}${rest.length > 200 ? ', …' : ''}`,
    });
  }
}

/** The distinct frame addresses that snapshot i's records use. */
function snapshotAddresses(builder: ProcessBuilder, i: number): bigint[] {
  const snap = builder.snapshots[i];
  const { offsets, frames } = builder.stacks;
  const seen = new Set<number>();
  for (const id of snap.stackIds) for (let k = offsets[id]; k < offsets[id + 1]; k++) seen.add(frames[k]);
  return [...seen].map((a) => BigInt(builder.addresses.hex[a]));
}

interface StandaloneMaps {
  pid: number | null;
  dir: string;
  entries: MapsEntry[];
}

async function readStandaloneMaps(side: ClassifiedFiles['side'], warnings: LoadWarning[]): Promise<StandaloneMaps[]> {
  const out: StandaloneMaps[] = [];
  for (const { file, side: s } of side) {
    if (s.kind !== 'maps') continue;
    try {
      const parsed = parseMaps(await readText(file));
      mapsLineWarnings(file.path, parsed.problems, warnings);
      if (parsed.entries.length === 0) {
        warnings.push({ file: file.path, message: 'maps file has no mappings' });
        continue;
      }
      // A maps file inside proc/<pid>/ belongs to the dumps beside the proc folder.
      const dir = /(?:^|\/)proc\/\d+$/.test(dirName(file.path))
        ? dirName(dirName(dirName(file.path)))
        : dirName(file.path);
      out.push({ pid: s.pid, dir, entries: parsed.entries });
    } catch (e) {
      warnings.push({ file: file.path, message: `could not be read: ${e instanceof Error ? e.message : String(e)}` });
    }
  }
  return out;
}
