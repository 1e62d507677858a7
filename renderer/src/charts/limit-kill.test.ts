import { describe, expect, it } from 'vitest';
import { killLabelY } from './limit-kill.ts';

// A plot from y 26 (top) to 100 (bottom); the label is 10 px text: 9 px above its baseline, 3 px below.
const box = { left: 62, right: 500, top: 26, bottom: 100 };

describe('the kill label and the limit line', () => {
  it('keeps its place when the limit line is clear of it', () => {
    expect(killLabelY(box, 'top', null)).toBe(35);
    expect(killLabelY(box, 'top', 60)).toBe(35);
    expect(killLabelY(box, 'bottom', null)).toBe(96);
    expect(killLabelY(box, 'bottom', 40)).toBe(96);
  });

  it('moves off a limit line that would run through it: below it at the top, above it at the bottom', () => {
    // the line at 30 crosses the text 26…38: the baseline goes to 30 + 9 + 3 = 42 (the text 33…45)
    expect(killLabelY(box, 'top', 30)).toBe(42);
    expect(killLabelY(box, 'top', 38)).toBe(50);
    // at the bottom, the line at 95 crosses the text 87…99: the baseline goes to 95 − 3 − 3 = 89 (the text 80…92)
    expect(killLabelY(box, 'bottom', 95)).toBe(89);
  });
});
