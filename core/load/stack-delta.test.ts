import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalStacks, SerialMap, StackReceiver, StackSender } from './stack-delta.js';
import { mergeDumpTask, runDumpTask, runDumpTaskHere, type DumpTaskResult } from './dump-task.js';
import { createDumpPool, serveDumpTasks, type FromDumpWorker, type ToDumpWorker } from './dump-pool.js';
import type { InputFile } from '../formats/input-file.js';
import { ProcessBuilder } from '../model/process-builder.js';
import { collectInputFiles } from '../../node/io/node-files.js';
import { nodeInflater } from '../../node/io/gunzip.js';

/** A result of stacks given as (serial, frame words); `leftOut`: the indexes sent without their words. */
function result(stacks: [number, number[]][], leftOut: number[] = []): DumpTaskResult {
  const n = stacks.length;
  const offsets = new Uint32Array(n + 1);
  const words: number[] = [];
  const out = new Uint8Array(n);
  stacks.forEach(([, w], k) => {
    if (leftOut.includes(k)) out[k] = 1;
    else words.push(...w);
    offsets[k + 1] = words.length / 2;
  });
  return {
    file: 'f',
    warnings: [],
    parsed: {
      snapshot: { stackIds: Uint32Array.from(stacks, (_, k) => k) } as never,
      stackOffsets: offsets,
      stackWords: Uint32Array.from(words),
      stackHashes: Int32Array.from(stacks, ([s]) => 1000 + s),
      stackEntries: Int32Array.from(stacks, ([s]) => s),
      ...(leftOut.length > 0 ? { stackLeftOut: out } : {}),
      info: {} as never,
    },
  };
}

const found = () => ({ words: new Uint32Array(0), from: 0, to: 0, hash: 0 });
const wordsOf = (f: ReturnType<typeof found>) => Array.from(f.words.subarray(f.from, f.to));

describe('SerialMap', () => {
  it('maps serials in a window from the first one and any others in a map, exactly', () => {
    const m = new SerialMap();
    const FAST = 2 ** 30;
    const serials = [FAST + 5, FAST + 6, FAST + 5000, FAST + (1 << 22) + 7, 3, FAST + 4, 0x7fffffff];
    serials.forEach((s, i) => m.set(s, i));
    serials.forEach((s, i) => expect(m.get(s)).toBe(i));
    expect(m.get(FAST + 7)).toBe(-1);
    expect(m.get(4)).toBe(-1);
    m.set(FAST + 6, 0);
    expect(m.get(FAST + 6)).toBe(0);
  });
});

describe('stacks sent once per reader', () => {
  it('a reader leaves out only the serials of results it posted; a result it did not post sent nothing', () => {
    const sender = new StackSender();
    sender.begin();
    const first = result([
      [7, [0, 1, 0, 2]],
      [8, [0, 3]],
      [-1, [0, 9]],
    ]);
    const sent = sender.prepare(first);
    expect(sent).toEqual({ serials: [7, 8], words: 6 });
    // not committed yet (the post has not happened): nothing may be left out
    expect(sender.has(7)).toBe(false);
    sender.commit(sent as NonNullable<typeof sent>);
    expect([sender.has(7), sender.has(8), sender.has(9)]).toEqual([true, true, false]);
    // a task whose result was never posted (it failed): prepared, not committed
    sender.begin();
    sender.prepare(result([[9, [0, 4]]]));
    expect(sender.has(9)).toBe(false);
  });

  it('the pool puts back the words of the stacks a result left out, from what the reader sent before', () => {
    const rx = new StackReceiver();
    const a = result([
      [7, [0, 1, 0, 2]],
      [8, [0, 3]],
    ]);
    rx.give(a);
    // nothing left out: no mirror needed by this one
    expect(a.parsed?.mirror).toBeUndefined();
    const b = result(
      [
        [8, [0, 3]],
        [9, [5, 6, 7, 8]],
        [7, [0, 1, 0, 2]],
      ],
      [0, 2],
    );
    rx.give(b);
    const f = found();
    expect(b.parsed?.mirror?.find(7, f)).toBe(true);
    expect([wordsOf(f), f.hash]).toEqual([[0, 1, 0, 2], 1007]);
    expect(b.parsed?.mirror?.find(9, f)).toBe(true);
    expect(wordsOf(f)).toEqual([5, 6, 7, 8]);
    expect(b.parsed?.mirror?.find(10, f)).toBe(false);
  });

  it('past its bound the reader forgets what it sent; results that came before keep their words until merged', () => {
    const sender = new StackSender(12);
    const rx = new StackReceiver();
    /** one task: its stacks, those the reader has sent before left out; posted (received, then committed) */
    const post = (stacks: [number, number[]][]) => {
      sender.begin();
      const r = result(
        stacks,
        stacks.flatMap(([s], k) => (sender.has(s) ? [k] : [])),
      );
      const sent = sender.prepare(r);
      rx.give(r);
      if (sent) sender.commit(sent);
      return r;
    };
    const f = found();
    post([
      [1, [0, 1, 0, 2]],
      [2, [0, 3, 0, 4]],
    ]); // 8 words sent
    const before = post([
      [1, [0, 1, 0, 2]],
      [3, [0, 5, 0, 6]],
    ]); // 1 left out; 12 words sent: the bound
    expect(before.parsed?.stackLeftOut).toEqual(Uint8Array.from([1, 0]));
    const reset = post([[1, [0, 1, 0, 2]]]); // the reader forgot: 1 is sent again, and the result says so
    expect(reset.parsed?.stacksReset).toBe(true);
    expect(reset.parsed?.stackLeftOut).toBeUndefined();
    // the result that came before the reset still finds what it left out (it is merged later, in file order)
    expect(before.parsed?.mirror?.find(1, f)).toBe(true);
    expect(wordsOf(f)).toEqual([0, 1, 0, 2]);
    const after = post([
      [1, [0, 1, 0, 2]],
      [2, [0, 3, 0, 4]],
    ]);
    expect(after.parsed?.stacksReset).toBeUndefined();
    expect(after.parsed?.stackLeftOut).toEqual(Uint8Array.from([1, 0]));
    expect(after.parsed?.mirror).not.toBe(before.parsed?.mirror);
    expect(after.parsed?.mirror?.find(1, f)).toBe(true);
    // the new mirror holds only what was sent since the reset
    expect(after.parsed?.mirror?.find(3, f)).toBe(false);
  });

  it('a merge that meets a left-out stack its reader never sent stops with a message naming both', () => {
    const b = result([[42, [0, 1]]], [0]);
    new StackReceiver().give(b);
    b.parsed!.reader = 3;
    expect(() => mergeDumpTask(new ProcessBuilder(), b.parsed as NonNullable<DumpTaskResult['parsed']>)).toThrow(
      /reader 3 left out stack serial 42 it never sent/,
    );
  });
});

/** The first dumps of one process of the job fixture, in their order. */
const files = (await collectInputFiles([join(import.meta.dirname, '..', '..', 'fixtures', 'job', 'dumps')]))
  .filter((f) => /job\.7899\.\d+\.i\d+\.heap\.gz$/.test(f.path))
  .sort((a, b) => Number(/\.(\d+)\.i/.exec(a.path)?.[1]) - Number(/\.(\d+)\.i/.exec(b.path)?.[1]))
  .slice(0, 5);
const task = (file: InputFile) => ({
  file,
  meta: { file: file.path, seq: null, trigger: 'unknown' as const, triggerSeq: null, mtimeMs: null },
});
const parsedOf = (r: DumpTaskResult) => r.parsed as NonNullable<DumpTaskResult['parsed']>;
const leftOutShare = (r: DumpTaskResult) => {
  const p = parsedOf(r);
  return p.stackLeftOut ? p.stackLeftOut.reduce((a, b) => a + b, 0) / p.stackHashes.length : 0;
};

describe('stacks sent once, on real dumps', () => {
  it('tasks read in the merging thread leave out what its earlier tasks sent, also when they overlap', async () => {
    expect(files.length).toBe(5);
    const serial = new ProcessBuilder();
    for (const f of files) mergeDumpTask(serial, parsedOf(await runDumpTask(task(f), { inflate: nodeInflater })));
    // overlapping (as loadJob runs several at once), then one after another
    for (const overlap of [true, false]) {
      const here = new ProcessBuilder();
      const results = overlap
        ? await Promise.all(files.map((f) => runDumpTaskHere(task(f), { inflate: nodeInflater })))
        : [];
      if (!overlap) for (const f of files) results.push(await runDumpTaskHere(task(f), { inflate: nodeInflater }));
      for (const r of results) mergeDumpTask(here, parsedOf(r));
      // the first loop's tasks sent these stacks already: every later one leaves most of them out
      if (!overlap) for (const r of results) expect(leftOutShare(r)).toBeGreaterThan(0.5);
      expect(here.stacks).toEqual(serial.stacks);
      expect(here.addresses.hex).toEqual(serial.addresses.hex);
      expect(here.snapshots).toEqual(serial.snapshots);
    }
  });

  it('the merging thread keeps sent stacks up to its bound, then sends a new stack’s words every time', () => {
    const local = new LocalStacks(4);
    local.keep(
      result([
        [1, [0, 1, 0, 2]],
        [2, [0, 3, 0, 4]],
      ]),
    );
    expect([local.has(1), local.has(2)]).toEqual([true, false]);
  });

  it('from a process’s second dump on, a reader sends almost no stack words, and the merge is the in-thread one', async () => {
    // one worker in this thread, its messages delivered in order as a channel does
    const pool = createDumpPool<InputFile>({
      size: 1,
      inflate: nodeInflater,
      locate: (f) => f,
      spawn(message: (m: FromDumpWorker) => void) {
        let toWorker: ((m: ToDumpWorker<unknown>) => void) | null = null;
        serveDumpTasks<InputFile>(
          {
            post: (m) => void Promise.resolve().then(() => message(m)),
            onMessage: (h) => (toWorker = h as (m: ToDumpWorker<unknown>) => void),
          },
          (m) => m.file,
          nodeInflater,
        );
        return {
          post: (m: unknown) => void Promise.resolve().then(() => toWorker?.(m as ToDumpWorker<unknown>)),
          terminate: () => undefined,
        };
      },
    });
    const pooled = new ProcessBuilder();
    const serial = new ProcessBuilder();
    const leftOut: number[] = [];
    for (const f of files) {
      const r = await pool.run(task(f), () => undefined);
      const p = r.parsed as NonNullable<DumpTaskResult['parsed']>;
      leftOut.push(leftOutShare(r));
      mergeDumpTask(pooled, p);
      const alone = await runDumpTask(task(f), { inflate: nodeInflater });
      mergeDumpTask(serial, alone.parsed as NonNullable<DumpTaskResult['parsed']>);
    }
    pool.close();
    expect(leftOut[0]).toBe(0);
    for (const share of leftOut.slice(1)) expect(share).toBeGreaterThan(0.5);
    expect(pooled.stacks).toEqual(serial.stacks);
    expect(pooled.addresses.hex).toEqual(serial.addresses.hex);
    expect(pooled.snapshots).toEqual(serial.snapshots);
  });
});
