import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runDumpTask, type DumpTaskResult } from './dump-task.js';
import { FramesReceiver, FramesSender, type FramesDelta } from './frame-delta.js';
import { mergePyFrameTables, type PyFrameTable } from '../formats/pyframes.js';
import { nodeInputFile } from '../../node/io/node-files.js';

const dir = resolve(import.meta.dirname, '../../fixtures/job/dumps');
const seqs = [0, 9, 20, 30];
const dumpPath = (seq: number) => join(dir, `job.7899.${seq}.i${seq}.heap.gz`);
const sidecarPath = (seq: number) => join(dir, `job.7899.${seq}.i${seq}.heap.pyframes`);
const input = (p: string) => nodeInputFile(p, p, statSync(p).size, null);
/** the F lines of a sidecar as written: an independent count of the frames it names */
const fLines = (seq: number) =>
  readFileSync(sidecarPath(seq), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('F '));

async function task(seq: number): Promise<DumpTaskResult> {
  const p = dumpPath(seq);
  const meta = { file: p, seq, trigger: 'interval' as const, triggerSeq: seq, mtimeMs: null };
  return runDumpTask({ file: input(p), meta, sidecar: input(sidecarPath(seq)) });
}

const tableOf = (r: DumpTaskResult): PyFrameTable => {
  const t = r.parsed?.info.sidecar?.table;
  if (!t) throw new Error('no sidecar table');
  return t;
};

/** a message as postMessage delivers it (structured clone) */
const wire = (m: { result: DumpTaskResult; delta: FramesDelta | null }) => structuredClone(m);

describe('sidecar frames sent as a per-reader delta', () => {
  it('two readers, one process, results arriving out of order: every table rebuilt equal, merged equal', async () => {
    const whole = await Promise.all(seqs.map(task));
    // reader A reads dumps 0 and 20, reader B 9 and 30; B's messages arrive first
    const [a, b] = [new FramesSender(), new FramesSender()];
    const sent = [a.take(whole[0]), b.take(whole[1]), a.take(whole[2]), b.take(whole[3])].map(wire);
    // what each reader sends first: its first table's every frame, then only F lines it has not read before
    const firstFrames = (seq: number) => new Set(fLines(seq).map((l) => l.split(' ')[1])).size;
    const newLines = (seq: number, before: number) => {
      const seen = new Set(fLines(before));
      return fLines(seq).filter((l) => !seen.has(l)).length;
    };
    expect(sent.map((m) => m.delta?.fresh.length)).toEqual([
      firstFrames(0),
      firstFrames(9),
      newLines(20, 0),
      newLines(30, 9),
    ]);
    expect(newLines(20, 0)).toBeLessThan(firstFrames(20));
    expect(sent.every((m) => tableOf(m.result).frames.size === 0)).toBe(true);
    const [ra, rb] = [new FramesReceiver(), new FramesReceiver()];
    for (const [i, r] of [
      [1, rb],
      [3, rb],
      [0, ra],
      [2, ra],
    ] as const) {
      const m = sent[i];
      if (m.delta) r.give(m.result, m.delta);
    }
    sent.forEach((m, i) => {
      expect([...tableOf(m.result).frames]).toEqual([...tableOf(whole[i]).frames]);
      expect(tableOf(m.result).frames.size).toBe(firstFrames(seqs[i]));
    });
    const merged = mergePyFrameTables(sent.map((m) => tableOf(m.result)));
    const reference = mergePyFrameTables(whole.map(tableOf));
    expect([...(merged.table?.frames ?? [])]).toEqual([...(reference.table?.frames ?? [])]);
    expect(merged.conflicts).toEqual(reference.conflicts);
    // the results handed in are left whole (the delta goes out with a copy)
    expect(tableOf(whole[0]).frames.size).toBe(firstFrames(0));
  });

  it('past its cap a reader starts over, and so does its receiver', async () => {
    const whole = await Promise.all(seqs.slice(0, 2).map(task));
    const s = new FramesSender(firstFrames0() + 1);
    const r = new FramesReceiver();
    const sent = whole.map((w) => wire(s.take(w)));
    expect(sent.map((m) => m.delta?.reset)).toEqual([false, true]);
    expect(sent[1].delta?.fresh.length).toBe(tableOf(whole[1]).frames.size);
    for (const m of sent) if (m.delta) r.give(m.result, m.delta);
    sent.forEach((m, i) => expect([...tableOf(m.result).frames]).toEqual([...tableOf(whole[i]).frames]));
  });

  it('a table that repeats the last one sent (one Map in the reader) goes as "the same", and is rebuilt equal', async () => {
    // the same sidecar read twice in one thread: its reader gives the second table the first one's Map
    const [one, again] = [await task(0), await task(0)];
    expect(tableOf(again).frames).toBe(tableOf(one).frames);
    const s = new FramesSender();
    const sent = [s.take(one), s.take(again)].map(wire);
    expect(sent.map((m) => m.delta?.same ?? false)).toEqual([false, true]);
    expect(sent[1].delta?.ids.length).toBe(0);
    const r = new FramesReceiver();
    for (const m of sent) if (m.delta) r.give(m.result, m.delta);
    const rebuilt = sent.map((m) => tableOf(m.result).frames);
    expect(rebuilt[1]).toBe(rebuilt[0]);
    expect([...rebuilt[1]]).toEqual([...tableOf(one).frames]);
    expect(rebuilt[1].size).toBe(firstFrames0());
    // merging the same frames again adds nothing and says no conflict
    const merged = mergePyFrameTables(sent.map((m) => tableOf(m.result)));
    expect([...(merged.table?.frames ?? [])]).toEqual([...tableOf(one).frames]);
    expect(merged.conflicts).toEqual([]);
  });

  it('a result without a sidecar table goes as it is', async () => {
    const p = dumpPath(0);
    const r = await runDumpTask({
      file: input(p),
      meta: { file: p, seq: 0, trigger: 'interval', triggerSeq: 0, mtimeMs: null },
    });
    const out = new FramesSender().take(r);
    expect(out.delta).toBeNull();
    expect(out.result).toBe(r);
  });
});

function firstFrames0(): number {
  return new Set(fLines(0).map((l) => l.split(' ')[1])).size;
}
