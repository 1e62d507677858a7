// Bad kill evidence against the real oom-job dumps: a pid not in the dumps, two kills, a kill before the
// first dump, clock skew, a cut or hostile line. Each gives a warning naming the file (and line), never a
// wrong fate. The logs are the fixture's real dmesg with the edit each case names.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { nodeInputFile } from '../../node/io/node-files.js';
import type { InputFile } from '../formats/input-file.js';
import { loadJob } from '../load/load-job.js';
import { postmortemQuery } from '../query/postmortem.js';
import type { Job } from '../model/model.js';

const dir = fileURLToPath(new URL('../../fixtures/oom-job/', import.meta.url));
const expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as {
  kill: { pid: number };
  trainer: { pid: number };
  processes: { pid: number; fate: string }[];
};
const dmesg = readFileSync(join(dir, 'logs/dmesg.txt'), 'utf8');
const victim = String(expected.kill.pid);

function textFile(path: string, text: string): InputFile {
  const bytes = new TextEncoder().encode(text);
  return { path, size: bytes.length, mtimeMs: null, read: (o, n) => Promise.resolve(bytes.subarray(o, o + n)) };
}

const dumps: InputFile[] = readdirSync(join(dir, 'dumps')).map((n) => {
  const abs = join(dir, 'dumps', n);
  const st = statSync(abs);
  return nodeInputFile(abs, `oom-job/dumps/${n}`, st.size, st.mtimeMs);
});

async function withLog(text: string): Promise<{ job: Job; r: ReturnType<typeof postmortemQuery> }> {
  const job = await loadJob([...dumps, textFile('oom-job/logs/kern.txt', text)]);
  return { job, r: postmortemQuery(job) };
}

/** Shifts every `[ seconds ]` of the log by `ds`. */
const shift = (text: string, ds: number): string =>
  text.replace(/^\[\s*(\d+\.\d+)\]/gm, (_m, s: string) => `[${(Number(s) + ds).toFixed(6).padStart(12)}]`);

let base: Job;
beforeAll(async () => {
  base = await loadJob(dumps);
});

const fateOf = (r: ReturnType<typeof postmortemQuery>, pid: number): string =>
  r.processes.find((p) => p.pid === pid)!.fate;

describe('bad kill evidence', () => {
  it('a kill of a pid not in the dumps: a warning, no fate from it', async () => {
    const { r } = await withLog(dmesg.replaceAll(victim, '4242424'));
    expect(
      r.warnings.some(
        (w) => w.file.endsWith('kern.txt') && w.line !== undefined && /pid 4242424 .*no dumps here/.test(w.message),
      ),
    ).toBe(true);
    expect(r.processes.every((p) => p.fate !== 'oom-killed')).toBe(true);
    expect(fateOf(r, expected.kill.pid)).toBe('stopped'); // the dumps' inference stays: no kill without evidence
    expect(base.processes.length).toBe(r.processes.length);
  });

  it('two kills: both marked, a warning, the verdict names the first', async () => {
    // a second report naming the trainer, 5 s later: after its final dump (it exited), so not a fate either
    const second = shift(dmesg, 5).replaceAll(victim, String(expected.trainer.pid));
    const { r } = await withLog(dmesg + second);
    expect(r.kills.map((k) => k.pid)).toEqual([expected.kill.pid, expected.trainer.pid]);
    expect(fateOf(r, expected.kill.pid)).toBe('oom-killed');
    expect(fateOf(r, expected.trainer.pid)).not.toBe('oom-killed');
    expect(r.warnings.some((w) => /after its final dump/.test(w.message))).toBe(true);
    // a second real victim: another loader, at the same moment
    const other = expected.processes.find((p) => p.fate === 'torn-down')!.pid;
    const { r: r2 } = await withLog(dmesg + shift(dmesg, 0.01).replaceAll(victim, String(other)));
    expect(r2.warnings.some((w) => /2 kills \(pid/.test(w.message))).toBe(true);
    expect(fateOf(r2, expected.kill.pid)).toBe('oom-killed');
    expect(fateOf(r2, other)).toBe('oom-killed');
    expect(r2.verdict).toContain(`pid ${expected.kill.pid}`);
  });

  it('a kill before the first dump (an earlier run): a warning, no fate', async () => {
    const { r } = await withLog(shift(dmesg, -600));
    expect(r.warnings.some((w) => /before that process's first dump/.test(w.message))).toBe(true);
    expect(fateOf(r, expected.kill.pid)).toBe('stopped');
  });

  it("clock skew between the log's wall clock and the dumps: said, and the dumps' placement used", async () => {
    // kern.log form: syslog's clock 90 s off, the kernel's own seconds kept
    const skewed = dmesg
      .split('\n')
      .filter((l) => l)
      .map((l) => `Dec  1 20:39:00 trainer-host kernel: ${l}`)
      .join('\n');
    const { r } = await withLog(skewed);
    expect(r.warnings.some((w) => /clock skew/.test(w.message))).toBe(true);
    expect(fateOf(r, expected.kill.pid)).toBe('oom-killed');
    const exact = (await withLog(dmesg)).r.kill!.atMs!;
    expect(r.kill!.atMs).toBeCloseTo(exact, 0);
  });

  it('a cut log and a hostile line: warnings with lines, no invented kill', async () => {
    const lines = dmesg.split('\n');
    const at = lines.findIndex((l) => l.includes('Killed process'));
    const { job, r } = await withLog(
      [...lines.slice(0, at), '[ 1.000000] \u001b[31m\u0007 oom-kill:' + '\u001b]0;x\u0007'.repeat(10)].join('\n'),
    );
    expect(r.kills).toEqual([]);
    expect(fateOf(r, expected.kill.pid)).toBe('stopped');
    // the reader's warnings are the load's (the CLI and the app list them with the file and line)
    expect(
      job.warnings.some(
        (w) => w.file.endsWith('kern.txt') && w.line !== undefined && /ends inside an OOM report/.test(w.message),
      ),
    ).toBe(true);
    const { job: hj, r: h } = await withLog(
      dmesg.replace(/\(python3\.12\) total-vm/, `(${'x'.repeat(9000)}) total-vm`),
    );
    expect(hj.warnings.some((w) => /cut at 4096/.test(w.message))).toBe(true);
    expect(fateOf(h, expected.kill.pid)).not.toBe('exited');
  });
});
