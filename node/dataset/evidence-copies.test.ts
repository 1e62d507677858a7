// Ingest's copies of the job's evidence (evidence-copies.ts copyEvidence) on fixtures/oom-job's real logs: the files
// the loader knows are copied whole, each read once (the bytes judged are the bytes copied); a text no reader knows
// is read once and left out, documentation and empty files are not read at all.
import { mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { InputFile } from '../../core/formats/input-file.js';
import { nodeInputFile } from '../io/node-files.js';
import { copyEvidence } from './evidence-copies.js';

const OOM = join(import.meta.dirname, '..', '..', 'fixtures', 'oom-job');

/** The file, counting its reads. */
function counted(abs: string, path: string, reads: Map<string, number>): InputFile {
  const st = statSync(abs);
  const f = nodeInputFile(abs, path, st.size, st.mtimeMs);
  reads.set(path, 0);
  return { ...f, read: (o, n) => (reads.set(path, reads.get(path)! + 1), f.read(o, n)) };
}

describe('copyEvidence', () => {
  it('reads each file once: the known logs copied byte for byte, the rest left out', async () => {
    const extra = mkdtempSync(join(tmpdir(), 'heaplens-evidence-'));
    writeFileSync(join(extra, 'notes.txt'), 'nothing a log reader knows\n');
    writeFileSync(join(extra, 'empty.log'), '');
    const reads = new Map<string, number>();
    const logs = readdirSync(join(OOM, 'logs'), { recursive: true })
      .map(String)
      .filter((n) => statSync(join(OOM, 'logs', n)).isFile())
      .sort();
    const files = [
      ...logs.map((n) => counted(join(OOM, 'logs', n), `oom-job/logs/${n}`, reads)),
      counted(join(OOM, 'README.md'), 'oom-job/README.md', reads),
      counted(join(extra, 'notes.txt'), 'oom-job/notes.txt', reads),
      counted(join(extra, 'empty.log'), 'oom-job/empty.log', reads),
    ];
    const dir = mkdtempSync(join(tmpdir(), 'heaplens-evidence-ds-'));
    const kept = await copyEvidence(dir, files);
    // the kernel logs, the job log and the cgroup v1 files (each of which the cgroup reader knows by its name)
    expect(kept.map((k) => k.path)).toEqual(logs.map((n) => `oom-job/logs/${n}`));
    for (const k of kept) {
      const abs = join(OOM, 'logs', relative('oom-job/logs', k.path));
      expect(readFileSync(join(dir, k.copy)).equals(readFileSync(abs)), k.path).toBe(true);
      expect(k.size).toBe(statSync(abs).size);
    }
    expect(Object.fromEntries(reads)).toEqual({
      ...Object.fromEntries(logs.map((n) => [`oom-job/logs/${n}`, 1])),
      'oom-job/notes.txt': 1,
      'oom-job/README.md': 0,
      'oom-job/empty.log': 0,
    });
  });
});
