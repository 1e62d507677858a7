// A dataset folder (written by `heaplens ingest`) among opened files: the desktop app's Node engine opens it (every
// dataset folder opened, as one job: enginePaths), or without that engine its main process reads it (DuckDB is a
// native module); the web page cannot, and says what to use instead.

import type { SourceFile } from './protocol.ts';

/** node/dataset/schema.ts MANIFEST_FILE: the file that marks a dataset folder. */
const MANIFEST = '_heaplens.json';

/** The manifest among the opened files (the shallowest, when datasets are nested), or null. */
export function datasetManifest(files: readonly SourceFile[]): SourceFile | null {
  let best: SourceFile | null = null;
  for (const f of files) {
    if (f.path.split('/').pop() !== MANIFEST) continue;
    if (!best || f.path.split('/').length < best.path.split('/').length) best = f;
  }
  return best;
}

/** The dataset folder's absolute path on the host (Electron), from its manifest's. */
export function datasetDir(manifest: SourceFile): string | null {
  const p = manifest.hostPath;
  if (!p) return null;
  const cut = Math.max(p.lastIndexOf('/'), p.lastIndexOf('\\'));
  return cut > 0 ? p.slice(0, cut) : null;
}

const inside = (p: string, dir: string): boolean => p.startsWith(`${dir}/`) || p.startsWith(`${dir}\\`);

/** The dataset folders among the opened files, on the host: the folder of every outermost manifest. */
export function datasetDirs(files: readonly SourceFile[]): string[] {
  const dirs = files
    .filter((f) => f.path.split('/').pop() === MANIFEST)
    .map(datasetDir)
    .filter((d): d is string => d !== null)
    .sort((a, b) => a.length - b.length);
  const outer: string[] = [];
  for (const d of dirs) if (!outer.some((o) => o === d || inside(d, o))) outer.push(d);
  return outer;
}

/**
 * The paths a Node engine (the desktop app's) is asked to open for the files opened, which a folder's listing gave
 * file by file: each dataset folder among them (datasetDirs) in place of its files, so that several nodes' datasets
 * open together as one job, as `heaplens open ds-a ds-b` opens them; every other file as it is (dumps; beside a
 * dataset the engine refuses them, saying why). null when a file has no path on the host.
 */
export function enginePaths(files: readonly SourceFile[]): string[] | null {
  const paths = files.map((f) => f.hostPath);
  if (!paths.every((p): p is string => p !== undefined && p !== '')) return null;
  const outer = datasetDirs(files);
  return [...outer, ...paths.filter((p) => !outer.some((d) => inside(p, d)))];
}

/** Several datasets without the engine process: the main process reads one dataset, never a part of the job. */
export function datasetsNeedEngine(dirs: readonly string[]): string {
  return (
    `${dirs.length} datasets were opened (${dirs.join(', ')}): they open together as one job through the desktop ` +
    `app's engine, which is not running. Open them with heaplens open <folders…>, or one at a time.`
  );
}

export function datasetNeedsDesktop(manifest: SourceFile): string {
  const dir = manifest.path.includes('/') ? manifest.path.slice(0, manifest.path.lastIndexOf('/')) : 'This folder';
  return (
    `${dir} is a heaplens dataset (Parquet, written by heaplens ingest). The web page reads dumps only: ` +
    `open the folder in the heaplens desktop app, or use the command line (heaplens summary|top|growth|report <folder>).`
  );
}
