import { describe, expect, it } from 'vitest';
import { bareContext, type DumpTrigger } from '../formats/dump-context.js';
import { dumpTrigger, dumpTriggerLabel } from './dump-trigger.js';

describe('dumpTrigger', () => {
  const ctx = (trigger: DumpTrigger | null, triggerFraction: number | null = null) => ({
    ...bareContext(1_700_000_000_000, 7),
    trigger,
    triggerFraction,
  });
  it('names a memory-driven dump (an "m" file) by the rule its context recorded', () => {
    expect(dumpTrigger({ trigger: 'manual', context: ctx('rss-step') })).toBe('rss-step');
    const fraction = { trigger: 'manual' as const, context: ctx('cgroup-fraction', 0.9) };
    expect(dumpTrigger(fraction)).toBe('cgroup-fraction');
    expect(dumpTriggerLabel(fraction)).toBe('cgroup-fraction 0.9');
  });
  it("falls back to the file name's trigger without a context or without a recorded trigger", () => {
    expect(dumpTrigger({ trigger: 'interval', context: null })).toBe('interval');
    expect(dumpTrigger({ trigger: 'final' })).toBe('final');
    expect(dumpTriggerLabel({ trigger: 'manual', context: ctx(null) })).toBe('manual');
  });
});
