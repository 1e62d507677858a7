// core/query/group-bands.ts: the band of a group from its members' series, against figures worked by hand.
import { describe, expect, it } from 'vitest';
import { groupBand } from './group-bands.js';

describe('groupBand', () => {
  it('median, p90 and max of the members present at each point, each held from its last point', () => {
    // three members over x 0…10; c starts late (x 5) and a ends early (x 8)
    const a = { xs: [0, 4, 8], ys: [10, 20, 30] };
    const b = { xs: [0, 5, 10], ys: [1, 2, 3] };
    const c = { xs: [5, 10], ys: [100, 200] };
    const band = groupBand([a, b, c], 3); // x = 0, 5, 10
    expect(band.map((p) => p.x)).toEqual([0, 5, 10]);
    // x 0: a 10, b 1 → median 5.5, p90 1 + 0.9·9 = 9.1, max 10
    expect(band[0]).toMatchObject({ n: 2, median: 5.5, max: 10 });
    expect(band[0].p90).toBeCloseTo(9.1, 10);
    // x 5: a 20 (from x 4), b 2, c 100 → sorted 2, 20, 100: median 20, p90 at rank 1.8 = 20 + 0.8·80 = 84
    expect(band[1]).toMatchObject({ n: 3, median: 20, max: 100 });
    expect(band[1].p90).toBeCloseTo(84, 10);
    // x 10: a ended at 8 (not counted), b 3, c 200
    expect(band[2]).toMatchObject({ n: 2, median: 101.5, max: 200 });
  });

  it('is empty without points, one point when every member is at one x', () => {
    expect(groupBand([])).toEqual([]);
    expect(groupBand([{ xs: [], ys: [] }])).toEqual([]);
    expect(
      groupBand([
        { xs: [3], ys: [7] },
        { xs: [3], ys: [9] },
      ]),
    ).toEqual([{ x: 3, n: 2, median: 8, p90: 8.8, max: 9 }]);
  });
});
