import { describe, expect, it } from 'vitest';
import { datasetDir, datasetManifest, datasetNeedsDesktop } from './dataset-open.ts';

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
