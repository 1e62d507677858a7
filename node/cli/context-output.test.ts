// The CLI's summary carries the capture context (real fixture: fixtures/python/py312, a parent and its
// forked child), checked against the workload's own readings (context-expected.jsonl).
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCaptured, runJson } from './run-captured.js';

const PY312 = resolve(import.meta.dirname, '../../fixtures/python/py312');
const rows = readFileSync(join(PY312, 'context-expected.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map(
    (l) =>
      JSON.parse(l) as {
        pid: number;
        ppid: number;
        mseq: number;
        comm: string;
        before: { time_ns: number };
        after: { time_ns: number };
      },
  );

interface SummaryJson {
  processes: {
    key: string;
    pid: number;
    name: string;
    comm: string;
    cmdline: string[];
    ppid: number;
    parentKey: string | null;
    limitBytes: number | null;
    timeAxis: string;
    snapshots: {
      triggerSeq?: number;
      file: string;
      timeMs: number;
      timeSource: string;
      context: { pid: number; jemalloc: { allocated: number } } | null;
      memory: { heapEstimate: number; allocated: number; rss: number; gap: { gap: number; message: string } | null };
    }[];
  }[];
}

describe('heaplens summary with the capture context', () => {
  it('--json: names, parent, times and memory figures per process and snapshot', async () => {
    const doc = await runJson<SummaryJson>('summary', PY312, '--json');
    const child = rows.find((r) => rows.some((q) => q.pid === r.ppid))!;
    const c = doc.processes.find((p) => p.pid === child.pid)!;
    const parent = doc.processes.find((p) => p.pid === child.ppid)!;
    expect(c.parentKey).toBe(parent.key);
    expect(parent.parentKey).toBeNull();
    expect(c.comm).toBe(child.comm);
    // named by what ran: the interpreter (its comm) and the script the fixture script runs (workload/workload.py)
    expect(c.name).toBe(`${child.comm} workload.py`);
    expect(c.ppid).toBe(child.ppid);
    expect(c.timeAxis).toBe('wall');
    for (const p of doc.processes) {
      for (const s of p.snapshots) {
        const mseq = Number(/\.m(\d+)\.heap$/.exec(s.file)![1]);
        const r = rows.find((x) => x.pid === p.pid && x.mseq === mseq)!;
        expect(s.timeSource).toBe('capture');
        expect(s.timeMs).toBeGreaterThanOrEqual(Math.floor(r.before.time_ns / 1e6));
        expect(s.timeMs).toBeLessThanOrEqual(Math.ceil(r.after.time_ns / 1e6));
        expect(s.context?.pid).toBe(p.pid);
        expect(s.memory.allocated).toBe(s.context?.jemalloc.allocated);
        expect(s.memory.gap?.gap).toBe(s.memory.rss - s.memory.allocated);
      }
    }
  });

  it('text: the process line names the command, the table has time, allocated, resident and RSS', async () => {
    const { code, out } = await runCaptured('summary', PY312);
    expect(code).toBe(0);
    expect(out).toMatch(/python3\.\d+ workload\.py on \S+, started \d{4}-\d{2}-\d{2}T/);
    expect(out).toMatch(/cmdline: \S+python3\.12 .*workload\.py/);
    expect(out).toMatch(/time \(UTC\)\s+allocated\s+resident\s+RSS/);
    expect(out).toMatch(/last dump: RSS .* − allocated .* = /);
  });
});
