import { describe, expect, it } from 'vitest';
import { nextTask, taskQueue } from './task-queue.ts';

describe('taskQueue', () => {
  // a hand-run scheduler: each scheduled task runs when the test says
  const tasks = (): { schedule: (fn: () => void) => void; run: () => void; pending: () => number } => {
    const q: (() => void)[] = [];
    return { schedule: (fn) => q.push(fn), run: () => q.shift()?.(), pending: () => q.length };
  };

  it('delivers at once while nothing waits', () => {
    const t = tasks();
    const got: number[] = [];
    const push = taskQueue<number>((x) => got.push(x), t.schedule);
    push(1, false);
    push(2, false);
    expect(got).toEqual([1, 2]);
    expect(t.pending()).toBe(0);
  });

  it('puts a later item in a task of its own, and what follows it after it, in order', () => {
    const t = tasks();
    const got: number[] = [];
    const push = taskQueue<number>((x) => got.push(x), t.schedule);
    push(1, false);
    push(2, true);
    push(3, false);
    expect(got).toEqual([1]);
    t.run();
    expect(got).toEqual([1, 2]);
    t.run();
    expect(got).toEqual([1, 2, 3]);
    expect(t.pending()).toBe(0);
    push(4, false);
    expect(got).toEqual([1, 2, 3, 4]);
  });

  it('keeps the order when an item arrives while its predecessors are being delivered', () => {
    const t = tasks();
    const got: number[] = [];
    const push = taskQueue<number>((x) => {
      got.push(x);
      if (x === 2) push(5, false);
    }, t.schedule);
    push(2, true);
    push(3, true);
    while (t.pending() > 0) t.run();
    expect(got).toEqual([2, 3, 5]);
  });

  it('nextTask runs after the current task', async () => {
    const got: string[] = [];
    await new Promise<void>((done) => {
      nextTask(() => {
        got.push('next');
        done();
      });
      got.push('now');
    });
    expect(got).toEqual(['now', 'next']);
  });
});
