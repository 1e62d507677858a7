// The pool's bookkeeping with workers that are plain objects in this thread (serveDumpTasks behind a fake
// port): which worker holds which task, in what order it reads them, and what a crash or a cancel does to
// the task it holds next. The pool on real threads is node/io/dump-pool.test.ts.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDumpPool, serveDumpTasks, type FromDumpWorker, type ToDumpWorker } from './dump-pool.js';
import { runDumpTask, type DumpTask, type DumpTaskResult } from './dump-task.js';
import { TASKS_AHEAD_PER_READER } from './load-job.js';
import type { InputFile } from '../formats/input-file.js';
import { collectInputFiles } from '../../node/io/node-files.js';
import { nodeInflater } from '../../node/io/gunzip.js';

const dumps = (await collectInputFiles([join(import.meta.dirname, '..', '..', 'fixtures', 'job', 'dumps')]))
  .filter((f) => /\.heap\.gz$/.test(f.path))
  .slice(0, 6);
const task = (file: InputFile): DumpTask => ({
  file,
  meta: { file: file.path, seq: null, trigger: 'unknown', triggerSeq: null, mtimeMs: null },
});
/**
 * A pool result with the stacks its reader left out (posted in an earlier result: stack-delta.ts) put back from the
 * pool's mirror, so it compares with an in-thread read word for word.
 */
function wordsBack(r: DumpTaskResult): DumpTaskResult {
  const p = r.parsed;
  if (!p?.stackLeftOut) return r;
  const out = p.stackLeftOut;
  const n = p.stackHashes.length;
  const offsets = new Uint32Array(n + 1);
  const words: number[] = [];
  const got = { words: new Uint32Array(0), from: 0, to: 0, hash: 0 };
  for (let k = 0; k < n; k++) {
    if (out[k] === 1) {
      if (!p.mirror?.find(p.stackEntries?.[k] ?? -1, got)) throw new Error(`stack ${k} left out and not in the mirror`);
      expect(got.hash).toBe(p.stackHashes[k]);
      words.push(...got.words.subarray(got.from, got.to));
    } else words.push(...p.stackWords.subarray(2 * p.stackOffsets[k], 2 * p.stackOffsets[k + 1]));
    offsets[k + 1] = words.length / 2;
  }
  const { stackLeftOut: _out, mirror: _mirror, stacksReset: _reset, ...rest } = p;
  return { ...r, parsed: { ...rest, stackOffsets: offsets, stackWords: Uint32Array.from(words) } };
}
/**
 * A result without what differs between two reads of one file (the typed arrays as plain arrays; the reader's
 * number, which the pool stamps on its workers' results and a read in this thread does not have).
 */
const plain = (r: DumpTaskResult) =>
  JSON.parse(
    JSON.stringify(wordsBack(r), (k, v: unknown) =>
      k === 'reader' ? undefined : ArrayBuffer.isView(v) ? Array.from(v as Uint8Array) : v,
    ),
  ) as unknown;
const later = () => new Promise((r) => setTimeout(r, 1));

/** Workers in this thread. `crashOn`: a worker that starts this file dies (its `lost` is called, it answers no more). */
function fakeHost(size: number, crashOn?: string) {
  const log: string[] = [];
  const events: string[] = [];
  // the pool's posts of tasks and its takings of answers, as they happen (`<worker> +1` / `<worker> -1`)
  const posted: string[] = [];
  let workers = 0;
  let reading = 0;
  let mostAtOnce = 0;
  const host = {
    size,
    inflate: nodeInflater,
    locate: (f: InputFile) => f,
    spawn(message: (m: FromDumpWorker) => void, lost: (why: string) => void) {
      const name = `w${++workers}`;
      let dead = false;
      let toWorker: ((m: ToDumpWorker<unknown>) => void) | null = null;
      serveDumpTasks<InputFile>(
        {
          post: (m) => {
            if ('result' in m) events.push(`${name} answers ${m.id}`);
            void later().then(() => {
              if (dead) return;
              // the pool's own count: a task it posted is held until it takes the answer
              if ('result' in m) posted.push(`${name} -1`);
              message(m);
            });
          },
          onMessage: (h) => (toWorker = h as (m: ToDumpWorker<unknown>) => void),
        },
        (m) => {
          const file = m.file;
          if (!m.path.endsWith('.pyframes')) log.push(`${name} ${file.path.split('/').pop()}`);
          if (file.path === crashOn) {
            dead = true;
            void later().then(() => lost('its reader crashed'));
          }
          return {
            ...file,
            read: async (offset: number, length: number) => {
              mostAtOnce = Math.max(mostAtOnce, ++reading);
              try {
                return await file.read(offset, length);
              } finally {
                reading--;
              }
            },
          };
        },
        nodeInflater,
      );
      return {
        post: (m: unknown) => {
          if ('id' in (m as object)) posted.push(`${name} +1`);
          return void later().then(() => {
            if (dead) return;
            const t = m as ToDumpWorker<unknown>;
            if ('id' in t) events.push(`${name} holds ${t.id}`);
            toWorker?.(t);
          });
        },
        terminate: () => {
          dead = true;
        },
        keepAlive: (on: boolean) => void events.push(`${name} keepAlive ${on}`),
      };
    },
  };
  return { host, log, events, posted, mostAtOnce: () => mostAtOnce, workers: () => workers };
}

describe('dump pool: tasks held ahead', () => {
  it('gives each worker its next tasks ahead, reads a worker’s tasks one at a time in order, and the results are the in-thread ones', async () => {
    expect(dumps.length).toBe(6);
    const fake = fakeHost(2);
    const pool = createDumpPool(fake.host);
    const got = await Promise.all(dumps.map((f) => pool.run(task(f), () => undefined)));
    pool.close();
    const want = await Promise.all(dumps.map((f) => runDumpTask(task(f), { inflate: nodeInflater })));
    expect(got.map(plain)).toEqual(want.map(plain));
    // each worker's results carry its number (whose backtrace cache their serials are of)
    expect(new Set(got.map((r) => r.parsed?.reader))).toEqual(new Set([1, 2]));
    // two workers; one file read at a time by each (never more than the two workers read at once)
    expect(fake.workers()).toBe(2);
    expect(fake.mostAtOnce()).toBeLessThanOrEqual(2);
    // the first two tasks go one to each worker, the next two one behind each
    const name = (k: number) => dumps[k].path.split('/').pop();
    expect(fake.log.slice(0, 2).sort()).toEqual([`w1 ${name(0)}`, `w2 ${name(1)}`]);
    const byWorker = (w: string) => fake.log.filter((l) => l.startsWith(w + ' ')).map((l) => l.split(' ')[1]);
    expect(byWorker('w1').slice(0, 2)).toEqual([name(0), name(2)]);
    expect(byWorker('w2').slice(0, 2)).toEqual([name(1), name(3)]);
    // the six tasks were given at once, three to each worker (the one holding fewer), before either answered
    for (const w of ['w1', 'w2']) {
      const mine = fake.events.filter((e) => e.startsWith(w + ' ') && !e.includes('keepAlive'));
      expect(mine.slice(0, 4).map((e) => e.split(' ')[1])).toEqual(['holds', 'holds', 'holds', 'answers']);
    }
  });

  it(`a worker holds at most ${TASKS_AHEAD_PER_READER} tasks; the others wait in the pool and are all read`, async () => {
    const fake = fakeHost(2);
    const pool = createDumpPool(fake.host);
    const files = Array.from({ length: 2 * TASKS_AHEAD_PER_READER + 6 }, (_, k) => dumps[k % dumps.length]);
    const got = await Promise.all(files.map((f) => pool.run(task(f), () => undefined)));
    pool.close();
    expect(got.every((r) => r.parsed !== null)).toBe(true);
    // what the pool had posted to each worker and not taken the answer of, post by post
    const most = new Map<string, number>();
    const held = new Map<string, number>();
    for (const e of fake.posted) {
      const [w, d] = e.split(' ');
      held.set(w, (held.get(w) ?? 0) + Number(d));
      most.set(w, Math.max(most.get(w) ?? 0, held.get(w) ?? 0));
    }
    expect([...most.values()]).toEqual([TASKS_AHEAD_PER_READER, TASKS_AHEAD_PER_READER]);
  });

  it('a worker that dies fails only the task it was reading; the task it held next is read by a new worker', async () => {
    const fake = fakeHost(1, dumps[0].path);
    const pool = createDumpPool(fake.host);
    const [crashed, next] = await Promise.all(dumps.slice(0, 2).map((f) => pool.run(task(f), () => undefined)));
    pool.close();
    expect(crashed.parsed).toBeNull();
    expect(crashed.warnings.map((w) => w.message)).toEqual(['could not be read: its reader crashed']);
    expect(plain(next)).toEqual(plain(await runDumpTask(task(dumps[1]), { inflate: nodeInflater })));
    const name = (k: number) => dumps[k].path.split('/').pop();
    expect(fake.log).toEqual([`w1 ${name(0)}`, `w2 ${name(1)}`]);
  });

  it('cancelling the task a worker reads keeps the one it held next: that one is read in full', async () => {
    const fake = fakeHost(1);
    const pool = createDumpPool(fake.host);
    const ac = new AbortController();
    const first = pool.run(task(dumps[0]), () => undefined, ac.signal);
    const second = pool.run(task(dumps[1]), () => undefined);
    ac.abort();
    await expect(first).rejects.toThrow();
    const r = await second;
    pool.close();
    expect(plain(r)).toEqual(plain(await runDumpTask(task(dumps[1]), { inflate: nodeInflater })));
    // the first worker was stopped with both; a second one read the kept task
    expect(fake.workers()).toBe(2);
  });

  it('warm starts every worker before the first task, idle ones not keeping the process alive; the tasks go to them', async () => {
    const fake = fakeHost(2);
    const pool = createDumpPool(fake.host);
    pool.warm();
    expect(fake.workers()).toBe(2);
    expect(fake.events).toEqual(['w1 keepAlive false', 'w2 keepAlive false']);
    pool.warm(); // already warm: no third worker
    expect(fake.workers()).toBe(2);
    const got = await Promise.all(dumps.slice(0, 4).map((f) => pool.run(task(f), () => undefined)));
    const want = await Promise.all(dumps.slice(0, 4).map((f) => runDumpTask(task(f), { inflate: nodeInflater })));
    expect(got.map(plain)).toEqual(want.map(plain));
    expect(fake.workers()).toBe(2);
    const name = (k: number) => dumps[k].path.split('/').pop();
    expect(fake.log.slice(0, 2).sort()).toEqual([`w1 ${name(0)}`, `w2 ${name(1)}`]);
    // a worker is kept alive while it has a task, and let go when it has none
    expect(fake.events).toContain('w1 keepAlive true');
    expect(fake.events.at(-1)).toMatch(/keepAlive false$/);
    pool.close();
    pool.warm(); // closed: starts none
    expect(fake.workers()).toBe(2);
  });

  it('cancelling a whole load while workers hold their next tasks starts no new worker', async () => {
    const fake = fakeHost(2);
    const pool = createDumpPool(fake.host);
    const ac = new AbortController();
    const runs = dumps.slice(0, 4).map((f) => pool.run(task(f), () => undefined, ac.signal));
    ac.abort();
    for (const r of runs) await expect(r).rejects.toThrow();
    pool.close();
    expect(fake.workers()).toBe(2);
  });
});
