import { describe, expect, it } from 'vitest';
import { LatestAsk } from './latest-ask.ts';

type Ask = { key: string; n: number };

/** A scheduler with a hand-driven clock and timers, and requests the test answers when it likes. */
function harness(throttled = true, soonWhole?: (ms: number) => boolean) {
  let t = 0;
  const timers: { at: number; f: () => void; live: boolean }[] = [];
  const sent: { ask: Ask; answer: (r: string) => void }[] = [];
  const applied: string[] = [];
  const asker = new LatestAsk<Ask, string>({
    send: (ask) => new Promise<string>((resolve) => sent.push({ ask, answer: resolve })),
    apply: (r) => applied.push(r),
    fail: (e) => {
      throw e;
    },
    throttled: () => throttled,
    share: 3,
    ...(soonWhole ? { soonWhole } : {}),
    now: () => t,
    setTimer: (f, ms) => {
      const timer = { at: t + ms, f, live: true };
      timers.push(timer);
      return timer;
    },
    clearTimer: (x) => {
      (x as { live: boolean }).live = false;
    },
  });
  const settle = () => new Promise((r) => setTimeout(r, 0));
  /** answers request k (in send order) after `ms` of clock, then lets its callbacks run */
  const answer = async (k: number, ms: number, r = `${sent[k].ask.key}#${sent[k].ask.n}`) => {
    t += ms;
    sent[k].answer(r);
    await settle();
  };
  const advance = (ms: number) => {
    t += ms;
    for (const x of timers)
      if (x.live && x.at <= t) {
        x.live = false;
        x.f();
      }
  };
  return { asker, sent, applied, answer, advance };
}

describe('LatestAsk: one request at a time, the latest wish next', () => {
  it('serves the latest ask after the one in flight, not every ask between', async () => {
    const h = harness(false);
    h.asker.ask({ key: 'a', n: 1 });
    h.asker.ask({ key: 'b', n: 2 });
    h.asker.ask({ key: 'c', n: 3 });
    expect(h.sent.map((s) => s.ask.n)).toEqual([1]);
    await h.answer(0, 10);
    // a's answer is dropped (c is the latest wish); b was superseded by c before it was sent
    expect(h.applied).toEqual([]);
    expect(h.sent.map((s) => s.ask.n)).toEqual([1, 3]);
    await h.answer(1, 10);
    expect(h.applied).toEqual(['c#3']);
  });

  it('holds an update of the same key until share × the last request time has passed', async () => {
    const h = harness(true);
    h.asker.ask({ key: 'k', n: 1 });
    await h.answer(0, 100); // took 100 ms, ended at t = 100
    h.asker.ask({ key: 'k', n: 2 }); // an update at t = 100: waits until t = 100 + 3 × 100
    expect(h.sent).toHaveLength(1);
    h.advance(299);
    expect(h.sent).toHaveLength(1);
    h.advance(1);
    expect(h.sent.map((s) => s.ask.n)).toEqual([1, 2]);
    await h.answer(1, 5);
    expect(h.applied).toEqual(['k#1', 'k#2']);
  });

  it('asks a new key at once, even while an update waits, and never serves the waiting update after it', async () => {
    // the loading job's ranking (limit 16) waits its turn; the load ends and the full ranking (another key) is
    // asked: the full one is sent at once, and the waiting update must not come back after it (it would put the
    // loading ranking on screen over the finished job's)
    const h = harness(true);
    h.asker.ask({ key: 'loading', n: 1 });
    await h.answer(0, 100);
    h.asker.ask({ key: 'loading', n: 2 }); // waits (timer)
    h.asker.ask({ key: 'done', n: 3 });
    expect(h.sent.map((s) => s.ask.n)).toEqual([1, 3]);
    await h.answer(1, 50);
    h.advance(10_000);
    await new Promise((r) => setTimeout(r, 0));
    expect(h.sent.map((s) => s.ask.n)).toEqual([1, 3]);
    expect(h.applied).toEqual(['loading#1', 'done#3']);
  });

  it('a new key while one is in flight and an update waits: only the new key follows', async () => {
    const h = harness(true);
    h.asker.ask({ key: 'loading', n: 1 });
    h.asker.ask({ key: 'loading', n: 2 }); // queued behind the one in flight
    h.asker.ask({ key: 'done', n: 3 }); // supersedes it
    await h.answer(0, 100);
    expect(h.applied).toEqual([]); // n 1's key is no longer the latest
    expect(h.sent.map((s) => s.ask.n)).toEqual([1, 3]);
    await h.answer(1, 10);
    expect(h.applied).toEqual(['done#3']);
  });

  it('drops an update when the job will be whole before it pays for itself; asks it while the end is further', async () => {
    // the job's time left, as the page estimates it from the bytes read; the asker asks against share × last time
    let left = 10_000;
    const asked: number[] = [];
    const h = harness(true, (ms) => {
      asked.push(ms);
      return left < ms;
    });
    h.asker.ask({ key: 'loading', n: 1 }); // the first ranking of a key is never dropped
    await h.answer(0, 100);
    h.asker.ask({ key: 'loading', n: 2 });
    h.advance(300);
    expect(h.sent.map((s) => s.ask.n)).toEqual([1, 2]); // 10 s left: worth it
    expect(asked).toEqual([300]);
    await h.answer(1, 100);
    left = 250; // the load ends in 250 ms, sooner than 3 × 100
    h.asker.ask({ key: 'loading', n: 3 });
    h.advance(10_000);
    await new Promise((r) => setTimeout(r, 0));
    expect(h.sent.map((s) => s.ask.n)).toEqual([1, 2]);
    // the full job's ask (a new key) is sent at once, and its answer shown
    h.asker.ask({ key: 'done', n: 4 });
    expect(h.sent.map((s) => s.ask.n)).toEqual([1, 2, 4]);
    await h.answer(2, 10);
    expect(h.applied).toEqual(['loading#1', 'loading#2', 'done#4']);
  });

  it('does not hold updates when the job is not loading', async () => {
    const h = harness(false);
    h.asker.ask({ key: 'k', n: 1 });
    await h.answer(0, 100);
    h.asker.ask({ key: 'k', n: 2 });
    expect(h.sent.map((s) => s.ask.n)).toEqual([1, 2]);
  });
});
