// PyTorch snapshots and memleak captures loaded as the model. Expected figures: fixtures/torch/expected.json,
// counted by make-torch-snapshots.py from its own simulated allocator, and fixtures/ebpf/expected.json, the traced
// workload's own counters. Never our output pasted back.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadJob } from './load-job.js';
import type { InputFile } from '../formats/input-file.js';
import type { ProcessSeries } from '../model/model.js';
import { stackFrames } from '../model/model.js';
import { FIXTURES, torchExpected } from '../../tools/fixtures.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { gzipSync } from 'node:zlib';
import { DEFAULT_VIEW, processViewer } from '../frames/view.js';
import { processLabel } from '../stats/verdict.js';
import { memoBomb, OP, Ops } from '../../tools/fuzz/pickle-ops.js';
import { createDumpPool } from '../../node/io/dump-pool.js';
import { nodeInputFile } from '../../node/io/node-files.js';
import type { DumpTask } from './dump-task.js';

const ROOT = join(FIXTURES, '..');
const file = (rel: string, mtimeMs: number | null = null): InputFile => {
  const b = new Uint8Array(readFileSync(join(ROOT, rel)));
  return { path: rel, size: b.length, mtimeMs, read: async (o, l) => b.subarray(o, o + l) };
};

const torch = torchExpected();

/** Live bytes and blocks of the last snapshot by the leaf frame's function name. */
function byLeaf(p: ProcessSeries): Record<string, { bytes: number; blocks: number }> {
  const s = p.snapshots[p.snapshots.length - 1];
  const out: Record<string, { bytes: number; blocks: number }> = {};
  s.stackIds.forEach((id, k) => {
    const leaf = p.addresses.hex[stackFrames(p.stacks, id)[0]];
    const name = p.pythonFrames?.frames.get(leaf)?.function ?? leaf;
    out[name] ??= { bytes: 0, blocks: 0 };
    out[name].bytes += s.liveBytes[k];
    out[name].blocks += s.liveObjects[k];
  });
  return out;
}

describe('PyTorch memory snapshots as the model', () => {
  for (const name of ['snapshot-p2.pickle', 'snapshot-p4.pickle', 'snapshot-p5.pickle']) {
    it(`${name}: one series per device; the last snapshot is the recorded state; the trace replays peak and oom`, async () => {
      const job = await loadJob([file(`torch/${name}`)]);
      expect(job.processes.map((p) => p.prefix)).toEqual(torch.devices.map((d) => `cuda:${d.device}`));
      job.processes.forEach((p, i) => {
        const want = torch.devices[i];
        const g = p.gpu!;
        expect([g.segments, g.reservedBytes, g.allocatedBytes, g.pendingFreeBytes, g.inactiveBytes]).toEqual([
          want.segments,
          want.reserved_bytes,
          want.allocated_bytes,
          want.pending_free_bytes,
          want.inactive_bytes,
        ]);
        const last = p.snapshots[p.snapshots.length - 1];
        // active memory: allocated plus pending-free blocks (still owned until their stream's work is done)
        expect(last.live.bytes).toBe(want.allocated_bytes + want.pending_free_bytes);
        // a snapshot taken on request (the process went on, or not: the file does not say), not an exit
        expect(last.trigger).toBe('manual');
        const leaves = byLeaf(p);
        for (const [fn, v] of Object.entries(want.active_by_leaf))
          expect(leaves[fn].bytes).toBeGreaterThanOrEqual(v.bytes);
        expect(Math.max(...g.timeline.allocated)).toBe(want.peak_allocated_bytes);
        expect(Math.max(...g.timeline.reserved)).toBe(want.peak_reserved_bytes);
        expect(g.ooms.map((o) => [o.timeMs, o.size, o.deviceFree])).toEqual(
          want.ooms.map((o) => [o.time_us / 1000, o.size, o.device_free]),
        );
        // snapshots on the wall clock (time_us), increasing
        const t = p.snapshots.map((s) => s.context!.timeRealMs);
        for (let k = 1; k < t.length; k++) expect(t[k]).toBeGreaterThanOrEqual(t[k - 1]);
      });
      // device 0's blocks by frames: the cache that grew until the OOM and the weights (one pending-free)
      const leaves0 = byLeaf(job.processes[0]);
      expect(leaves0.remember).toEqual(torch.devices[0].active_by_leaf.remember);
      expect(leaves0.load_weights.bytes).toBe(
        torch.devices[0].active_by_leaf.load_weights.bytes + torch.devices[0].pending_free_bytes,
      );
      expect(job.processes[0].gpu!.spans.length).toBe(torch.annotations / 2);
      expect(job.warnings.filter((w) => /ran out of memory/.test(w.message)).length).toBe(1);
      // the frames are Python frames with their file and line
      const f = [...job.processes[0].pythonFrames!.frames.values()].find((e) => e.function === 'remember')!;
      expect([f.file, f.line, f.native]).toEqual(['/job/cache.py', 17, undefined]);
    });
  }

  it('a trace cut by the ring buffer: frees before their allocs are a warning naming the file; the blocks live at the cut are counted', async () => {
    const job = await loadJob([file(`torch/${torch.ring.file}`)]);
    const w = job.warnings.find((x) => /frees precede any alloc/.test(x.message))!;
    expect(w.file).toBe(`torch/${torch.ring.file}`);
    expect(w.message).toMatch(new RegExp(`^device 0: ${torch.ring.frees_before_alloc} frees`));
    for (const s of job.processes[0].snapshots) for (const v of s.liveBytes) expect(v).toBeGreaterThan(0);
    // the blocks and segments live when the kept entries begin are counted from the start (as MemoryViz does):
    // the cut timeline is exactly the tail of the whole trace's
    const whole = (await loadJob([file('torch/snapshot-p4.pickle')])).processes[0].gpu!.timeline;
    const cut = job.processes[0].gpu!.timeline;
    expect(cut.allocated).toEqual(whole.allocated.slice(-cut.allocated.length));
    expect(cut.reserved).toEqual(whole.reserved.slice(-cut.reserved.length));
    expect(cut.timeMs).toEqual(whole.timeMs.slice(-cut.timeMs.length));
  });

  it('hostile pickles are refused with a warning naming the file; nothing runs', async () => {
    const job = await loadJob([
      file('torch/hostile/global-reduce.pickle'),
      file('torch/hostile/cycle.pickle'),
      file('torch/hostile/huge-length.pickle'),
    ]);
    expect(job.processes).toEqual([]);
    expect(job.warnings.map((w) => [w.file, /GLOBAL|cycle|ends inside/.test(w.message)])).toEqual([
      ['torch/hostile/global-reduce.pickle', true],
      ['torch/hostile/cycle.pickle', true],
      ['torch/hostile/huge-length.pickle', true],
    ]);
  });
});

describe('PyTorch snapshots: frames, time, shapes and bounds (issues 45, 46)', () => {
  const cpp = torch.cpp;

  it('stacks="all": PyTorch\'s capture, allocator and dispatcher frames fold as allocator frames; the Python line leads every view', async () => {
    const job = await loadJob([file(`torch/${cpp.file}`)]);
    const p = job.processes[0];
    const last = p.snapshots[p.snapshots.length - 1];
    const view = processViewer(p, DEFAULT_VIEW);
    const byLead: Record<string, number> = {};
    last.stackIds.forEach((id, k) => {
      const frames = view(id)!.frames;
      byLead[frames[0].function!] = (byLead[frames[0].function!] ?? 0) + last.liveBytes[k];
      // the leading run the rule folds is the generator's C++ frames ahead of the first Python frame
      if (frames[0].kind === 'python') expect(p.stacks.allocatorDepth[id]).toBe(cpp.frames_before_python);
    });
    // the step kept its gradients (zero_grad's blocks); the weights predate recording, and are labelled so
    expect(byLead).toEqual({ ...cpp.kept_by_step, '(allocated before recording began)': cpp.before_recording_bytes });
    const grads = last.stackIds.find((id) => view(id)!.frames[0].function === 'zero_grad')!;
    // Python-first: the interpreter's C frames between Python frames fold too
    expect(
      view(grads)!
        .frames.filter((f) => f.kind === 'python')
        .map((f) => f.function),
    ).toEqual(['zero_grad', 'step', 'train', '<module>']);
    // --stacks python: Python frames only (the C++ frames are no Python frames)
    const py = processViewer(p, { mode: 'python', hideAllocator: true })(grads)!.frames;
    expect(py.map((f) => f.kind)).toEqual(['python', 'python', 'python', 'python']);
    // shown on request, the allocator frames start with the unwinder, as the allocator recorded them
    const all = processViewer(p, { mode: 'merged', hideAllocator: false })(grads)!.frames;
    expect(all[0]).toMatchObject({ kind: 'allocator', function: 'torch::unwind::unwind()' });
    expect(all.filter((f) => f.kind === 'allocator').length).toBe(cpp.frames_before_python);
    // named by its file and device, never "pid ?"
    expect(processLabel(job, 0)).toBe(`python train.py (${cpp.file} cuda:0)`);
  });

  it('one step over time: reserved, allocated and cached on the µs clock; the spans as record_function left them', async () => {
    const job = await loadJob([file(`torch/${cpp.file}`)]);
    const g = job.processes[0].gpu!;
    const n = g.timeline.timeMs.length;
    expect(g.timeline.cached.map((c, i) => c + g.timeline.allocated[i])).toEqual(g.timeline.reserved);
    expect(Math.max(...g.timeline.allocated)).toBe(cpp.peak_allocated_bytes);
    expect([g.timeline.reserved[n - 1], g.timeline.allocated[n - 1]]).toEqual([cpp.reserved_end, cpp.allocated_end]);
    // time_us is µs since the epoch: the first entry's ms
    expect(g.timeline.timeMs[0]).toBe(cpp.first_time_us / 1000);
    expect(g.spans.map((s) => [s.name, s.endMs !== null])).toEqual(cpp.spans);
    for (const s of g.spans) if (s.endMs !== null) expect(s.endMs).toBeGreaterThan(s.startMs);
    // views open on the peak: a snapshot at the trace's most live bytes
    const p = job.processes[0];
    expect(p.snapshots[g.peakSnapshot!].live.bytes).toBe(cpp.peak_allocated_bytes);
    // the series starts where recording did: the weights alone
    const first = job.processes[0].snapshots[0];
    expect(first.live.bytes).toBe(cpp.before_recording_bytes);
  });

  it("snapshots at the end of each iteration (the recurring record_function span): live bytes after every step equal the simulation's", async () => {
    const want = JSON.parse(readFileSync(join(ROOT, 'torch', 'expected.json'), 'utf8')) as {
      device0_after_step: { time_us: number; allocated: number }[];
    };
    const p = (await loadJob([file('torch/snapshot-p4.pickle')])).processes[0];
    const replayed = p.snapshots.filter((s) => s.trigger === 'interval');
    for (const step of want.device0_after_step) {
      const before = replayed.filter((s) => s.context!.timeRealMs <= step.time_us / 1000);
      expect(before[before.length - 1].live.bytes).toBe(step.allocated);
    }
    // one snapshot per step end, the blocks live at the start, the oom's and the peak's, the recorded state
    expect(p.snapshots.length).toBeLessThanOrEqual(want.device0_after_step.length + 4);
  });

  it('one step (record_function spans that do not recur): snapshots at its start, its peak and the recorded state', async () => {
    const p = (await loadJob([file(`torch/${cpp.file}`)])).processes[0];
    // what the step did, whatever the entries inside it
    expect(p.snapshots.map((s) => s.live.bytes)).toEqual([
      cpp.before_recording_bytes,
      cpp.peak_allocated_bytes,
      cpp.allocated_end,
    ]);
  });

  it('the bare segment list of torch.cuda.memory_snapshot() is read: its state per device, with a note', async () => {
    const job = await loadJob([file(`torch/${torch.list.file}`)]);
    expect(job.processes.map((p) => [p.prefix, p.gpu!.reservedBytes, p.snapshots[0].live.bytes])).toEqual(
      torch.devices.map((d) => [`cuda:${d.device}`, d.reserved_bytes, d.allocated_bytes + d.pending_free_bytes]),
    );
    expect(job.warnings.some((w) => /bare segment list/.test(w.message))).toBe(true);
  });

  it('S3: the oom at time_us 1e20 keeps its entry without a date; summary figures and the other file stand', async () => {
    const job = await loadJob([file(`torch/${torch.bounds.oom_time.file}`), file('torch/snapshot-p4.pickle')]);
    expect(job.processes.length).toBe(4);
    expect(job.processes[0].gpu!.ooms.map((o) => o.timeMs)).toEqual([null]);
    expect(job.warnings.some((w) => /ran out of memory \(its time is unusable\)/.test(w.message))).toBe(true);
  });

  it('S11: snapshot.pickle.gz is read through the bounded decompressing reader', async () => {
    const raw = new Uint8Array(readFileSync(join(ROOT, 'torch', 'snapshot-p4.pickle')));
    const gz = new Uint8Array(gzipSync(raw));
    const job = await loadJob([
      { path: 'run/snapshot.pickle.gz', size: gz.length, mtimeMs: null, read: async (o, l) => gz.subarray(o, o + l) },
    ]);
    expect(job.processes.map((p) => p.gpu!.reservedBytes)).toEqual(torch.devices.map((d) => d.reserved_bytes));
    // a gzip bomb stops at the reader's bound with the limit named
    const head = new Uint8Array(64 * 1024 * 1024);
    head.set([0x80, 0x04]);
    const bomb = new Uint8Array(gzipSync(head));
    const w = (
      await loadJob([
        { path: 'bomb.pickle.gz', size: bomb.length, mtimeMs: null, read: async (o, l) => bomb.subarray(o, o + l) },
      ])
    ).warnings;
    expect(w.filter((x) => x.file === 'bomb.pickle.gz').map((x) => x.message)).toEqual([
      expect.stringMatching(
        /^stopped decompressing \(gzip\) at the limit of \d+ bytes .*\(at most 256× the compressed size/,
      ),
    ]);
  });

  it("S1: the memo-reference bomb is refused at the shared segment's offset; the snapshot beside it loads", async () => {
    const { bytes, segmentAt } = memoBomb(1000);
    const t0 = performance.now();
    const job = await loadJob([
      { path: 'bomb.pickle', size: bytes.length, mtimeMs: null, read: async (o, l) => bytes.subarray(o, o + l) },
      file('torch/snapshot-p4.pickle'),
    ]);
    expect(performance.now() - t0).toBeLessThan(10_000);
    const w = job.warnings.find((x) => x.file === 'bomb.pickle')!;
    expect([w.byteOffset, /memo-reference bomb/.test(w.message)]).toEqual([segmentAt, true]);
    expect(job.processes.map((p) => p.prefix)).toEqual(['cuda:0', 'cuda:1']);
  });

  it('S2: snapshots are read in the reader worker: the same model; a flood that passes the bounds dies there alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'heaplens-torch-'));
    const at = (name: string, b: Uint8Array) => {
      writeFileSync(join(dir, name), b);
      return nodeInputFile(join(dir, name), name, b.length, null);
    };
    const p4 = at('snapshot-p4.pickle', new Uint8Array(readFileSync(join(ROOT, 'torch', 'snapshot-p4.pickle'))));
    // 1.5 M empty dicts appended to a list (~300 MB of Maps, under the unpickler's 1 GiB estimate): over a 64 MB heap
    const flood = at(
      'flood.pickle',
      new Ops()
        .op(OP.LIST)
        .times(1_500_000, (o) => o.op(OP.DICT, OP.APPEND))
        .op(OP.STOP)
        .bytes(),
    );
    const pool = createDumpPool({ size: 1, resourceLimits: { maxOldGenerationSizeMb: 64 } });
    const kinds: (DumpTask['kind'] | undefined)[] = [];
    try {
      const job = await loadJob([p4, flood], {
        runDump: (task, onBytes, signal) => {
          kinds.push(task.kind);
          return pool.run(task, onBytes, signal);
        },
      });
      expect(kinds).toEqual(['torch-snapshot', 'torch-snapshot']);
      const here = await loadJob([file('torch/snapshot-p4.pickle')]);
      expect(job.processes.map((p) => [p.gpu, p.snapshots.map((s) => s.live.bytes)])).toEqual(
        here.processes.map((p) => [p.gpu, p.snapshots.map((s) => s.live.bytes)]),
      );
      expect(job.warnings.filter((w) => w.file === 'flood.pickle').map((w) => w.message)).toEqual([
        expect.stringMatching(/reaching memory limit: JS heap out of memory/),
      ]);
    } finally {
      pool.close();
    }
  });
});

describe('memleak captures as the model', () => {
  const want = JSON.parse(readFileSync(join(ROOT, 'ebpf', 'expected.json'), 'utf8')) as {
    leak_step: { bytes: number; blocks: number };
    keep_aligned: { bytes: number; blocks: number };
  };

  it('S2: memleak logs are read in the reader worker, as snapshots are: the same model', async () => {
    const pool = createDumpPool({ size: 1 });
    const kinds: (DumpTask['kind'] | undefined)[] = [];
    const logs = ['ebpf/memleak.txt', 'ebpf/memleak.bcc.txt', 'ebpf/memleak.libbpf.txt'];
    try {
      const at = (rel: string) => nodeInputFile(join(ROOT, rel), rel, readFileSync(join(ROOT, rel)).length, null);
      const job = await loadJob(logs.map(at), {
        runDump: (task, onBytes, signal) => {
          kinds.push(task.kind);
          return pool.run(task, onBytes, signal);
        },
      });
      expect(kinds).toEqual(['memleak', 'memleak', 'memleak']);
      const here = await loadJob(logs.map((rel) => file(rel)));
      const shape = (ps: ProcessSeries[]) =>
        ps.map((p) => [p.pid, p.snapshots.map((s) => [s.live.bytes, s.live.objects])]);
      expect(shape(job.processes)).toEqual(shape(here.processes));
      // the workload's own counters: leak_step's bytes in the last report of memleak.bt's log
      expect(job.processes[0].snapshots.at(-1)!.live.bytes).toBeGreaterThanOrEqual(want.leak_step.bytes);
    } finally {
      pool.close();
    }
  });

  it('memleak.bt on a real process: a snapshot per report on its wall clock, frames named as bcc names them', async () => {
    const job = await loadJob([file('ebpf/memleak.txt')]);
    const p = job.processes[0];
    const text = readFileSync(join(ROOT, 'ebpf', 'memleak.txt'), 'utf8');
    const pid = Number(/^# pid: (\d+)/m.exec(text)![1]);
    expect(p.pid).toBe(pid);
    expect(p.snapshots.length).toBe((text.match(/Top 10 stacks/g) ?? []).length);
    const leaves = byLeaf(p);
    const at = (fn: string) =>
      Object.entries(leaves)
        .filter(([k]) => k.startsWith(fn + '+'))
        .reduce((a, [, v]) => ({ bytes: a.bytes + v.bytes, blocks: a.blocks + v.blocks }), { bytes: 0, blocks: 0 });
    expect(at('leak_step')).toEqual(want.leak_step);
    expect(at('keep_aligned')).toEqual(want.keep_aligned);
    // the # date line and the µs stamps: reports a second apart on the wall clock
    const t = p.snapshots.map((s) => s.context!.timeRealMs);
    for (let k = 1; k < t.length; k++) expect(Math.abs(t[k] - t[k - 1] - 1000)).toBeLessThan(50);
    expect(new Date(t[0]).toISOString().slice(0, 10)).toBe(/^# date: (\S+)/m.exec(text)![1]);
  });

  it('a bcc report without a date is placed on the mtime day; frames that were never named keep their address', async () => {
    const text =
      'Attaching to pid 9, Ctrl+C to quit.\n[10:00:01] Top 10 stacks with outstanding allocations:\n\t64 bytes in 1 allocations from stack\n\t\t0x0000000000401136\t[unknown] [a.out]\n\t\t0x0000000000401200\tmain+0x10 [a.out]\n';
    const b = new TextEncoder().encode(text);
    const mtime = Date.parse('2026-03-04T10:00:02Z');
    const job = await loadJob([
      { path: 'x/memleak.log', size: b.length, mtimeMs: mtime, read: async (o, l) => b.subarray(o, o + l) },
    ]);
    const p = job.processes[0];
    expect(p.snapshots[0].context!.timeRealMs).toBe(Date.parse('2026-03-04T10:00:01Z'));
    const frames = stackFrames(p.stacks, p.snapshots[0].stackIds[0]).map((a) => p.addresses.hex[a]);
    expect(frames[0]).toBe('0x401136');
    expect(p.pythonFrames!.frames.get(frames[1])).toMatchObject({ function: 'main+0x10 [a.out]', native: true });
    expect(job.warnings.some((w) => /copy \/proc\/9\/maps beside the file as 9\.maps/.test(w.message))).toBe(true);
  });
});
