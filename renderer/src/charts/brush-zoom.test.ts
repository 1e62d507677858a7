import { describe, expect, it } from 'vitest';
import { brushDomain, MIN_BRUSH_PX } from './brush-zoom.ts';

// a plot from px 62 to 462 over dumps #0 … #40: 10 px a dump
const plot = { left: 62, right: 462 };
const invert = (px: number): number => (px - 62) / 10;

describe('brush-zoom', () => {
  it('zooms to the axis values the drag covered, in either direction', () => {
    expect(brushDomain(invert, 162, 262, plot, 1)).toEqual([10, 20]);
    expect(brushDomain(invert, 262, 162, plot, 1)).toEqual([10, 20]);
  });

  it('clamps a drag that leaves the plot to its ends', () => {
    expect(brushDomain(invert, 10, 112, plot, 1)).toEqual([0, 5]);
    expect(brushDomain(invert, 412, 900, plot, 1)).toEqual([35, 40]);
  });

  it('widens a brush narrower than the least span about its middle', () => {
    // 8 px = 0.8 of a dump on a seq axis, widened to one dump around #10.4
    expect(brushDomain(invert, 162, 170, plot, 1)).toEqual([9.9, 10.9].map((v) => expect.closeTo(v, 9)) as never);
  });

  it('a click (less than the least drag) is not a brush', () => {
    expect(brushDomain(invert, 162, 162 + MIN_BRUSH_PX - 1, plot, 1)).toBeNull();
    expect(brushDomain(invert, 500, 600, plot, 1)).toBeNull();
  });
});
