// A dataset folder (written by `heaplens ingest`) among opened files: the desktop app reads it through the main
// process (DuckDB is a native module); the web page cannot, and says what to use instead.

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

export function datasetNeedsDesktop(manifest: SourceFile): string {
  const dir = manifest.path.includes('/') ? manifest.path.slice(0, manifest.path.lastIndexOf('/')) : 'This folder';
  return (
    `${dir} is a heaplens dataset (Parquet, written by heaplens ingest). The web page reads dumps only: ` +
    `open the folder in the heaplens desktop app, or use the command line (heaplens summary|top|growth|report <folder>).`
  );
}
