// Process names on the real job run (fixtures/job): the trainer and its forked rollouts ran job.py, the evaluator
// was started as `[sys.executable, evaluator.py]` (the workload's own Popen, expected.json `start`), all under
// CPython expected.json `python`. Named from the capture context's command line, and — with the context taken
// away, as for dumps from jemalloc alone — from the maps' main executable and the `<module>` frames.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import type { Job } from './model.js';
import { commandName, mainExecutable, processLabel, processName } from './process-name.js';
import { expectedJob, jobFiles, type ExpectedJob } from '../../fixtures/job/job-fixture.js';

let job: Job;
let exp: ExpectedJob;
beforeAll(async () => {
  exp = expectedJob();
  job = await loadJob(jobFiles());
});

const exe = (): string => `python${/^(\d+\.\d+)/.exec(exp.python)?.[1] ?? '?'}`;
const scriptOf = (start: string): string => (start === 'subprocess' ? 'evaluator.py' : 'job.py');

describe('core/model/process-name', () => {
  it('names each process of the job by its command line: executable and script', () => {
    expect(job.processes.length).toBe(exp.processes.length);
    for (const e of exp.processes) {
      const p = job.processes.find((q) => q.pid === e.pid);
      expect(p, `pid ${e.pid}`).toBeDefined();
      expect(processName(p!), e.role).toBe(`${exe()} ${scriptOf(e.start)}`);
      expect(processLabel(p!, processName(p!))).toBe(`${e.pid} ${exe()} ${scriptOf(e.start)}`);
    }
  });

  it('without a capture context: the maps main executable and the outermost <module> file', () => {
    for (const e of exp.processes) {
      const p = job.processes.find((q) => q.pid === e.pid)!;
      const bare = { ...p, snapshots: p.snapshots.map((s) => ({ ...s, context: null })) };
      expect(mainExecutable(p.maps), e.role).toBe(exe());
      expect(processName(bare), e.role).toBe(`${exe()} ${scriptOf(e.start)}`);
      // nothing at all: null, and the label falls back to the dump prefix
      const none = { ...bare, maps: null, pythonFrames: null };
      expect(processName(none)).toBeNull();
      expect(processLabel(p, null)).toBe(`${e.pid} ${p.prefix}`);
    }
  });

  it('a name the process gave itself (comm other than its executable) is its role', () => {
    const p = job.processes.find((q) => q.pid === exp.processes[1].pid)!;
    const renamed = (comm: string) => ({
      ...p,
      snapshots: p.snapshots.map((s) => (s.context ? { ...s, context: { ...s.context, comm } } : s)),
    });
    expect(processName(renamed('ray::Learner'))).toBe('ray::Learner');
    // comm is the executable's name cut to 15 bytes: not a role
    expect(processName(renamed(exe().slice(0, 15)))).toBe(`${exe()} job.py`);
  });

  it('command lines: options with values skipped, -m and -c, other programs by their executable', () => {
    expect(commandName(['/usr/bin/python3', '-X', 'dev', '-u', 'train.py', '--lr', '1'])).toBe('python3 train.py');
    expect(commandName(['python3.11', '-m', 'torch.distributed.run', 'x.py'])).toBe(
      'python3.11 -m torch.distributed.run',
    );
    expect(commandName(['/opt/conda/bin/python', '-c', 'print(1)'])).toBe('python -c');
    expect(commandName(['/usr/local/bin/torchrun', 'train.py'])).toBe('torchrun');
    expect(commandName([])).toBeNull();
  });
});
