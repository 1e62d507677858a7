// Reads a dataset back into the model (core/model/model.ts), so every command and view works on it unchanged.
// Each Parquet file is read by a query naming it alone: a missing or damaged file is reported by name.

import { topFolders } from '../../core/model/process-host.js';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { DuckDBValue } from '@duckdb/node-api';
import type {
  Counts,
  Job,
  JobEvidence,
  LoadWarning,
  ProcessSeries,
  Snapshot,
  ThreadTotals,
} from '../../core/model/model.js';
import type { InputFile } from '../../core/formats/input-file.js';
import { applyEvidence } from '../../core/load/evidence-load.js';
import { checkEvidenceList, evidenceFiles } from './evidence-copies.js';
import type { TeardownInput } from '../../core/model/series-end.js';
import type { MapsEntry } from '../../core/formats/proc-maps.js';
import type { PyFrameTable } from '../../core/formats/pyframes.js';
import type { DumpFormat, Trigger } from '../../core/formats/dump-types.js';
import type { ModuleReport, SymbolizedAddress, SymbolTable } from '../../core/symbolize/symbolize.js';
import { chunkNumbers, forEachChunk, openEngine, type Engine } from './duckdb.js';
import { DATASET_FORMAT, DATASET_VERSION, MANIFEST_FILE, type Manifest } from './schema.js';
import { DatasetError } from './errors.js';
import { MAX_COUNT } from '../../core/formats/limits.js';
import {
  jsonValue,
  periodValue,
  signedValue,
  sizeOrNull,
  sizeValue,
  textOrNullValue,
  textValue,
  wholeOrNull,
  wholeValue,
} from './dataset-values.js';
import { checkDatasetTree, checkProcessId, MAX_MANIFEST_BYTES, parquetPathSql } from './tree-check.js';
import { fromTaggedJson } from './tagged-json.js';
import { checkDumpContext } from '../../core/formats/dump-context-shape.js';
import { ShapeError } from '../../core/formats/shape.js';
import { partitionDir, type FileRecord, type StoredHost } from './write-dataset.js';

/** A frame address as the readers write it: hex (pprof's and jemalloc's) or decimal, at most 64 bits. */
const ADDRESS = /^(0x[0-9a-f]{1,16}|[0-9]{1,20})$/i;

/** A dataset that cannot be read: names the file (manifest or Parquet file) and what is wrong with it. */
export { DatasetError };

/** True when `path` is a folder holding a dataset manifest. */
export async function isDataset(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory() && (await stat(join(path, MANIFEST_FILE))).isFile();
  } catch {
    return false;
  }
}

export async function readManifest(dir: string): Promise<Manifest> {
  const file = join(dir, MANIFEST_FILE);
  let m: Partial<Manifest>;
  try {
    const size = (await stat(file)).size;
    if (size > MAX_MANIFEST_BYTES) throw new Error(`it is ${size} bytes; a manifest is a few KiB (not read)`);
    m = JSON.parse(await readFile(file, 'utf8')) as Partial<Manifest>;
  } catch (e) {
    throw new DatasetError(
      file,
      `not a readable heaplens dataset manifest (${e instanceof Error ? e.message : String(e)})`,
    );
  }
  if (m.format !== DATASET_FORMAT)
    throw new DatasetError(file, `format is ${JSON.stringify(m.format)}, not ${DATASET_FORMAT}`);
  if (m.version !== DATASET_VERSION)
    throw new DatasetError(
      file,
      `dataset version ${m.version}; this heaplens reads version ${DATASET_VERSION} (ingest the dumps again)`,
    );
  const evidence = checkEvidenceList(dir, m.evidence);
  const manifest = { ...m } as Manifest;
  delete manifest.evidence;
  if (evidence.length > 0) manifest.evidence = evidence;
  return manifest;
}

/** The snapshots whose cells to read, from the process's snapshots and whether it has Python frames (series-end.ts). */
export type CellPicker = (process: TeardownInput) => readonly number[];

export interface ReadOptions {
  /**
   * read the cells (per-stack values of every snapshot); false gives snapshots with no stacks (for SQL-side
   * questions); a function names the snapshots (indices) of a process whose cells are read, the others having none
   */
  cells?: boolean | CellPicker;
  /**
   * Only these stacks of a process get their frames, addresses and symbols read; the other stacks keep their ids
   * but have no frames. For commands that describe a few stacks ranked in SQL (growth). A map names them by the
   * process's dataset id (one dataset; an empty map: no stacks); a function (StackChooser) is called once every
   * process's snapshots are read, and names them by process.
   */
  onlyStacks?: ReadonlyMap<number, readonly number[]> | StackChooser;
  /** apply the kept evidence files (roles, kills, log times: evidence-copies.ts); true unless false (ingest's own read) */
  evidence?: boolean;
}

/** Where a process of a job read from datasets lives: its dataset folder and its id there (partition folder). */
export interface DatasetProcess {
  dir: string;
  id: number;
}

/**
 * Names the stacks whose frames are read, per process, once every process's snapshots are read (its processes have
 * no stacks yet); `sources` says where each process lives.
 */
export type StackChooser = (
  job: Job,
  sources: ReadonlyMap<ProcessSeries, DatasetProcess>,
) => Promise<ReadonlyMap<ProcessSeries, readonly number[]>>;

export interface DatasetJob {
  job: Job;
  /** each process's id in the dataset (its partition folder) */
  ids: Map<ProcessSeries, number>;
  /** cells per snapshot, per process (also when the cells were not read) */
  cellCounts: Map<ProcessSeries, number[]>;
  /** each process's own warnings */
  processWarnings: Map<ProcessSeries, LoadWarning[]>;
  /** warnings about shared side files */
  jobWarnings: LoadWarning[];
  /** warnings of dump groups that gave no process, by process key */
  orphanWarnings: Map<string, LoadWarning[]>;
  files: FileRecord[];
  manifest: Manifest;
  /** each process's stored host (processes.host, host_from) */
  hosts: Map<ProcessSeries, StoredHost | null>;
}

type Row = Record<string, DuckDBValue>;

/** Rows of one Parquet file, as objects; a failure names the file. */
export async function readParquetRows(engine: Engine, file: string, select = '*', tail = ''): Promise<Row[]> {
  return onParquetFile(file, async () =>
    (
      await engine.con.runAndReadAll(`SELECT ${select} FROM read_parquet(${parquetPathSql(file)}) ${tail}`)
    ).getRowObjects(),
  );
}

/** The error for a Parquet file DuckDB cannot read, naming it with the first line of DuckDB's message. */
export function unreadableParquet(file: string, e: unknown): DatasetError {
  return new DatasetError(
    file,
    `not a readable Parquet file (${e instanceof Error ? e.message.split('\n')[0] : String(e)})`,
  );
}

/** The dataset's folders and files checked before DuckDB opens any (tree-check.ts), failing as a DatasetError. */
export const checkTree = checkDatasetTree;

/** Runs `query` on one Parquet file: a file that is missing or that DuckDB cannot read fails naming it. */
async function onParquetFile<T>(file: string, query: () => Promise<T>): Promise<T> {
  try {
    await stat(file);
  } catch {
    throw new DatasetError(file, 'missing from the dataset (was it copied in full?)');
  }
  try {
    return await query();
  } catch (e) {
    if (e instanceof DatasetError) throw e; // a check of the caller's, already naming the file
    throw unreadableParquet(file, e);
  }
}

const isObject = (x: unknown): boolean => typeof x === 'object' && x !== null && !Array.isArray(x);
// a context or frame table written as JSON null (a dump without one)
const isObjectOrNull = (x: unknown): boolean => x === null || isObject(x);
const isThreadList = (x: unknown): boolean =>
  Array.isArray(x) &&
  x.every(
    (t) =>
      isObject(t) &&
      [(t as ThreadTotals).live, (t as ThreadTotals).accumulated].every(
        (c) => isObject(c) && [c.bytes, c.objects].every((v) => typeof v === 'number' && v >= 0 && v <= MAX_COUNT),
      ),
  );

const num = (v: DuckDBValue): number => (typeof v === 'bigint' ? Number(v) : (v as number));
const numOrNull = (v: DuckDBValue): number | null => (v === null ? null : num(v));
const str = (v: DuckDBValue): string => v as string;
const strOrNull = (v: DuckDBValue): string | null => (v === null ? null : (v as string));
const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export async function readDataset(dir: string, options: ReadOptions = {}): Promise<DatasetJob> {
  const manifest = await readManifest(dir);
  await checkTree(dir);
  const engine = await openEngine([dir]);
  try {
    const part = await readPart(engine, dir, manifest, options.cells ?? true, options.evidence ?? true);
    setHosts([part]);
    const processes = part.shells.map((s) => s.series);
    const warnings = jobWarnings([part], part.shells);
    const { evidence, ignoredFiles } = await applyKeptEvidence([part], processes, warnings);
    const only = options.onlyStacks ?? null;
    const chosen =
      typeof only === 'function'
        ? await only(
            { processes: [...processes], warnings: [...warnings], ignoredFiles, ...(evidence ? { evidence } : {}) },
            new Map(part.shells.map((s) => [s.series, { dir, id: s.id }])),
          )
        : null;
    const named = (sh: Shell): readonly number[] | null =>
      chosen ? (chosen.get(sh.series) ?? []) : only && typeof only !== 'function' ? (only.get(sh.id) ?? []) : null;
    for (const sh of part.shells) await readPartStacks(engine, part, sh, named(sh));
    return {
      job: { processes, warnings, ignoredFiles, ...(evidence ? { evidence } : {}) },
      ids: new Map(part.shells.map((s) => [s.series, s.id])),
      cellCounts: part.cellCounts,
      processWarnings: new Map(part.shells.map((s) => [s.series, part.warningsOf.get(s.id) ?? []])),
      jobWarnings: part.warningsOf.get(null) ?? [],
      orphanWarnings: part.orphanWarnings,
      files: part.files,
      manifest,
      hosts: new Map(part.shells.map((s) => [s.series, s.host])),
    };
  } finally {
    engine.close();
  }
}

/** The datasets whose manifest and folders pass (readDatasets leaves the others out, with a warning naming why). */
export async function readableDatasets(dirs: readonly string[]): Promise<string[]> {
  const ok: string[] = [];
  for (const d of dirs) {
    try {
      await readManifest(d);
      await checkTree(d);
      ok.push(d);
    } catch (e) {
      if (!(e instanceof DatasetError)) throw e;
    }
  }
  return ok.length > 0 ? ok : [...dirs];
}

/** A job read from several datasets (each one node's, say), as one job. */
export interface DatasetsJob {
  job: Job;
  /** the datasets read (those left out are named in the job's warnings) */
  dirs: string[];
  sources: Map<ProcessSeries, DatasetProcess>;
}

/**
 * Several datasets opened as one job, equal to the job their dumps give loaded together: processes in key order
 * (a key that repeats across datasets, as the same path on two nodes does, is prefixed by its dataset's folder
 * name), hosts from the stored column and the folders of every dataset together, warnings in load order. A dataset
 * that cannot be read (another version, a missing or damaged file) is left out with a warning naming the file, and
 * the others are read; none readable throws the first one's DatasetError. With a stack chooser, a file found damaged
 * after the chooser ran (stacks, frames, mappings) fails the read, naming it.
 */
export async function readDatasets(dirs: readonly string[], options: ReadOptions = {}): Promise<DatasetsJob> {
  const left: LoadWarning[] = [];
  let firstError: DatasetError | null = null;
  const leaveOut = (dir: string, e: unknown): void => {
    if (!(e instanceof DatasetError)) throw e;
    firstError ??= e;
    left.push({
      file: e.file,
      message: `${e.message.slice(e.file.length + 2)}; the dataset ${dir} is left out: this job lacks its processes`,
    });
  };
  const ok: { dir: string; manifest: Manifest }[] = [];
  for (const dir of dirs) {
    try {
      const manifest = await readManifest(dir);
      await checkTree(dir);
      ok.push({ dir, manifest });
    } catch (e) {
      leaveOut(dir, e);
    }
  }
  if (ok.length === 0) throw firstError ?? new Error('no dataset given');
  const engine = await openEngine(ok.map((d) => d.dir));
  try {
    const only = options.onlyStacks ?? null;
    const chooser = typeof only === 'function' ? only : null;
    const parts: DatasetPart[] = [];
    for (const { dir, manifest } of ok) {
      try {
        const part = await readPart(engine, dir, manifest, options.cells ?? true, options.evidence ?? true);
        // read whole here unless a chooser names the stacks later: a damaged file then leaves out its dataset alone
        if (!chooser) for (const sh of part.shells) await readPartStacks(engine, part, sh, only ? [] : null);
        parts.push(part);
      } catch (e) {
        leaveOut(dir, e);
      }
    }
    if (parts.length === 0) throw firstError ?? new Error('no dataset given');
    setHosts(parts);
    const shells = mergeKeys(parts);
    const processes = shells.map((s) => s.series);
    const warnings = [...left, ...jobWarnings(parts, shells)];
    const { evidence, ignoredFiles } = await applyKeptEvidence(parts, processes, warnings);
    const withEvidence = evidence ? { evidence } : {};
    const sources = new Map(shells.map((s) => [s.series, { dir: s.part.dir, id: s.id }]));
    if (chooser) {
      const chosen = await chooser(
        { processes: [...processes], warnings: [...warnings], ignoredFiles, ...withEvidence },
        sources,
      );
      for (const sh of shells) await readPartStacks(engine, sh.part, sh, chosen.get(sh.series) ?? []);
    }
    return {
      job: { processes, warnings, ignoredFiles, ...withEvidence },
      dirs: parts.map((p) => p.dir),
      sources,
    };
  } finally {
    engine.close();
  }
}

interface Shell {
  pr: Row;
  id: number;
  series: ProcessSeries;
  host: StoredHost | null;
  /** the key as stored (the series' key may be prefixed when keys repeat across datasets) */
  storedKey: string;
}

/** One dataset's processes with their snapshots (phase one of a read; stacks come with readPartStacks). */
interface DatasetPart {
  dir: string;
  manifest: Manifest;
  /** in key order */
  shells: Shell[];
  files: FileRecord[];
  warningsOf: Map<number | null, LoadWarning[]>;
  orphanWarnings: Map<string, LoadWarning[]>;
  cellCounts: Map<ProcessSeries, number[]>;
  /** the kept evidence files, as the files they were copied from (none when not asked for) */
  evidence: InputFile[];
}

const HOST_FROM = new Set(['context', 'folder', 'option']);

async function readPart(
  engine: Engine,
  dir: string,
  manifest: Manifest,
  withCells: boolean | CellPicker,
  withEvidence: boolean,
): Promise<DatasetPart> {
  const pfile = join(dir, 'processes.parquet');
  const procRows = await readParquetRows(engine, pfile);
  const fileRows = await readParquetRows(engine, join(dir, 'files.parquet'));
  const warnRows = await readParquetRows(
    engine,
    join(dir, 'warnings.parquet'),
    '*',
    'ORDER BY process NULLS FIRST, group_key NULLS FIRST, ordinal',
  );
  const files: FileRecord[] = fileRows.map((r) => ({
    path: str(r.path),
    size: num(r.size),
    mtimeMs: numOrNull(r.mtime_ms),
    status: str(r.status) as FileRecord['status'],
    process: numOrNull(r.process),
  }));
  const warningsOf = new Map<number | null, LoadWarning[]>();
  const orphanWarnings = new Map<string, LoadWarning[]>();
  for (const r of warnRows) {
    // the loader's key order (file, line, byteOffset, message), so JSON output is the dumps' byte for byte
    const w: LoadWarning = {
      file: str(r.file),
      ...(r.line !== null ? { line: num(r.line) } : {}),
      ...(r.byte_offset !== null ? { byteOffset: num(r.byte_offset) } : {}),
      message: str(r.message),
    };
    if (r.group_key !== null) {
      const g = orphanWarnings.get(str(r.group_key)) ?? [];
      g.push(w);
      orphanWarnings.set(str(r.group_key), g);
      continue;
    }
    const k = numOrNull(r.process);
    const list = warningsOf.get(k) ?? [];
    list.push(w);
    warningsOf.set(k, list);
  }
  const sorted = [...procRows].sort((a, b) => byText(str(a.key), str(b.key)));
  const shells: Shell[] = [];
  const cellCounts = new Map<ProcessSeries, number[]>();
  for (const pr of sorted) {
    const id = checkProcessId(pr.process, pfile);
    const { series, counts, warnings: totals } = await readSnapshots(engine, dir, id, pr, withCells);
    if (totals.length > 0) warningsOf.set(id, [...(warningsOf.get(id) ?? []), ...totals]);
    const name = textOrNullValue(pfile, 'host', pr.host);
    const from = textOrNullValue(pfile, 'host_from', pr.host_from);
    if (name !== null && !(from !== null && HOST_FROM.has(from)))
      throw new DatasetError(
        pfile,
        `column host_from of process ${id} is ${JSON.stringify(from)}, not context, folder or option`,
      );
    const host = name === null ? null : { name, from: from as StoredHost['from'] };
    shells.push({ pr, id, series, host, storedKey: series.key });
    cellCounts.set(series, counts);
  }
  const evidence = withEvidence ? await evidenceFiles(dir, manifest.evidence ?? []) : [];
  return { dir, manifest, shells, files, warningsOf, orphanWarnings, cellCounts, evidence };
}

/**
 * The datasets' kept evidence (each dataset's in the order ingest was given it, datasets in the order given, as the
 * dumps' loader meets the files) applied to the job as loadJob applies it (core/load/evidence-load.ts: the same
 * readers, roles, kills and log times, warnings after every process's); the ignored files are then those no reader
 * took, as loadJob gives them.
 */
async function applyKeptEvidence(
  parts: readonly DatasetPart[],
  processes: ProcessSeries[],
  warnings: LoadWarning[],
): Promise<{ evidence: JobEvidence | undefined; ignoredFiles: string[] }> {
  const files = parts.flatMap((p) => p.evidence);
  const ignored = ignoredOf(parts);
  if (files.length === 0) return { evidence: undefined, ignoredFiles: ignored };
  const { evidence, unread } = await applyEvidence(processes, files, warnings);
  const read = new Set(files.map((f) => f.path));
  for (const path of unread) read.delete(path);
  return { evidence, ignoredFiles: ignored.filter((path) => !read.has(path)) };
}

/**
 * Each process's folder host (ProcessSeries.host): the top folder the loader finds in the dumps' folders
 * (core/model/process-host.ts topFolders), over every dataset's keys together (a dataset keeps each process's key,
 * whose folder is its dumps'), else the folder host or `--host` stored at ingest (a node's dataset alone tells no
 * folders apart). The context's hostname is read from the snapshots, as on the dumps.
 */
function setHosts(parts: readonly DatasetPart[]): void {
  const shells = parts.flatMap((p) => p.shells);
  const tops = topFolders(shells.map((s) => s.storedKey.slice(0, Math.max(0, s.storedKey.lastIndexOf('/')))));
  shells.forEach((s, i) => {
    const h = tops[i] ?? (s.host && s.host.from !== 'context' ? s.host.name : null);
    if (h !== null) s.series.host = h;
  });
}

/**
 * Every dataset's processes in key order, as loadJob orders them. Keys unique in each dataset may repeat across
 * datasets (each node ingested the same path): then every key, dump path and kept evidence path is prefixed by its
 * dataset's folder name, so the processes stay apart, each says where it came from, and each node's logs speak for
 * its own processes (logScopes: the dataset's folder is then the top folder, as a node's folder is for the dumps).
 */
function mergeKeys(parts: readonly DatasetPart[]): (Shell & { part: DatasetPart })[] {
  const all = parts.flatMap((part) => part.shells.map((s) => ({ ...s, part })));
  const keys = new Set<string>();
  const repeats = all.some((s) => keys.size === keys.add(s.storedKey).size);
  if (repeats) {
    const labels = datasetLabels(parts.map((p) => p.dir));
    for (const s of all) {
      const label = labels.get(s.part.dir)!;
      s.series.key = `${label}/${s.storedKey}`;
      for (const snap of s.series.snapshots) snap.file = `${label}/${snap.file}`;
    }
    for (const [i, part] of parts.entries()) {
      const label = labels.get(parts[i].dir)!;
      part.orphanWarnings = new Map([...part.orphanWarnings].map(([k, w]) => [`${label}/${k}`, w]));
      part.evidence = part.evidence.map((f) => ({ ...f, path: `${label}/${f.path}` }));
      part.files = part.files.map((f) => ({ ...f, path: `${label}/${f.path}` }));
    }
  }
  return all.sort((a, b) => byText(a.series.key, b.series.key));
}

/** Each dataset folder's name (`node17.dataset`), or its whole path where two names are the same. */
function datasetLabels(dirs: readonly string[]): Map<string, string> {
  const names = dirs.map((d) => basename(resolve(d)));
  return new Map(dirs.map((d, i) => [d, names.filter((n) => n === names[i]).length > 1 ? resolve(d) : names[i]]));
}

/**
 * The job's warnings in loadJob's order: the shared side files' first, then each process's in key order, with the
 * warnings of dump groups that gave no process in their key's place.
 */
function jobWarnings(
  parts: readonly DatasetPart[],
  shells: readonly (Shell & { part?: DatasetPart })[],
): LoadWarning[] {
  const seen = new Set<string>();
  const out: LoadWarning[] = [];
  for (const part of parts)
    for (const w of part.warningsOf.get(null) ?? []) {
      // the same side file named by two datasets (a shared maps file) is said once
      const k = `${w.file}\0${w.line ?? ''}\0${w.byteOffset ?? ''}\0${w.message}`;
      if (seen.has(k)) continue;
      seen.add(k);
      out.push(w);
    }
  const orphans = parts.flatMap((p) => [...p.orphanWarnings]).sort((a, b) => byText(a[0], b[0]));
  let oi = 0;
  const orphansBefore = (key: string | null) => {
    while (oi < orphans.length && (key === null || orphans[oi][0] < key)) out.push(...orphans[oi++][1]);
  };
  for (const sh of shells) {
    orphansBefore(sh.series.key);
    const part = sh.part ?? parts[0];
    out.push(...(part.warningsOf.get(sh.id) ?? []));
  }
  orphansBefore(null);
  return out;
}

function ignoredOf(parts: readonly DatasetPart[]): string[] {
  return parts.flatMap((p) => p.files.filter((f) => f.status === 'ignored').map((f) => f.path));
}

/** Phase two of a read: a process's stacks (of `only`, when given: their frames), addresses, maps and symbols. */
async function readPartStacks(
  engine: Engine,
  part: DatasetPart,
  sh: Shell,
  only: readonly number[] | null,
): Promise<void> {
  const { addressIds } = await readStacks(engine, part.dir, sh.id, sh.pr, sh.series, only);
  if (sh.pr.symbolized)
    sh.series.symbols = await readSymbols(
      engine,
      part.dir,
      sh.id,
      sh.series,
      strOrNull(sh.pr.symbol_modules_json),
      addressIds,
    );
}

function partFile(dir: string, table: string, id: number): string {
  return join(partitionDir(dir, table, id), 'data.parquet');
}

/** SQL list of ids (numbers only). */
const idList = (ids: readonly number[]) =>
  `(${ids.length ? ids.map((x) => String(Math.trunc(x))).join(', ') : 'NULL'})`;

/** A process's series with its snapshots (and their cells, as asked); its stacks are read by readStacks. */
async function readSnapshots(
  engine: Engine,
  dir: string,
  id: number,
  pr: Row,
  withCells: boolean | CellPicker,
): Promise<{ series: ProcessSeries; counts: number[]; warnings: LoadWarning[] }> {
  const sfile = partFile(dir, 'snapshots', id);
  const snapRows = await readParquetRows(engine, sfile, '*', 'ORDER BY snapshot');
  // every figure bounded as the dump readers bound theirs, every failure naming the file and column
  // a pprof profile's figures are signed (a delta profile's, as pprof keeps them); every other format's are sizes
  const size = (r: Row, c: string): number =>
    r.format === 'pprof' ? signedValue(sfile, c, r[c]) : sizeValue(sfile, c, r[c]);
  const contextWarnings: LoadWarning[] = [];
  // context_json checked as a report's contexts are (every field within the `C`-line reader's bounds): a damaged
  // one, such as a time that is not a number or beyond Date's range, leaves the snapshot without its context
  // (its time then comes from the dump file) and says so, naming the dataset file (issue 46 N15)
  const contextOf = (r: Row): Snapshot['context'] => {
    const raw = jsonValue<unknown>(sfile, 'context_json', r.context_json, isObjectOrNull, fromTaggedJson);
    try {
      return checkDumpContext(raw, 'context');
    } catch (e) {
      if (!(e instanceof ShapeError)) throw e;
      contextWarnings.push({
        file: sfile,
        message: `column context_json of snapshot ${String(r.snapshot)} (${String(r.file)}): ${e.message}; read without its context (no time, RSS or cgroup figures from it)`,
      });
      return null;
    }
  };
  const snapshots: Snapshot[] = snapRows.map((r) => ({
    file: textValue(sfile, 'file', r.file),
    seq: wholeOrNull(sfile, 'seq', r.seq),
    trigger: textValue(sfile, 'trigger', r.trigger) as Trigger,
    triggerSeq: wholeOrNull(sfile, 'trigger_seq', r.trigger_seq),
    mtimeMs: sizeOrNull(sfile, 'mtime_ms', r.mtime_ms),
    format: textValue(sfile, 'format', r.format) as DumpFormat,
    samplePeriod: periodValue(sfile, r.sample_period),
    live: { objects: size(r, 'live_objects'), bytes: size(r, 'live_bytes') },
    accumulated: { objects: size(r, 'accum_objects'), bytes: size(r, 'accum_bytes') },
    header: {
      live: { objects: size(r, 'header_live_objects'), bytes: size(r, 'header_live_bytes') },
      accumulated: { objects: size(r, 'header_accum_objects'), bytes: size(r, 'header_accum_bytes') },
    },
    hasAccumulated: r.has_accumulated === true,
    complete: r.complete === true,
    headerLiveBytes: sizeOrNull(sfile, 'header_live_bytes_unbiased', r.header_live_bytes_unbiased),
    threads: jsonValue<ThreadTotals[]>(sfile, 'threads_json', r.threads_json, isThreadList),
    truncated:
      r.truncated_byte_offset === null
        ? null
        : {
            byteOffset: wholeValue(sfile, 'truncated_byte_offset', r.truncated_byte_offset),
            line: wholeValue(sfile, 'truncated_line', r.truncated_line),
          },
    stackIds: new Uint32Array(0),
    liveBytes: new Float64Array(0),
    liveObjects: new Float64Array(0),
    liveVarBytes: new Float64Array(0),
    accumBytes: r.has_accum_cells ? new Float64Array(0) : null,
    accumObjects: r.has_accum_cells ? new Float64Array(0) : null,
    mapsSource: strOrNull(r.maps_source) as Snapshot['mapsSource'],
    ...(r.context_json === null ? {} : { context: contextOf(r) }),
  }));
  if (snapshots.length !== num(pr.snapshot_count))
    throw new DatasetError(
      partFile(dir, 'snapshots', id),
      `has ${snapshots.length} snapshots; processes.parquet says ${num(pr.snapshot_count)}`,
    );
  const counts = snapRows.map((r) => wholeValue(sfile, 'cell_count', r.cell_count));
  const stackCount = wholeValue(join(dir, 'processes.parquet'), 'stack_count', pr.stack_count);
  let warnings: LoadWarning[] = [];
  if (withCells === false)
    await checkCellFiles(
      engine,
      dir,
      id,
      counts.reduce((a, b) => a + b, 0),
    );
  else if (withCells === true) warnings = await readCells(engine, dir, id, snapshots, counts, null, stackCount);
  else {
    await checkCellFiles(
      engine,
      dir,
      id,
      counts.reduce((a, b) => a + b, 0),
    );
    warnings = await readCells(
      engine,
      dir,
      id,
      snapshots,
      counts,
      new Set(
        withCells({ snapshots, pythonFrames: pr.python_frames_json }).filter((j) => j >= 0 && j < snapshots.length),
      ),
      stackCount,
    );
  }

  const series: ProcessSeries = {
    key: str(pr.key),
    pid: numOrNull(pr.pid),
    pidNamespace: numOrNull(pr.pid_namespace),
    prefix: str(pr.prefix),
    snapshots,
    stacks: { count: 0, offsets: [0], frames: new Uint32Array(0), allocatorDepth: [] },
    addresses: { hex: [], index: new Map() },
    maps: null,
    symbols: null,
    endedWithoutFinalDump: pr.ended_without_final_dump === true,
  };
  if (pr.python_frames_json !== null)
    series.pythonFrames = jsonValue<PyFrameTable>(
      join(dir, 'processes.parquet'),
      'python_frames_json',
      pr.python_frames_json,
      isObjectOrNull,
      fromTaggedJson,
    );
  return { series, counts, warnings: [...contextWarnings, ...warnings] };
}

/** Fills in the stacks, addresses and maps of a series read by readSnapshots (of `only` stacks: their frames). */
async function readStacks(
  engine: Engine,
  dir: string,
  id: number,
  pr: Row,
  series: ProcessSeries,
  only: readonly number[] | null,
): Promise<{ addressIds: number[] | null }> {
  // stacks, flattened in stack order (the file is written in stack order; a file that is not is refused)
  const stackCount = num(pr.stack_count);
  const stacksFile = partFile(dir, 'stacks', id);
  const sid: number[] = [];
  const depth: number[] = [];
  const lens: number[] = [];
  await visitNumbers(engine, stacksFile, 'stack_id, allocator_depth, CAST(len(frames) AS INTEGER)', '', (c, rows) => {
    for (let r = 0; r < rows; r++) {
      sid.push(c[0][r]);
      depth.push(c[1][r]);
      lens.push(c[2][r]);
    }
  });
  if (sid.length !== stackCount)
    throw new DatasetError(stacksFile, `has ${sid.length} stacks; processes.parquet says ${stackCount}`);
  const wanted = only ? new Set(only) : null;
  const offsets = new Array<number>(stackCount + 1);
  offsets[0] = 0;
  const allocatorDepth = new Array<number>(stackCount);
  for (let i = 0; i < stackCount; i++) {
    if (sid[i] !== i)
      throw new DatasetError(stacksFile, `stack ${sid[i]} is at row ${i} (the file is not in stack order)`);
    offsets[i + 1] = offsets[i] + (wanted && !wanted.has(i) ? 0 : lens[i]);
    allocatorDepth[i] = depth[i];
  }
  const frames: number[] = [];
  await visitNumbers(
    engine,
    stacksFile,
    wanted ? 'a' : 'unnest(frames)',
    wanted ? `, unnest(frames) WITH ORDINALITY AS u(a, k) WHERE stack_id IN ${idList(only!)} ORDER BY stack_id, k` : '',
    (c, rows) => {
      for (let r = 0; r < rows; r++) frames.push(c[0][r]);
    },
  );
  if (frames.length !== offsets[stackCount])
    throw new DatasetError(stacksFile, `holds ${frames.length} frames; its stacks' lengths say ${offsets[stackCount]}`);

  const framesFile = partFile(dir, 'frames', id);
  const addressCount = num(pr.address_count);
  let hex: string[];
  let addressIds: number[] | null = null;
  if (wanted) {
    // only the addresses of the wanted stacks; the others stay empty strings (never looked up)
    addressIds = [...new Set(frames)].sort((a, b) => a - b);
    const [aid, addr] = await readColumns(
      engine,
      framesFile,
      'DISTINCT address_id, address',
      `WHERE address_id IN ${idList(addressIds)} ORDER BY address_id`,
    );
    hex = new Array<string>(addressCount).fill('');
    aid.forEach((a, i) => {
      const k = num(a);
      if (!(Number.isInteger(k) && k >= 0 && k < addressCount))
        throw new DatasetError(framesFile, `holds address_id ${k}; processes.parquet says ${addressCount} addresses`);
      hex[k] = str(addr[i]);
    });
  } else {
    const [aid, addr] = await readColumns(engine, framesFile, 'DISTINCT address_id, address', 'ORDER BY address_id');
    hex = addr.map(str);
    if (hex.length !== addressCount || aid.some((a, i) => num(a) !== i))
      throw new DatasetError(framesFile, `has ${hex.length} addresses; processes.parquet says ${addressCount}`);
  }

  // a frame is an address id: one past the addresses (or NULL, read as NaN) is the stacks file's error
  const outside = frames.findIndex((f) => !(f >= 0 && f < hex.length) || !Number.isInteger(f));
  if (outside >= 0)
    throw new DatasetError(
      stacksFile,
      `frame ${outside} is address_id ${frames[outside]}, not one of the ${hex.length} addresses`,
    );
  // every frame view parses these with BigInt (core/frames/frame-labels.ts): a damaged one is the file's error here
  const bad = hex.findIndex((h) => typeof h !== 'string' || (h !== '' && !ADDRESS.test(h)));
  if (bad >= 0)
    throw new DatasetError(
      framesFile,
      `address of address_id ${bad} is not an address: ${JSON.stringify(String(hex[bad]).slice(0, 40))}`,
    );

  const mapRows = await readParquetRows(engine, partFile(dir, 'mappings', id), '*', 'ORDER BY ordinal');
  const maps: MapsEntry[] | null = pr.has_maps
    ? mapRows.map((r) => ({
        start: r.map_start as bigint,
        end: r.map_end as bigint,
        perms: str(r.perms),
        offset: r.file_offset as bigint,
        dev: str(r.dev),
        inode: num(r.inode),
        path: str(r.path),
        deleted: r.deleted === true,
      }))
    : null;

  series.stacks = { count: stackCount, offsets, frames: Uint32Array.from(frames), allocatorDepth };
  series.addresses = { hex, index: new Map(hex.flatMap((h, i) => (h === '' ? [] : [[h, i] as const]))) };
  series.maps = maps;
  return { addressIds };
}

/** Reads the cells of every snapshot, or of those in `pick` (the others keep empty columns). */
async function readCells(
  engine: Engine,
  dir: string,
  id: number,
  snapshots: Snapshot[],
  counts: number[],
  pick: ReadonlySet<number> | null,
  stackCount: number,
): Promise<LoadWarning[]> {
  const cdir = partitionDir(dir, 'cells', id);
  const total = counts.reduce((a, b, j) => a + (pick && !pick.has(j) ? 0 : b), 0);
  let names: string[] = [];
  try {
    names = (await readdir(cdir)).filter((n) => n.endsWith('.parquet')).sort();
  } catch {
    if (total > 0) throw new DatasetError(cdir, 'missing from the dataset (was it copied in full?)');
  }
  for (let j = 0; j < snapshots.length; j++) {
    if (pick && !pick.has(j)) continue;
    const s = snapshots[j];
    s.stackIds = new Uint32Array(counts[j]);
    s.liveBytes = new Float64Array(counts[j]);
    s.liveObjects = new Float64Array(counts[j]);
    s.liveVarBytes = new Float64Array(counts[j]);
    if (s.accumBytes) {
      s.accumBytes = new Float64Array(counts[j]);
      s.accumObjects = new Float64Array(counts[j]);
    }
  }
  let seen = 0;
  for (const name of names) {
    const file = join(cdir, name);
    // A snapshot's cells are all in the file of the run that added it, in the order the dump listed them.
    const where = pick ? `WHERE snapshot IN ${idList([...pick])} ` : '';
    let j = -1;
    let i = 0;
    await visitNumbers(
      engine,
      file,
      'snapshot, stack_id, bytes, objects, coalesce(accum_bytes, 0), coalesce(accum_objects, 0), var_bytes',
      `${where}ORDER BY snapshot, file_row_number`,
      ([snap, stack, bytes, objects, ab, ao, vb], rows) => {
        for (let r = 0; r < rows; r++) {
          const sj = snap[r];
          if (sj !== j) {
            j = sj;
            i = 0;
            if (j >= snapshots.length)
              throw new DatasetError(file, `names snapshot ${j}; the process has ${snapshots.length}`);
          }
          const s = snapshots[j];
          if (i >= s.stackIds.length)
            throw new DatasetError(
              file,
              `holds more cells for snapshot ${j} than its snapshots row says (${s.stackIds.length})`,
            );
          // the dump readers' bounds (limits.ts): a stack of the table, finite sizes from 0 to 2^53 (a pprof
          // profile's figures from -2^53: a delta profile's are negative where its window freed; variances never)
          if (!(stack[r] >= 0 && stack[r] < stackCount && Number.isInteger(stack[r])))
            throw new DatasetError(file, `column stack_id holds ${stack[r]}; the process has ${stackCount} stacks`);
          const lo = s.format === 'pprof' ? -MAX_COUNT : 0;
          if (!(vb[r] >= 0 && vb[r] <= MAX_COUNT))
            throw new DatasetError(
              file,
              `column var_bytes holds ${vb[r]} in snapshot ${j}, not a variance (0 to 2^53)`,
            );
          for (const [c, v] of [
            ['bytes', bytes[r]],
            ['objects', objects[r]],
            ['accum_bytes', ab[r]],
            ['accum_objects', ao[r]],
          ] as const)
            if (!(v >= lo && v <= MAX_COUNT))
              throw new DatasetError(
                file,
                `column ${c} holds ${v} in snapshot ${j}, not a ${lo < 0 ? 'figure (-2^53 to 2^53)' : 'size (0 to 2^53)'}`,
              );
          s.stackIds[i] = stack[r];
          s.liveBytes[i] = bytes[r];
          s.liveObjects[i] = objects[r];
          s.liveVarBytes[i] = vb[r];
          if (s.accumBytes && s.accumObjects) {
            s.accumBytes[i] = ab[r];
            s.accumObjects[i] = ao[r];
          }
          i++;
        }
        seen += rows;
      },
    );
  }
  if (seen !== total)
    throw new DatasetError(cdir, `holds ${seen} cells; the snapshots say ${total} (a cells file is missing or extra)`);
  return checkTotals(partFile(dir, 'snapshots', id), snapshots, pick);
}

/**
 * Each read snapshot's totals against the sum of its cells (issue 24 item 6). They agree in a dataset ingest wrote
 * (both are the same records' sums); a total that does not is a damaged number, and the cells win: they are what
 * every view ranks and draws, each was bounded when read, and dropping the snapshot would lose a whole series
 * point over one figure. A warning names the file and row.
 */
function checkTotals(file: string, snapshots: Snapshot[], pick: ReadonlySet<number> | null): LoadWarning[] {
  const out: LoadWarning[] = [];
  // the same records summed in another order (repeated stacks folded) differ by rounding only
  const same = (a: number, b: number): boolean => Math.abs(a - b) <= 1 + 1e-9 * Math.max(a, b);
  snapshots.forEach((s, j) => {
    if (pick && !pick.has(j)) return;
    const sum = (c: Float64Array | null): number => (c ? c.reduce((a, v) => a + v, 0) : 0);
    const fix: [string, Counts, number, number][] = [['live', s.live, sum(s.liveBytes), sum(s.liveObjects)]];
    if (s.accumBytes) fix.push(['accum', s.accumulated, sum(s.accumBytes), sum(s.accumObjects)]);
    for (const [what, c, bytes, objects] of fix)
      if (!same(c.bytes, bytes) || !same(c.objects, objects)) {
        out.push({
          file,
          line: j + 1,
          message: `row ${j + 1} (${s.file}): ${what}_bytes ${c.bytes} and ${what}_objects ${c.objects} are not the sum of its cells (${bytes} bytes in ${objects} objects); the cells' sums are used`,
        });
        c.bytes = bytes;
        c.objects = objects;
      }
  });
  return out;
}

/** The cells of one snapshot (stack ids and live bytes), e.g. the last one before an append. */
export async function readSnapshotCells(
  dir: string,
  id: number,
  snapshot: number,
): Promise<{ stackIds: number[]; liveBytes: number[] }> {
  const engine = await openEngine([dir]);
  try {
    const cdir = partitionDir(dir, 'cells', id);
    const out = { stackIds: [] as number[], liveBytes: [] as number[] };
    for (const name of (await readdir(cdir)).filter((n) => n.endsWith('.parquet')).sort()) {
      const [ids, bytes] = await readColumns(
        engine,
        join(cdir, name),
        'stack_id, bytes',
        `WHERE snapshot = ${snapshot} ORDER BY file_row_number`,
      );
      out.stackIds.push(...ids.map(num));
      out.liveBytes.push(...bytes.map(num));
    }
    return out;
  } finally {
    engine.close();
  }
}

/** Without reading the cells: their files' footers must be readable and count the cells the snapshots say. */
async function checkCellFiles(engine: Engine, dir: string, id: number, total: number): Promise<void> {
  const cdir = partitionDir(dir, 'cells', id);
  let names: string[] = [];
  try {
    names = (await readdir(cdir)).filter((n) => n.endsWith('.parquet')).sort();
  } catch {
    if (total > 0) throw new DatasetError(cdir, 'missing from the dataset (was it copied in full?)');
  }
  let seen = 0;
  for (const name of names) {
    const file = join(cdir, name);
    try {
      const r = await engine.con.runAndReadAll(`SELECT num_rows FROM parquet_file_metadata(${parquetPathSql(file)})`);
      seen += num(r.getColumns()[0][0]);
    } catch (e) {
      throw unreadableParquet(file, e);
    }
  }
  if (seen !== total)
    throw new DatasetError(cdir, `holds ${seen} cells; the snapshots say ${total} (a cells file is missing or extra)`);
}

/**
 * Numeric columns of one Parquet file, a chunk at a time as typed arrays (duckdb.ts chunkNumbers: no call per
 * value); a failure names the file, as readColumns does.
 */
async function visitNumbers(
  engine: Engine,
  file: string,
  select: string,
  tail: string,
  visit: (columns: ArrayLike<number>[], rows: number) => void,
): Promise<void> {
  return onParquetFile(file, () =>
    forEachChunk(
      engine.con,
      `SELECT ${select} FROM read_parquet(${parquetPathSql(file)}, file_row_number = true) ${tail}`,
      (chunk) => {
        const cols: ArrayLike<number>[] = [];
        for (let c = 0; c < chunk.columnCount; c++) cols.push(chunkNumbers(chunk, c));
        visit(cols, chunk.rowCount);
      },
    ),
  );
}

async function readColumns(engine: Engine, file: string, select: string, tail: string): Promise<DuckDBValue[][]> {
  return onParquetFile(file, async () => {
    const r = await engine.con.runAndReadAll(
      `SELECT ${select} FROM read_parquet(${parquetPathSql(file)}, file_row_number = true) ${tail}`,
    );
    // no rows gives no columns: one empty array per selected column
    const cols = r.getColumns();
    return cols.length === r.columnCount ? cols : Array.from({ length: r.columnCount }, () => []);
  });
}

async function readSymbols(
  engine: Engine,
  dir: string,
  id: number,
  series: ProcessSeries,
  modulesJson: string | null,
  addressIds: number[] | null,
): Promise<SymbolTable> {
  const only = addressIds ? ` AND address_id IN ${idList(addressIds)}` : '';
  const [ids, roles, json] = await readColumns(
    engine,
    partFile(dir, 'frames', id),
    'address_id, role, symbol_json',
    `WHERE role <> ''${only}`,
  );
  const n = series.addresses.hex.length;
  const table: SymbolTable = {
    leaf: new Array<SymbolizedAddress | undefined>(n),
    caller: new Array<SymbolizedAddress | undefined>(n),
    modules: modulesJson
      ? jsonValue<ModuleReport[]>(join(dir, 'processes.parquet'), 'modules_json', modulesJson, Array.isArray)
      : [],
  };
  const ffile = partFile(dir, 'frames', id);
  for (let i = 0; i < ids.length; i++) {
    const a = wholeValue(ffile, 'address_id', ids[i]);
    if (a >= n) throw new DatasetError(ffile, `column address_id holds ${a}; the process has ${n} addresses`);
    (roles[i] === 'leaf' ? table.leaf : table.caller)[a] = jsonValue<SymbolizedAddress>(
      ffile,
      'symbol_json',
      json[i],
      isObject,
    );
  }
  return table;
}
