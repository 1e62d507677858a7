// The verdict as a title (a report's), on the three real dead jobs of fixtures/. The victims' roles and pids come from
// each fixture's expected.json (the workload's own record), the leaks' file:line from the workloads' tagged lines.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeInputFile } from '../../node/io/node-files.js';
import type { InputFile } from '../formats/input-file.js';
import { loadJob } from '../load/load-job.js';
import { postmortemView } from './postmortem-view.js';
import { verdictTitle } from './verdict-title.js';

const FIX = resolve(import.meta.dirname, '../../fixtures');

function files(job: string, dirs: string[]): InputFile[] {
  const out: InputFile[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const abs = join(dir, name);
      const st = statSync(abs);
      if (st.isDirectory()) walk(abs);
      else out.push(nodeInputFile(abs, `${job}/${relative(join(FIX, job), abs)}`, st.size, st.mtimeMs));
    }
  };
  for (const d of dirs) walk(join(FIX, job, d));
  return out;
}
/** the line of a workload file that carries `tag` (its `# @tag` comment) */
function taggedLine(file: string, tag: string): number {
  return (
    readFileSync(file, 'utf8')
      .split('\n')
      .findIndex((l) => l.includes(`# @${tag}`)) + 1
  );
}
const expected = <T>(job: string): T => JSON.parse(readFileSync(join(FIX, job, 'expected.json'), 'utf8')) as T;

describe('the verdict as a title', () => {
  it('watchdog-job: the role the logs give the victim, and the leak by file:line', async () => {
    const want = expected<{ kill: { role: string } }>('watchdog-job');
    const job = await loadJob(files('watchdog-job', ['dumps', 'logs']));
    const line = taggedLine(join(FIX, 'launcher', 'launch.py'), 'leak-alloc');
    expect(verdictTitle(job, postmortemView(job))).toBe(`${want.kill.role} killed: leak in launch.py:${line}`);
  });

  it("oom-job: the kernel's victim, the copied pages and the trainer's leak", async () => {
    const want = expected<{ kill: { role: string }; leak: { file: string } }>('oom-job');
    const job = await loadJob(files('oom-job', ['dumps', 'logs', 'smaps']));
    const line = taggedLine(join(FIX, 'oom-job', 'workload', want.leak.file), 'steplog-alloc');
    expect(verdictTitle(job, postmortemView(job))).toBe(
      `${want.kill.role} killed: copy-on-write, leak in ${want.leak.file}:${line}`,
    );
  });

  it('job: no log, the process that stopped without its final dump, named by what ran and its pid', async () => {
    const want = expected<{
      python: string;
      sites: { leak: { file: string; line: number } };
      processes: { pid: number; role: string }[];
    }>('job');
    const job = await loadJob(files('job', ['dumps']));
    const killed = want.processes.find((p) => p.role === 'rollout-2')!;
    const exe = `python${/^(\d+\.\d+)/.exec(want.python)?.[1] ?? '?'}`;
    expect(verdictTitle(job, postmortemView(job))).toBe(
      `${exe} job.py ${killed.pid} stopped: leak in ${want.sites.leak.file}:${want.sites.leak.line}`,
    );
  });

  it('says nothing without a post-mortem (the caller keeps its title)', () => {
    expect(verdictTitle({ processes: [] }, null)).toBeNull();
  });
});
