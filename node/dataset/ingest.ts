// `heaplens ingest`: dumps → the dataset, process by process (each process is loaded, written and dropped, so
// memory holds one process at a time). Incremental: a dump already in the dataset (same path, size and mtime)
// is not read again; a process whose new dumps all come after its ingested ones gets only those appended. The
// evidence files given (logs, cgroup files: evidence-copies.ts) are kept, a path given again replacing its copy.

import { mkdir, readdir, stat } from 'node:fs/promises';
import { classifyFiles, groupProcesses, loadJob } from '../../core/load/load-job.js';
import type { Job, LoadWarning, ProcessSeries, StackTable } from '../../core/model/model.js';
import { seriesPythonFrames } from '../../core/frames/python-stacks.js';
import { mergePyFrameTables } from '../../core/formats/pyframes.js';
import type { InputFile } from '../../core/formats/input-file.js';
import { openEngine } from './duckdb.js';
import { isDataset, readDataset, readSnapshotCells, type DatasetJob } from './read-dataset.js';
import { copyEvidence, mergeEvidence } from './evidence-copies.js';
import { removeProcess, writeJobTables, writeProcess, type FileRecord, type ProcessRecord } from './write-dataset.js';

export interface IngestOptions {
  /** writes the symbol tables of a freshly loaded job's processes (ProcessSeries.symbols; the CLI symbolizes as `top` does) */
  symbolize?: (job: Job) => Promise<void>;
  onProcess?: (p: { key: string; mode: IngestMode; dumps: number }) => void;
  /** how a process's dumps are loaded (the CLI: over its pool of parsing workers); loadJob in this thread by default */
  load?: (files: readonly InputFile[]) => Promise<Job>;
  /**
   * the host of processes whose dumps name none (no capture context hostname) and whose folders tell none: the
   * node an ingest runs on (`--host "$(hostname)"` in a cluster job), so datasets of several nodes opened together
   * keep their processes apart
   */
  host?: string;
}

/** full: the process was (re)written; append: its new dumps were added; unchanged: nothing new */
export type IngestMode = 'full' | 'append' | 'unchanged';

export interface IngestResult {
  dumpsRead: number;
  dumpsSkipped: number;
  processes: Record<IngestMode, number>;
  /** warnings of the files read in this run */
  warnings: LoadWarning[];
}

export class IngestError extends Error {}

function sameFile(a: { size: number; mtimeMs: number | null }, b: { size: number; mtimeMs: number | null }): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs;
}

export async function ingest(
  files: readonly InputFile[],
  outDir: string,
  options: IngestOptions = {},
): Promise<IngestResult> {
  let existing: DatasetJob | null = null;
  // a dataset of another version is refused naming its manifest (ingest the dumps again into a new folder)
  if (await isDataset(outDir)) existing = await readDataset(outDir, { cells: false, evidence: false });
  else if (await nonEmptyFolder(outDir))
    throw new IngestError(`${outDir}: exists and is not a heaplens dataset; refusing to write into it`);
  await mkdir(outDir, { recursive: true });

  const classified = await classifyFiles(files);
  const sideFiles = classified.side.map((s) => s.file);
  const mapsFiles = new Set(classified.side.filter((s) => s.side.kind === 'maps').map((s) => s.file.path));
  const pycodePids = new Set(classified.side.filter((s) => s.side.kind === 'pycode-map').map((s) => s.side.pid));
  const known = new Map((existing?.files ?? []).map((f) => [f.path, f] as const));
  const oldByKey = new Map((existing?.job.processes ?? []).map((p) => [p.key, p] as const));
  let nextId = Math.max(-1, ...(existing ? [...existing.ids.values()] : [])) + 1;
  const runs = (existing?.manifest.runs ?? 0) + 1;
  const runName = `run-${String(runs).padStart(4, '0')}`;

  const result: IngestResult = {
    dumpsRead: 0,
    dumpsSkipped: 0,
    processes: { full: 0, append: 0, unchanged: 0 },
    warnings: [],
  };
  const records = new Map<string, ProcessRecord>();
  const fileRecords = new Map<string, FileRecord>((existing?.files ?? []).map((f) => [f.path, f] as const));
  const jobWarnings: LoadWarning[] = [...(existing?.jobWarnings ?? [])];
  const warningKey = (w: LoadWarning) => `${w.file}\0${w.line ?? ''}\0${w.byteOffset ?? ''}\0${w.message}`;
  const jobWarningKeys = new Set(jobWarnings.map(warningKey));
  // files recognized but not read (another tool's format, a text that explains itself): job warnings, first,
  // as loadJob gives them
  for (const w of classified.refused)
    if (!jobWarningKeys.has(warningKey(w))) {
      jobWarningKeys.add(warningKey(w));
      jobWarnings.push(w);
      result.warnings.push(w);
    }
  const orphanWarnings = new Map(existing?.orphanWarnings ?? []);

  // Processes already in the dataset keep their record unless this run changes them.
  if (existing) {
    for (const p of existing.job.processes) {
      records.set(p.key, {
        id: existing.ids.get(p)!,
        series: p,
        warnings: existing.processWarnings.get(p) ?? [],
        cellCounts: existing.cellCounts.get(p),
        host: existing.hosts.get(p) ?? null,
      });
    }
  }

  const engine = await openEngine([outDir]);
  try {
    for (const g of groupProcesses(classified.dumps)) {
      const isKnown = (d: { file: InputFile }) => {
        const k = known.get(d.file.path);
        return k !== undefined && k.status !== 'side' && k.status !== 'ignored' && sameFile(k, d.file);
      };
      const fresh = g.dumps.filter((d) => !isKnown(d));
      result.dumpsSkipped += g.dumps.length - fresh.length;
      const old = oldByKey.get(g.key) ?? null;
      if (fresh.length === 0) {
        result.processes.unchanged++;
        options.onProcess?.({ key: g.key, mode: 'unchanged', dumps: 0 });
        continue;
      }
      // Appending keeps stack ids as a full load would give them only when every new dump sorts after the old ones.
      const firstFresh = g.dumps.indexOf(fresh[0]);
      const canAppend =
        old !== null &&
        g.dumps.slice(firstFresh).every((d) => !isKnown(d)) &&
        !(g.pid !== null && pycodePids.has(g.pid));
      const mode: IngestMode = canAppend ? 'append' : 'full';
      const toLoad = canAppend ? fresh : g.dumps;
      result.dumpsRead += toLoad.length;
      const loaded = await (options.load ?? loadJob)([...toLoad.map((d) => d.file), ...sideFiles]);
      const procWarnings: LoadWarning[] = [];
      for (const w of loaded.warnings) {
        if (mapsFiles.has(w.file)) {
          if (!jobWarningKeys.has(warningKey(w))) {
            jobWarningKeys.add(warningKey(w));
            jobWarnings.push(w);
            result.warnings.push(w);
          }
        } else {
          procWarnings.push(w);
          result.warnings.push(w);
        }
      }
      const loadedSeries = loaded.processes[0] ?? null;
      // the top folder among every folder of this run (loaded alone, the group has no other to tell it from)
      if (loadedSeries && g.host !== null) loadedSeries.host = g.host;
      const prior = records.get(g.key);
      const given = options.host ? { name: options.host, from: 'option' as const } : null;
      const id = prior?.id ?? nextId++;
      let rec: ProcessRecord | null = null;
      let cellsFrom = 0;
      if (canAppend && old && loadedSeries && prior) {
        cellsFrom = old.snapshots.length;
        const merged = appendSeries(old, loadedSeries, procWarnings);
        const counts = [...(prior.cellCounts ?? []), ...loadedSeries.snapshots.map((s) => s.stackIds.length)];
        const host = g.host ?? old.host ?? null;
        if (host !== null) merged.host = host;
        rec = {
          id,
          series: merged,
          warnings: dedupe([...prior.warnings, ...procWarnings]),
          cellCounts: counts,
          host: given ?? prior.host ?? null,
        };
      } else if (loadedSeries) {
        rec = { id, series: loadedSeries, warnings: procWarnings, host: given ?? prior?.host ?? null };
      } else if (prior && canAppend) {
        // every new dump failed: the process keeps its snapshots and gains the warnings
        rec = { ...prior, warnings: dedupe([...prior.warnings, ...procWarnings]), host: given ?? prior.host ?? null };
        cellsFrom = prior.series.snapshots.length;
      } else {
        // no dump of this group could be read (it was loaded in full): its warnings stay, under its key
        orphanWarnings.set(g.key, procWarnings);
      }
      if (rec) orphanWarnings.delete(g.key);
      for (const d of toLoad) {
        const ok = rec?.series.snapshots.some((s) => s.file === d.file.path) ?? false;
        fileRecords.set(d.file.path, {
          path: d.file.path,
          size: d.file.size,
          mtimeMs: d.file.mtimeMs,
          status: ok ? 'dump' : 'failed',
          process: ok ? id : null,
        });
      }
      if (rec) {
        if (options.symbolize && rec.series.snapshots.length > 0) {
          await options.symbolize({ processes: [rec.series], warnings: [], ignoredFiles: [] });
        }
        if (cellsFrom === 0) await removeProcess(outDir, id);
        const before = cellsFrom > 0 ? await readSnapshotCells(outDir, id, cellsFrom - 1) : null;
        await writeProcess(engine, outDir, rec, cellsFrom, runName, before);
        // Only the counts stay in memory: the next process may be as large as this one.
        rec.cellCounts = rec.series.snapshots.map((s, i) => rec!.cellCounts?.[i] ?? s.stackIds.length);
        stripCells(rec.series);
        records.set(g.key, rec);
      }
      result.processes[mode]++;
      options.onProcess?.({ key: g.key, mode, dumps: toLoad.length });
    }
    for (const s of classified.side)
      fileRecords.set(s.file.path, {
        path: s.file.path,
        size: s.file.size,
        mtimeMs: s.file.mtimeMs,
        status: 'side',
        process: null,
      });
    for (const path of classified.ignored)
      if (!fileRecords.has(path))
        fileRecords.set(path, { path, size: 0, mtimeMs: null, status: 'ignored', process: null });
    const processes = [...records.values()].sort((a, b) => a.id - b.id);
    // the job's logs and memory files, kept so a reader of the dataset finds the fates the dumps' loader finds
    const evidence = mergeEvidence(existing?.manifest.evidence ?? [], await copyEvidence(outDir, classified.other));
    await writeJobTables(
      engine,
      outDir,
      { processes, files: [...fileRecords.values()], jobWarnings, orphanWarnings, evidence },
      runs,
    );
  } finally {
    engine.close();
  }
  return result;
}

async function nonEmptyFolder(path: string): Promise<boolean> {
  try {
    if (!(await stat(path)).isDirectory()) return true;
    return (await readdir(path)).length > 0;
  } catch {
    return false;
  }
}

function dedupe(ws: LoadWarning[]): LoadWarning[] {
  const seen = new Set<string>();
  return ws.filter((w) => {
    const k = `${w.file}\0${w.line ?? ''}\0${w.byteOffset ?? ''}\0${w.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

function stripCells(p: ProcessSeries): void {
  for (const s of p.snapshots) {
    s.stackIds = new Uint32Array(0);
    s.liveBytes = new Float64Array(0);
    s.liveObjects = new Float64Array(0);
    s.liveVarBytes = new Float64Array(0);
    if (s.accumBytes) s.accumBytes = new Float64Array(0);
    if (s.accumObjects) s.accumObjects = new Float64Array(0);
  }
}

/**
 * The series `old` (already in the dataset) followed by `next` (its later dumps, loaded alone): addresses and
 * stacks new in `next` are appended in the order `next` met them, which is the order a load of all the dumps
 * gives them, so stack ids agree with a full load.
 */
export function appendSeries(old: ProcessSeries, next: ProcessSeries, warnings: LoadWarning[]): ProcessSeries {
  const hex = [...old.addresses.hex];
  const index = new Map(old.addresses.index);
  const addrMap = next.addresses.hex.map((h) => {
    let id = index.get(h);
    if (id === undefined) {
      id = hex.length;
      hex.push(h);
      index.set(h, id);
    }
    return id;
  });
  const allFrames = Array.from(old.stacks.frames);
  const offsets = [...old.stacks.offsets];
  const allocatorDepth = [...old.stacks.allocatorDepth];
  let count = old.stacks.count;
  const stackKey = (frames: { join(separator: string): string }) => frames.join(',');
  const byKey = new Map<string, number>();
  for (let id = 0; id < old.stacks.count; id++)
    byKey.set(stackKey(old.stacks.frames.subarray(old.stacks.offsets[id], old.stacks.offsets[id + 1])), id);
  const stackMap = new Uint32Array(next.stacks.count);
  for (let id = 0; id < next.stacks.count; id++) {
    const frames = Array.from(
      next.stacks.frames.subarray(next.stacks.offsets[id], next.stacks.offsets[id + 1]),
      (a) => addrMap[a],
    );
    const k = stackKey(frames);
    let to = byKey.get(k);
    if (to === undefined) {
      to = count++;
      byKey.set(k, to);
      allFrames.push(...frames);
      offsets.push(allFrames.length);
      allocatorDepth.push(next.stacks.allocatorDepth[id]);
    }
    stackMap[id] = to;
  }
  const stacks: StackTable = { count, offsets, frames: Uint32Array.from(allFrames), allocatorDepth };
  const snapshots = [
    ...old.snapshots,
    ...next.snapshots.map((s) => ({ ...s, stackIds: s.stackIds.map((id) => stackMap[id]) })),
  ];
  const merged: ProcessSeries = {
    key: old.key,
    pid: old.pid,
    pidNamespace: old.pidNamespace,
    prefix: old.prefix,
    snapshots,
    stacks,
    addresses: { hex, index },
    // the newest dumps' maps, as a full load picks them (the last dump with maps wins)
    maps: next.maps ?? old.maps,
    endedWithoutFinalDump: next.endedWithoutFinalDump,
    // symbolized again with the new addresses (options.symbolize)
    symbols: null,
  };
  const tables = [old.pythonFrames, next.pythonFrames].filter((t) => t != null);
  if (tables.length === 2)
    merged.pythonFrames = seriesPythonFrames(
      mergePyFrameTables(tables),
      next.snapshots[next.snapshots.length - 1].file,
      warnings,
    );
  else if (tables.length === 1) merged.pythonFrames = tables[0];
  return merged;
}
