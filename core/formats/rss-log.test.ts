// RSS logs on a real run (fixtures/rss-log: dumps from jemalloc alone and the RSS the workload logged
// at each dump), plus damaged rows derived from it.
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { collectInputFiles } from '../../node/io/node-files.js';
import { loadJob } from '../load/load-job.js';
import { seriesMemory } from '../load/series-memory.js';
import { seriesTimes } from '../model/snapshot-time.js';
import { parseRssLog } from './rss-log.js';

const FIX = resolve(import.meta.dirname, '../../fixtures/rss-log');
const work = mkdtempSync(join(tmpdir(), 'heaplens-rss-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The log's own rows: the reference (time, pid, VmRSS KiB read by the workload right after each dump). */
const rows = readFileSync(join(FIX, 'rss.csv'), 'utf8')
  .trim()
  .split('\n')
  .slice(1)
  .map((l) => {
    const [t, pid, kb] = l.split(',');
    return { timeMs: Date.parse(t), pid: Number(pid), rss: Number(kb) * 1024 };
  });

/** A copy of the fixture whose dumps carry the mtimes they had when written (the log's time for each). */
function copyWithMtimes(csv: string | null, keepTimes = true): string {
  const dir = mkdtempSync(join(work, 'case-'));
  const dumps = readdirSync(FIX)
    .filter((n) => n.endsWith('.heap'))
    .sort((a, b) => Number(a.split('.')[2]) - Number(b.split('.')[2]));
  const seen = new Map<number, number>();
  for (const d of dumps) {
    copyFileSync(join(FIX, d), join(dir, d));
    const pid = Number(d.split('.')[1]);
    const k = seen.get(pid) ?? 0;
    seen.set(pid, k + 1);
    const row = rows.filter((r) => r.pid === pid)[k];
    const t = keepTimes ? row.timeMs / 1000 : 1_700_000_000; // one shared time: a copy that lost them
    utimesSync(join(dir, d), t, t);
  }
  if (csv !== null) writeFileSync(join(dir, 'rss.csv'), csv);
  return dir;
}

describe('RSS log aligned with dumps from jemalloc alone', () => {
  it('plausible mtimes place the dumps; each gets the RSS its process logged at that moment', async () => {
    const job = await loadJob(await collectInputFiles([copyWithMtimes(readFileSync(join(FIX, 'rss.csv'), 'utf8'))]));
    expect(job.warnings).toEqual([]);
    expect(job.processes).toHaveLength(2);
    for (const p of job.processes) {
      expect(p.snapshots.every((s) => !s.context)).toBe(true);
      const t = seriesTimes(p);
      expect(t.source).toBe('mtime');
      const mem = seriesMemory(p);
      const want = rows.filter((r) => r.pid === p.pid).map((r) => r.rss);
      expect(mem.map((m) => m.rss)).toEqual(want);
      expect(mem.every((m) => m.rssSource === 'log')).toBe(true);
    }
  });

  it('mtimes lost in a copy: the axis counts dumps and the log cannot be placed', async () => {
    const job = await loadJob(
      await collectInputFiles([copyWithMtimes(readFileSync(join(FIX, 'rss.csv'), 'utf8'), false)]),
    );
    const p = job.processes[0];
    const t = seriesTimes(p);
    expect(t.axis).toBe('seq');
    expect(t.mtimeProblem).toMatch(/share a modification time/);
    expect(seriesMemory(p).every((m) => m.rss === null)).toBe(true);
  });

  it('damaged rows are skipped with a warning naming file and line; the good rows still align', async () => {
    const text = readFileSync(join(FIX, 'rss.csv'), 'utf8').trimEnd().split('\n');
    const bad = [
      ...text.slice(0, 2),
      'not,a,row,at all',
      '2026-13-45T99:00:00Z,1,2', // no such date
      `${text[1].split(',')[0]},abc,5`,
      `${text[1].split(',')[0]},${rows[0].pid},-5`,
      `${text[1].split(',')[0]}`,
      ...text.slice(2),
    ];
    const dir = copyWithMtimes(bad.join('\n') + '\n');
    const job = await loadJob(await collectInputFiles([dir]));
    const w = job.warnings.filter((x) => x.message.startsWith('RSS log:'));
    expect(w.map((x) => x.line)).toEqual([3, 4, 5, 6, 7]);
    expect(w.every((x) => x.file.endsWith('rss.csv'))).toBe(true);
    expect(w[0].message).toMatch(/time "not" is not an ISO-8601 date/);
    expect(w[2].message).toMatch(/pid "abc"/);
    expect(w[3].message).toMatch(/RSS "-5"/);
    expect(w[4].message).toMatch(/1 column/);
    for (const p of job.processes)
      expect(seriesMemory(p).map((m) => m.rss)).toEqual(rows.filter((r) => r.pid === p.pid).map((r) => r.rss));
  });
});

describe('RSS log bounds (issue 24 item 7)', () => {
  const head = readFileSync(join(FIX, 'rss.csv'), 'utf8').trimEnd().split('\n');
  const t0 = head[1].split(',')[0];
  it('absurd sizes and dates are skipped with a warning naming the line; no Infinity reaches a figure', async () => {
    const bad = [
      ...head.slice(0, 2),
      `${t0},${rows[0].pid},${'9'.repeat(400)}`, // was Infinity TiB
      `${t0},${rows[0].pid},1000000000000000000000000000000`, // 10^30 KiB: was 9.3e20 TiB
      `0000-01-01T00:00:00Z,${rows[0].pid},5`, // was matched to the dumps of 2026
      `2286-11-20T17:46:40Z,${rows[0].pid},5`,
      ...head.slice(2),
    ];
    const job = await loadJob(await collectInputFiles([copyWithMtimes(bad.join('\n') + '\n')]));
    const w = job.warnings.filter((x) => x.message.startsWith('RSS log:'));
    expect(w.map((x) => x.line)).toEqual([3, 4, 5, 6]);
    expect(w[0].message).toMatch(/over 300 digits: row skipped/);
    expect(w[1].message).toMatch(/KiB: size of 34 digits B is past 8 PiB/);
    expect(w[2].message).toMatch(/before 1970/);
    expect(w[3].message).toMatch(/more than a year in the future/);
    for (const p of job.processes)
      expect(seriesMemory(p).map((m) => m.rss)).toEqual(rows.filter((r) => r.pid === p.pid).map((r) => r.rss));
  });

  it('samples 60 days either side of the dumps are too far to give their RSS (the match window is bounded)', async () => {
    const day = 24 * 3600 * 1000;
    const far = [head[0]];
    for (const pid of new Set(rows.map((r) => r.pid))) {
      const first = rows.find((r) => r.pid === pid)!;
      for (const dt of [-30 * day, 30 * day])
        far.push(`${new Date(first.timeMs + dt).toISOString()},${pid},${first.rss / 1024}`);
    }
    const job = await loadJob(await collectInputFiles([copyWithMtimes(far.join('\n') + '\n')]));
    expect(job.processes.every((p) => p.rssLog && p.rssLog.rss.length === 2)).toBe(true);
    for (const p of job.processes) expect(seriesMemory(p).every((m) => m.rss === null)).toBe(true);
  });

  it('seconds since start past 10 years are refused', () => {
    const l = parseRssLog('elapsed_s,rss_kib\n1,1\n400000000,1\n')!;
    expect(l.samples).toHaveLength(1);
    expect(l.problems[0]).toMatchObject({ line: 3, message: expect.stringMatching(/10 years/) });
  });
});

describe('RSS log columns and time forms (docs/formats.md)', () => {
  it('epoch seconds, bytes, tab-separated', () => {
    const l = parseRssLog('epoch\tpid\trss_bytes\n1796118337.5\t7\t4096\n')!;
    expect(l.timeKind).toBe('epoch-s');
    expect(l.rssUnit).toBe('bytes');
    expect(l.samples).toEqual([{ timeMs: 1796118337500, pid: 7, rss: 4096 }]);
  });
  it('seconds since start under an ambiguous "time" header; KiB by default for plain "RSS"', () => {
    const l = parseRssLog('Time, PID, RSS\n0.5, 7, 10\n')!;
    expect(l.timeKind).toBe('since-start');
    expect(l.samples[0]).toEqual({ timeMs: 500, pid: 7, rss: 10240 });
  });
  it('ISO-8601 with a zone or a blank separator; quoted cells', () => {
    const l = parseRssLog('"timestamp","rss_kib"\n"2026-12-01 10:00:00+01:00","1"\n2026-12-01 09:00:01,2\n')!;
    expect(l.samples.map((s) => s.timeMs)).toEqual([
      Date.parse('2026-12-01T09:00:00Z'),
      Date.parse('2026-12-01T09:00:01Z'),
    ]);
    expect(l.samples[0].pid).toBeNull();
  });
  it('a CSV without time and RSS columns is not an RSS log', () => {
    expect(parseRssLog('a,b\n1,2\n')).toBeNull();
  });
});
