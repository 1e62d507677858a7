// How the app names a snapshot: its seq, else its place; massif's peak marked as such (issue 45 item 3).
import { describe, expect, it } from 'vitest';
import { dumpTrigger, formatValue, snapLabel } from './format.ts';

describe('snapLabel', () => {
  it("names a snapshot by its seq, massif's peak marked, a treeless or detailed one not", () => {
    expect(snapLabel({ seq: 28, index: 28, massifTree: 'peak' })).toBe('#28 (peak)');
    expect(snapLabel({ seq: 88, index: 88, massifTree: 'detailed' })).toBe('#88');
    expect(snapLabel({ seq: null, index: 2 })).toBe('dump 3');
  });
});

describe('dumpTrigger', () => {
  it('names what made a dump as recorded, an exit dump after teardown as such', () => {
    // core/model/dump-trigger.ts dumpTriggerLabel: the capture's rule over the file name's letter
    expect(dumpTrigger({ trigger: 'rss-step' })).toBe('rss-step');
    expect(dumpTrigger({ trigger: 'cgroup-fraction 0.9' })).toBe('cgroup-fraction 0.9');
    expect(dumpTrigger({ trigger: 'interval' })).toBe('interval');
    expect(dumpTrigger({ trigger: 'final', afterTeardown: true })).toBe('final, exit after teardown');
    expect(dumpTrigger({ trigger: 'unknown' })).toBe('trigger not recorded');
  });
});

describe('formatValue', () => {
  it('weighs bytes and counts objects', () => {
    expect(formatValue(3 * 1024 * 1024, 'bytes')).toBe('3.00 MiB');
    expect(formatValue(12345, 'objects')).toBe('12,345');
    expect(formatValue(-2048, 'objects', true)).toBe('−2,048');
    expect(formatValue(7, 'objects', true)).toBe('+7');
  });
});
