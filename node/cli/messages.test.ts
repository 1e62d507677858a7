// CLI messages name the real cause (issue 23, item 5): run in-process over the real jemalloc fixture, each
// message is checked against what the input really holds (its pids and seqs read from the file names, which
// jemalloc writes as <prefix>.<pid>.<seq>.<trigger><n>.heap).
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { runCaptured } from './run-captured.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { usage } from './main.js';
import { wrapUsage } from './text/usage.js';
import { FIXTURES } from '../../tools/fixtures.js';

const JOB = join(FIXTURES, 'job');

const cli = (argv: readonly string[]) => runCaptured(...argv);

/** pid → seqs of the fixture's dumps, from jemalloc's file names. */
function dumpsByPid(): Map<number, number[]> {
  const m = new Map<number, number[]>();
  for (const f of readdirSync(JOB)) {
    const x = /^[^.]+\.(\d+)\.(\d+)\.[a-z]\d*\.heap/.exec(f);
    if (!x) continue;
    const list = m.get(Number(x[1])) ?? [];
    list.push(Number(x[2]));
    m.set(Number(x[1]), list);
  }
  return m;
}

describe('CLI messages', () => {
  it('--pid of no process lists the processes there are', async () => {
    const pids = [...dumpsByPid().keys()];
    const r = await cli(['summary', JOB, '--pid', '42']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/no process 42; the processes are /);
    for (const pid of pids) expect(r.err).toContain(String(pid));
    expect(r.err).not.toMatch(/no heap profile could be read/);
  });

  it('-n many names -n, as typed', async () => {
    const r = await cli(['top', JOB, '-n', 'many']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^heaplens: -n takes a whole number, got "many"/);
    const long = await cli(['top', JOB, '--top', 'many']);
    expect(long.err).toMatch(/^heaplens: --top takes a whole number/);
  });

  it('--snapshot 999 exits 2 listing the sequence numbers', async () => {
    const seqs = new Set([...dumpsByPid().values()].flat());
    expect(seqs.has(999)).toBe(false);
    const r = await cli(['top', JOB, '--snapshot', '999', '--no-symbols']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--snapshot 999: no snapshot has sequence number 999; the sequence numbers are /);
    const max = Math.max(...seqs);
    expect(r.err).toContain(`0–${max}`);
    expect(r.out).toBe('');
  });

  it('an empty folder and a folder of unrelated files say how many files were looked at and what they were', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'heaplens-msg-empty-'));
    const e = await cli(['summary', empty]);
    expect(e.code).toBe(1);
    expect(e.err).toMatch(/no heap profile could be read from .*: no files there/);
    const other = mkdtempSync(join(tmpdir(), 'heaplens-msg-other-'));
    writeFileSync(join(other, 'notes.txt'), 'not a dump\n');
    writeFileSync(join(other, 'train.log'), 'step 1\n');
    const o = await cli(['summary', other]);
    expect(o.code).toBe(1);
    expect(o.err).toMatch(/2 files looked at, none a jemalloc heap dump/);
    expect(o.err).toMatch(/notes\.txt/);
    expect(o.err).toMatch(/train\.log/);
  });

  it('a usage error prints the one command it is about and --help, not the whole usage', async () => {
    const r = await cli(['top', JOB, '--bogus']);
    expect(r.code).toBe(2);
    const lines = r.err.split('\n');
    expect(lines[0]).toBe('heaplens: unknown option --bogus for "top"');
    expect(r.err).toContain('heaplens top <paths…>');
    expect(r.err).not.toContain('heaplens diff');
    expect(r.err).toContain('--help');
    expect(lines.length).toBeLessThan(8);
  });

  it('--help wraps a long line under its description column', () => {
    const text = wrapUsage(usage(), 80);
    for (const l of text.split('\n')) expect(l.length).toBeLessThanOrEqual(80);
    // the continuation of "--focus RE  only stacks with a frame …" starts where its description starts (column 21)
    const lines = text.split('\n');
    const i = lines.findIndex((l) => l.startsWith('  --focus RE'));
    const col = lines[i].indexOf('only stacks');
    expect(col).toBeGreaterThan(0);
    expect(/^ */.exec(lines[i + 1])![0].length).toBe(col);
  });
});
