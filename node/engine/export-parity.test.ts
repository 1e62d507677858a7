// The app's export of a job is the CLI's: `heaplens export` and the engine's `export` answer (what the app's
// Export menu asks, here through the Node engine behind `heaplens open`) write the same bytes for the same choice,
// one implementation (core/export/job-export.ts). The pprof file is gzipped in both, and `go tool pprof`-readable
// figures are checked in core/export/pprof.test.ts; here only the sameness.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { runCaptured } from '../cli/run-captured.js';
import { NodeEngine } from './engine.js';
import type { FromEngine, Request, Response } from '../../core/engine/api.js';

const JOB = join(import.meta.dirname, '../../fixtures/job/dumps');

async function engineAnswer(engine: NodeEngine, req: Request): Promise<Response> {
  return new Promise((resolve, reject) =>
    engine.receive({ id: 1, req }, (m: FromEngine) => {
      if ('ok' in m) {
        if (m.ok) resolve(m.res);
        else reject(new Error(m.error));
      }
    }),
  );
}

describe('the app exports a job as the CLI does', () => {
  it.each(['pprof', 'folded', 'speedscope'] as const)('%s: the same bytes', async (format) => {
    const engine = new NodeEngine({
      paths: [JOB],
      allowPaths: false,
      symbols: null,
      info: { kind: 'node', label: 'test' },
      reportApp: () => null,
    });
    try {
      await engineAnswer(engine, { type: 'open' });
      const app = await engineAnswer(engine, {
        type: 'export',
        format,
        procs: null,
        snapshot: 'last',
        view: { mode: 'python-first', hideAllocator: true },
      });
      if (app.type !== 'export') throw new Error(app.type);
      const out = join(mkdtempSync(join(tmpdir(), 'heaplens-export-')), `job.${format}`);
      const cli = await runCaptured('export', JOB, '--no-symbols', '--format', format, '-o', out);
      expect(cli.code, cli.err).toBe(0);
      const written = readFileSync(out);
      const data = typeof app.data === 'string' ? Buffer.from(app.data) : Buffer.from(app.data);
      expect(written.equals(data)).toBe(true);
      expect(app.processes).toBe(5);
      // pprof is gzipped, as pprof files are (the app's used to be written raw)
      if (format === 'pprof') expect(gunzipSync(written).length).toBeGreaterThan(written.length);
    } finally {
      engine.close();
    }
  });
});
