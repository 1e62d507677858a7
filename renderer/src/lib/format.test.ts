// How the app names a snapshot: its seq, else its place; massif's peak marked as such (issue 45 item 3).
import { describe, expect, it } from 'vitest';
import { snapLabel } from './format.ts';

describe('snapLabel', () => {
  it("names a snapshot by its seq, massif's peak marked, a treeless or detailed one not", () => {
    expect(snapLabel({ seq: 28, index: 28, massifTree: 'peak' })).toBe('#28 (peak)');
    expect(snapLabel({ seq: 88, index: 88, massifTree: 'detailed' })).toBe('#88');
    expect(snapLabel({ seq: null, index: 2 })).toBe('dump 3');
  });
});
