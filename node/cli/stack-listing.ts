// What `top` and `diff` share around their rows (core/query/rows.ts): the options read once (-n, --json, the
// sample's value format, the granularity), each process's view and row key, the JSON of a listed stack (who, which
// stacks, then the command's figures, then its frames and folds), the stack column's text, the indented table, and
// the end: one JSON document, or the warnings after the text.

import type { Job, ProcessSeries } from '../../core/model/model.js';
import type { Frame } from '../../core/frames/describe.js';
import type { Granularity } from '../../core/frames/stack-filter.js';
import type { FoldedStack } from '../../core/frames/stack-labels.js';
import { foldsJson } from '../../core/frames/view.js';
import type { RowKey } from '../../core/query/rows.js';
import { has, intFlag, type ParsedArgs } from './args.js';
import { granularityOf, indent, printWarnings, tableColumns, viewer, type Output, type Viewer } from './common.js';
import { table } from './format.js';
import { rowKey } from './row-key.js';
import { stackText } from './stack-text.js';
import { valueFormat, type ValueFormat } from './text/values.js';

export class StackListing {
  /** -n: rows per process */
  readonly n: number;
  readonly json: boolean;
  readonly fmt: ValueFormat;
  readonly granularity: Granularity;
  private readonly processes: unknown[] = [];
  private readonly stacks: unknown[] = [];

  constructor(
    private readonly job: Job,
    private readonly args: ParsedArgs,
    private readonly io: Output,
  ) {
    this.n = intFlag(args, 'top', 20);
    this.json = has(args, 'json');
    this.fmt = valueFormat(args, job);
    this.granularity = granularityOf(args);
  }

  /** A process's stacks as the flags show them, and the key that makes them rows. */
  view(p: ProcessSeries): { view: Viewer; key: RowKey } {
    const view = viewer(p, this.args);
    return { view, key: rowKey(view, this.args) };
  }

  /** A line of the text output (nothing under --json). */
  say(line: string): void {
    if (!this.json) this.io.out(line);
  }

  addProcess(facts: object): void {
    this.processes.push(facts);
  }

  /** A listed row in the JSON: who and which stacks, the command's figures, then the shown frames and folds. */
  addStack(p: ProcessSeries, row: { stackId: number; members: number[] }, stack: FoldedStack<Frame>, figures: object) {
    this.stacks.push({
      pid: p.pid,
      process: p.key,
      stackId: row.stackId,
      ...(row.members.length > 1 ? { stackIds: row.members } : {}),
      ...figures,
      frames: stack.frames,
      ...foldsJson(stack),
    });
  }

  /** The stack column: the shown frames at the granularity, and how many stacks the row holds. */
  stackCell(stack: FoldedStack<Frame>, members: readonly number[]): string {
    return stackText(stack, 6, this.granularity) + (members.length > 1 ? ` [${members.length} stacks]` : '');
  }

  /** A process's table, indented (text only). */
  table(head: string[], rows: string[][], alignRight: boolean[], footer = ''): void {
    this.say(indent(table(head, rows, alignRight, tableColumns(this.io))) + footer + '\n');
  }

  end(): void {
    if (this.json)
      this.io.out(
        JSON.stringify({ processes: this.processes, stacks: this.stacks, warnings: this.job.warnings }, null, 2),
      );
    else printWarnings(this.job.warnings, this.io);
  }
}
