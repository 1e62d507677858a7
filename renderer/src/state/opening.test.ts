import { describe, expect, it } from 'vitest';
import { defaultStack, openingProcess } from './opening.ts';
import type { ProcessSummary, SuspectRow, SuspectsResult } from '../lib/protocol.ts';

// The second RL job of issue 22: the learner is the largest and grew the most, the OOM victim (an actor) holds
// suspect #1. Only the fields the rule reads are filled.
const proc = (index: number, first: number, last: number, killed = false): ProcessSummary =>
  ({ index, firstLiveBytes: first, lastLiveBytes: last, endedWithoutFinalDump: killed }) as ProcessSummary;
const learner = proc(0, 100 << 20, 900 << 20);
const actor = proc(1, 20 << 20, 190 << 20, true);
const evaluator = proc(2, 10 << 20, 12 << 20);

const row = (proc: number, withinNoise = false): SuspectRow =>
  ({
    label: 'append ← Ledger.record (ledger.py:18)',
    score: withinNoise ? 0 : 170 << 20,
    withinNoise,
    processCount: 1,
    members: [{ proc }],
  }) as SuspectRow;
const ranking = (rows: SuspectRow[], killed: number[] = []): SuspectsResult => ({
  rows,
  groupCount: rows.length,
  processes: killed.map((p) => ({ proc: p, killed: true, topPattern: null, evidence: [], lastComplete: 0, notes: [] })),
});

describe('the process a job opens on', () => {
  it('is the holder of suspect #1, not the largest process', () => {
    const o = openingProcess([learner, actor, evaluator], ranking([row(1)]));
    expect(o?.proc).toBe(1);
    expect(o?.reason).toMatch(/^holds suspect #1, append ← Ledger\.record \(ledger\.py:18\)/);
  });

  it('skips rows within sampling noise; then the killed process', () => {
    const o = openingProcess([learner, actor, evaluator], ranking([row(2, true)], [1]));
    expect(o).toEqual({ proc: 1, reason: 'was killed (no stack scores beyond sampling noise)' });
  });

  it('without a ranking: the killed one (no final dump), else the one that grew the most', () => {
    expect(openingProcess([learner, actor], null)?.proc).toBe(1);
    expect(openingProcess([learner, evaluator], null)).toEqual({
      proc: 0,
      reason: 'grew the most (no stack scores and none was killed)',
    });
  });

  it('never opens on a process still being read', () => {
    const pending = { ...actor, pending: { first: 0 } } as ProcessSummary;
    expect(openingProcess([learner, pending], ranking([row(1)]))?.proc).toBe(0);
    expect(openingProcess([pending], null)).toBeNull();
  });
});

describe('the stack shown while nothing is selected', () => {
  // rows ranked #1, #2, #3; each member's stack id is that process's own
  const rows = [
    { members: [{ proc: 1, stackId: 40 }] },
    {
      members: [
        { proc: 2, stackId: 7 },
        { proc: 1, stackId: 41 },
      ],
    },
    { members: [{ proc: 0, stackId: 3 }] },
  ] as SuspectRow[];
  it("is the focused process's highest row, by that process's stack id", () => {
    expect(defaultStack({ rows }, 1)).toBe(40);
    expect(defaultStack({ rows }, 2)).toBe(7);
    expect(defaultStack({ rows }, 0)).toBe(3);
  });
  it('is none for a process that holds no ranked stack', () => {
    expect(defaultStack({ rows }, 5)).toBeNull();
    expect(defaultStack({ rows: [] }, 0)).toBeNull();
  });
});
