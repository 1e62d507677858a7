import { describe, expect, it } from 'vitest';
import {
  datasetDir,
  datasetDirs,
  datasetManifest,
  datasetNeedsDesktop,
  datasetsNeedEngine,
  enginePaths,
} from './dataset-open.ts';

const f = (path: string, hostPath?: string) => ({ path, size: 1, mtimeMs: null, ...(hostPath ? { hostPath } : {}) });

describe('dataset folders among opened files', () => {
  it('finds the manifest (the shallowest one), its folder on the host, and the web page message', () => {
    expect(datasetManifest([f('job/a.1.0.i0.heap')])).toBeNull();
    const m = datasetManifest([
      f('job.dataset/cells/process=0/run-0001.parquet'),
      f('job.dataset/inner/_heaplens.json'),
      f('job.dataset/_heaplens.json', '/data/job.dataset/_heaplens.json'),
    ]);
    expect(m?.path).toBe('job.dataset/_heaplens.json');
    expect(datasetDir(m!)).toBe('/data/job.dataset');
    expect(datasetDir(f('_heaplens.json'))).toBeNull();
    expect(datasetNeedsDesktop(m!)).toMatch(/^job\.dataset is a heaplens dataset .*desktop app.*command line/);
  });
});

describe('what the desktop app asks its Node engine to open', () => {
  const at = (root: string, rel: string) => f(rel, `${root}/${rel}`);
  it('every dataset folder dropped, whole, in place of its files; dumps as they are', () => {
    const files = [
      at('/data', 'node-a.dataset/_heaplens.json'),
      at('/data', 'node-a.dataset/cells/process=0/run-0001.parquet'),
      at('/data', 'node-a.dataset/inner/_heaplens.json'),
      at('/data', 'node-b.dataset/snapshots.parquet'),
      at('/data', 'node-b.dataset/_heaplens.json'),
    ];
    expect(enginePaths(files)).toEqual(['/data/node-a.dataset', '/data/node-b.dataset']);
    // a folder named like a dataset's but not under it stays a path of its own
    expect(enginePaths([...files, at('/data', 'node-a.dataset2/job.1.0.i0.heap')])).toEqual([
      '/data/node-a.dataset',
      '/data/node-b.dataset',
      '/data/node-a.dataset2/job.1.0.i0.heap',
    ]);
    // dumps alone: their paths, in order
    expect(enginePaths([at('/d', 'a.1.0.i0.heap'), at('/d', 'a.1.1.i1.heap')])).toEqual([
      '/d/a.1.0.i0.heap',
      '/d/a.1.1.i1.heap',
    ]);
    // Windows paths
    expect(
      enginePaths([f('ds/_heaplens.json', 'C:\\x\\ds\\_heaplens.json'), f('ds/s.parquet', 'C:\\x\\ds\\s.parquet')]),
    ).toEqual(['C:\\x\\ds']);
  });
  it('without the engine process, several datasets are refused, naming them, rather than one opened as the job', () => {
    const files = [at('/data', 'node-a.dataset/_heaplens.json'), at('/data', 'node-b.dataset/_heaplens.json')];
    expect(datasetDirs(files)).toEqual(['/data/node-a.dataset', '/data/node-b.dataset']);
    expect(datasetDirs([at('/data', 'x.dataset/_heaplens.json'), at('/data', 'x.dataset/in/_heaplens.json')])).toEqual([
      '/data/x.dataset',
    ]);
    expect(datasetsNeedEngine(datasetDirs(files))).toBe(
      "2 datasets were opened (/data/node-a.dataset, /data/node-b.dataset): they open together as one job through the desktop app's engine, which is not running. Open them with heaplens open <folders…>, or one at a time.",
    );
  });
  it('none when a file has no path on the host (a browser drop: the page reads the files)', () => {
    expect(enginePaths([f('a.1.0.i0.heap', '/d/a.1.0.i0.heap'), f('b.1.0.i0.heap')])).toBeNull();
  });
});
