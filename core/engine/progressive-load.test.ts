// How often a load's progress reaches the window (progressive-load.ts progressThrottle): each post is a frame of the
// page, so a reader reporting every file is thinned to one post a PROGRESS_INTERVAL_MS, the last file's always.
import { describe, expect, it } from 'vitest';
import { PROGRESS_INTERVAL_MS, progressThrottle } from './progressive-load.js';

describe('progress posts', () => {
  it('one a second at most while files are read (the first at once), and the last file always', () => {
    let t = 0;
    const due = progressThrottle(PROGRESS_INTERVAL_MS, () => t);
    const posted: number[] = [];
    // a file read every 50 ms for 5 s, the last one at 5 s
    for (t = 0; t <= 5000; t += 50) if (due(t === 5000)) posted.push(t);
    expect(posted).toEqual([0, 1000, 2000, 3000, 4000, 5000]);
  });

  it('the last post is not held back by one just before it', () => {
    let t = 0;
    const due = progressThrottle(1000, () => t);
    expect(due(false)).toBe(true);
    t = 10;
    expect(due(false)).toBe(false);
    expect(due(true)).toBe(true);
  });
});
