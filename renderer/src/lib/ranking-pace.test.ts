// While a job loads, the ranking of the job so far is asked again only as enough more of it is read
// (ranking-pace.ts): the updates of a 1,000-process load (another 1/20 of its processes each) and of a 16-process
// one (a process each), against the asks they bring.
import { describe, expect, it } from 'vitest';
import { RANK_GROWTH, RANK_STALE_MS, rankingDue, readCount } from './ranking-pace.ts';

/** the processes read at each update (one every `everyMs`) that asks the ranking again */
function asked(updates: readonly number[], everyMs = 1000): number[] {
  let ranked: number | null = null;
  let at = 0;
  const out: number[] = [];
  updates.forEach((read, k) => {
    if (rankingDue(read, ranked, k * everyMs - at)) {
      ranked = read;
      at = k * everyMs;
      out.push(read);
    }
  });
  return out;
}

describe('the ranking of a loading job, asked again', () => {
  it('at the first update, then once the processes read have grown by half', () => {
    expect(RANK_GROWTH).toBe(1.5);
    const thousand = Array.from({ length: 20 }, (_, k) => 50 * (k + 1));
    expect(asked(thousand)).toEqual([50, 100, 150, 250, 400, 600, 900]);
    const sixteen = Array.from({ length: 16 }, (_, k) => k + 1);
    expect(asked(sixteen)).toEqual([1, 2, 3, 5, 8, 12]);
  });

  it('or RANK_STALE_MS after the last ask: the rows are not left of a fraction of the job for long', () => {
    // an update every 2 s: 600 asked at 22 s, then 800 at 30 s (8 s later) though not half as many again
    const thousand = Array.from({ length: 20 }, (_, k) => 50 * (k + 1));
    expect(RANK_STALE_MS).toBe(8000);
    expect(asked(thousand, 2000)).toEqual([50, 100, 150, 250, 400, 600, 800, 1000]);
  });

  it('an update that reads nothing more asks nothing, however long after', () => {
    expect(rankingDue(0, null, 0)).toBe(true);
    expect(rankingDue(0, 0, 1e6)).toBe(false);
    expect(rankingDue(1, 0, 0)).toBe(true);
    expect(rankingDue(7, 7, 1e6)).toBe(false);
    expect(rankingDue(8, 7, 0)).toBe(false);
    expect(rankingDue(8, 7, RANK_STALE_MS)).toBe(true);
  });

  it('counts the processes read whole: they come before the pending ones', () => {
    expect(readCount([{}, {}, { pending: { first: 0 } }, { pending: { first: 10 } }])).toBe(2);
    expect(readCount([])).toBe(0);
    expect(readCount([{ pending: { first: 0 } }])).toBe(0);
  });
});
