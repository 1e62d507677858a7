import { describe, expect, it } from 'vitest';
import { parsePyFrames } from './pyframes.js';
import { parseDumpContext } from './dump-context.js';
import { checkDumpContext } from './dump-context-shape.js';

// A context read back from JSON (a report's payload, a dataset's context_json) keeps what the `C` lines said.
describe('checkDumpContext', () => {
  const table = [
    'PYFRAMES/1 pid=2 python=-',
    'C context 1',
    'C time_real_ns 1796118337741721536',
    'C pid 2',
    'C nspid 8928,2',
    'C pid_ns 4026532845',
    'C boot_id 6f1c8f0e-3b3a-4c55-9e0e-2f6d1b7a9c01',
    'C hostname node-b',
    'END 0',
    '',
  ].join('\n');
  const ctx = parseDumpContext(parsePyFrames(table)!.contextRecords!, { pids: [2] }).context!;
  const json = (over: Record<string, unknown>): unknown => ({ ...JSON.parse(JSON.stringify(ctx)), ...over });

  it('the pids by namespace, the pid namespace and the boot id survive JSON', () => {
    expect(checkDumpContext(json({}), 'c', 1796118337741 + 1000)).toEqual(ctx);
    // older payloads, without them
    const old = json({});
    for (const k of ['nsPids', 'pidNamespace', 'bootId']) delete (old as Record<string, unknown>)[k];
    expect(checkDumpContext(old, 'c', 1796118337741 + 1000)).toMatchObject({
      nsPids: null,
      pidNamespace: null,
      bootId: null,
    });
  });

  it('damaged ones are refused with the field named', () => {
    expect(() => checkDumpContext(json({ nsPids: [8928, 3] }), 'c', 1796118337741 + 1000)).toThrow(
      /c\.nsPids: does not end in the process's pid 2/,
    );
    expect(() => checkDumpContext(json({ nsPids: [-1, 2] }), 'c', 1796118337741 + 1000)).toThrow(/c\.nsPids\[0\]/);
    expect(() => checkDumpContext(json({ bootId: '\u001b[31m' }), 'c', 1796118337741 + 1000)).toThrow(
      /c\.bootId: not a boot id/,
    );
  });
});
