// Selection: which processes, which dumps (base/target, the flame graph's), which tab and view options, which
// stack or flame node is in the stack panel, and the focused process's view data fetched for them (growth,
// series, flame trees). A new job resets it through job.svelte.ts; a partial load's rollback keeps a copy of it
// there (`Job.beforePartial`), the worker's half of that rollback is its query session (core/query).

import type { Shell } from './shell.svelte.ts';
import type {
  FlameData,
  FlameShape,
  FrameInfo,
  FunctionRow,
  GrowthResult,
  ProcessSummary,
  SampleType,
  StackFilterChip,
  StackMode,
  StackSeries,
  ViewOptions,
} from '../lib/protocol.ts';
import type { StackTarget } from '../../../core/notes/schema.ts';
import { OPENING_VIEW } from '../../../core/query/provisional.ts';
import { DEFAULT_FLAME, type FlameArrangement, type Tab } from '../lib/session-map.ts';
import {
  formatBytes,
  formatCount,
  formatPct,
  formatRate,
  formatValue,
  snapLabel,
  type ValueUnit,
} from '../lib/format.ts';
import { sampleUnit } from '../../../core/model/sample-type.ts';
import { KIND_LABEL } from '../lib/colors.ts';
import type { Opening } from './opening.ts';

export type { Tab };

/** What the stack panel shows: a stack from the growth table or a node path from a flame graph. */
export interface PanelContent {
  title: string;
  /** leaf first */
  frames: (FrameInfo & { hidden: boolean; fold?: number })[];
  facts: [string, string][];
  series: number[] | null;
  /** index in `series` of the exit dump after teardown (a marked point, not the series' end), −1 when none */
  exitDump?: number;
  /** what `series` counts (the sample type's unit) */
  unit?: ValueUnit;
  /** the stack shown (growth row, timeline legend): what a stack note points at */
  stackId?: number;
  /** the function shown (a flame-graph node): what a function note points at */
  fn?: { name: string; module: string | null };
}

export class Selection {
  /** the job-wide Suspects view opens first */
  tab = $state<Tab>('suspects');
  /** selected processes (indices); the first is the focused one */
  selected = $state<number[]>([]);
  base = $state(0);
  target = $state(0);
  /** snapshot shown by the single-snapshot flame graph */
  snapshot = $state(0);
  mode = $state<StackMode>(OPENING_VIEW.mode);
  hideAllocator = $state(OPENING_VIEW.hideAllocator);
  /** what values count (pprof's sample types; alloc_* need prof_accum) */
  sample = $state<SampleType>('inuse_space');
  /** focus/ignore/hide/show chips (pprof's slicing) */
  filters = $state<StackFilterChip[]>([]);
  /** python-first: interpreter frames shown instead of their markers */
  unfold = $state(false);
  search = $state('');
  /** the flame graphs' order and start-up fold (one for the Flame and Diff tabs, kept in the session) */
  flameLayout = $state<FlameArrangement>({ ...DEFAULT_FLAME });
  /** the frame (catalog key) last selected in a flame graph or the stack panel: where Callers/callees opens */
  selectedFrame = $state<number | null>(null);
  diffMode = $state<'absolute' | 'share'>('absolute');
  widthBy = $state<'target' | 'delta'>('target');
  growth = $state.raw<GrowthResult | null>(null);
  series = $state.raw<StackSeries | null>(null);
  flame = $state.raw<FlameData | null>(null);
  diffFlame = $state.raw<FlameData | null>(null);
  panel = $state.raw<PanelContent | null>(null);
  selectedStack = $state<number | null>(null);
  /** the selected stack as a note target (set when a stack is selected; the worker computes it) */
  selectedStackTarget: StackTarget | null = null;
  /** a stack a restored session had selected, resolved once the worker answers */
  pendingSelectedStack: StackTarget | null = null;
  /** the process the job opened on and why (state/opening.ts); null once another process is focused */
  opened = $state.raw<Opening | null>(null);
  /** a process was picked by hand since the job started loading (job.svelte.ts keeps the choice) */
  pickedByHand = false;

  constructor(private readonly shell: Shell) {}

  get focused(): ProcessSummary | null {
    const s = this.shell.job.summary;
    const i = this.selected[0];
    return s && i !== undefined ? (s.processes[i] ?? null) : null;
  }

  /** index of the focused process, or -1 */
  get procIndex(): number {
    return this.selected[0] ?? -1;
  }

  /** what the views' values are: bytes, or a count of objects (an `_objects` sample type): never shown as bytes */
  get unit(): ValueUnit {
    return sampleUnit(this.sample, this.shell.job.summary?.declaredSamples ?? []);
  }

  get view(): ViewOptions {
    return {
      mode: this.mode,
      hideAllocator: this.hideAllocator,
      sample: this.sample,
      filters: this.filters.map((f) => ({ ...f })),
      unfold: this.unfold,
    };
  }

  resetBaseTarget(): void {
    // the series' end (core/model/series-end.ts): not a cut dump (frees that never happened), not an exit dump
    // after the interpreter's teardown (the objects Python freed on the way out: the leak "gone"); nor a massif
    // snapshot whose tree massif did not keep (one row of totals)
    const p = this.focused;
    let last = p?.seriesEnd ?? 0;
    while (last > 0 && p && p.snapshots[last].massifTree === 'empty') last--;
    this.base = 0;
    // a PyTorch device opens on its peak (ProcessSummary.openSnapshot), the diff running up to it
    const open = p?.openSnapshot;
    if (open !== undefined && p && open < p.snapshots.length) last = open;
    this.target = Math.max(0, last);
    this.snapshot = Math.max(0, last);
  }

  /** Focuses the process a job opens on, keeping the reason it was chosen (shown beside its name). */
  openOn(o: Opening): void {
    this.focus(o.proc, false);
    if (this.selected[0] === o.proc) this.opened = o;
  }

  focus(index: number, additive: boolean): void {
    // a process still being read has no stacks to show yet
    if (this.shell.job.summary?.processes[index]?.pending) return;
    if (additive || index !== this.opened?.proc) this.opened = null;
    if (this.shell.job.partial) this.pickedByHand = true;
    const before = this.selected[0];
    if (additive) {
      this.selected = this.selected.includes(index)
        ? this.selected.filter((i) => i !== index)
        : [...this.selected, index];
      if (this.selected.length === 0) this.selected = [index];
    } else this.selected = [index];
    if (this.selected[0] === before) return;
    this.dropProcessViews();
    this.resetBaseTarget();
  }

  /** Forgets what was shown of the selected process (growth, series, flame graphs, stack panel): it is fetched again. */
  dropProcessViews(): void {
    this.growth = null;
    this.series = null;
    this.flame = null;
    this.diffFlame = null;
    this.panel = null;
    this.selectedStack = null;
    this.selectedFrame = null;
  }

  /** The flame request's shape for the Flame and Diff tabs. */
  get flameShape(): FlameShape {
    const l = this.flameLayout;
    return { kind: l.order === 'leaf' ? 'inverted' : 'normal', startup: l.startup, siblings: l.siblings };
  }

  // -- selection → stack panel ------------------------------------------------------------------
  selectStack(stackId: number): void {
    const client = this.shell.client;
    this.selectedStack = stackId;
    this.selectedStackTarget = null;
    const p = this.procIndex;
    if (p < 0) return;
    const row = this.growth?.stacks.find((r) => r.stackId === stackId);
    void client.request({ type: 'stackTargets', proc: p, stackIds: [stackId] }).then(({ targets }) => {
      if (this.selectedStack === stackId) this.selectedStackTarget = targets[0] ?? null;
    });
    const detail = client.request({
      type: 'stack',
      proc: p,
      stackId,
      members: row?.members,
      base: this.base,
      target: this.target,
      view: this.view,
    });
    const unit = this.unit;
    const val = (n: number, signed = false): string => formatValue(n, unit, signed);
    void detail.then(({ stack }) => {
      const facts: [string, string][] = [
        [`base ${snapLabel(this.focused?.snapshots[this.base])}`, val(stack.baseBytes)],
        [`target ${snapLabel(this.focused?.snapshots[this.target])}`, val(stack.targetBytes)],
        [
          'Δ',
          `${val(stack.targetBytes - stack.baseBytes, true)} (${formatPct(stack.baseBytes > 0 ? (100 * (stack.targetBytes - stack.baseBytes)) / stack.baseBytes : stack.targetBytes > 0 ? Infinity : 0)})`,
        ],
      ];
      if (row)
        facts.push(
          ['status', row.status],
          ['steadiness', val(row.steadiness) + '/dump'],
          ['grew in', `${(row.growingFraction * 100).toFixed(0)}% of intervals`],
        );
      if (row && row.members.length > 1)
        facts.push(['stacks in this row', `${row.members.length} (same visible frames)`]);
      const v = stack.verdict;
      if (v) {
        facts.push(
          ['pattern', v.pattern + (v.note ? ` (${v.note})` : '')],
          // the row's score sums every holder; this process's share is said apart, and which is which
          [
            'Suspects row',
            `#${v.rowRank + 1} · score ${formatBytes(v.rowScore)}${v.groupProcesses > 1 ? ` (all ${v.groupProcesses} holders)` : ''}`,
          ],
        );
        if (v.groupProcesses > 1)
          facts.push([`score in pid ${this.focused?.pid ?? '?'}`, `${formatBytes(v.score)} (this process alone)`]);
        facts.push(['late rate', formatRate(v.lateRate, v.lateRatePerSecond) + (v.rateNote ? ` (${v.rateNote})` : '')]);
        if (v.sigmaBytes > 0) facts.push(['±2σ at the end', `${formatBytes(2 * v.sigmaBytes)} (sampling)`]);
        if (v.groupProcesses > 1) facts.push(['held by', `${v.groupProcesses} processes`]);
      }
      // the title leads with the first surviving frame: not an allocator frame, not a folded interpreter frame
      const leaf =
        stack.frames.find((f) => !f.hidden && f.fold === undefined) ??
        stack.frames.find((f) => !f.hidden) ??
        stack.frames[0];
      if (leaf && leaf.key >= 0 && this.selectedStack === stackId) this.selectedFrame = leaf.key;
      this.panel = {
        // named by its leaf function and call site, as the rows name it: never by our internal stack id
        title: `${leaf?.function ?? leaf?.label ?? row?.label ?? ''}${leaf?.file ? ` (${leaf.file.slice(leaf.file.lastIndexOf('/') + 1)}:${leaf.line ?? '?'})` : ''}`,
        frames: stack.frames,
        facts,
        series: stack.series,
        exitDump: stack.exitDump ?? -1,
        unit,
        stackId,
      };
    });
  }

  /** A Suspects row → that process focused, its growth table open, the stack in the panel. */
  openSuspect(proc: number, stackId: number): void {
    if (this.procIndex !== proc) this.focus(proc, false);
    this.tab = 'growth';
    this.selectStack(stackId);
  }

  /** A flame-graph node → the stack panel (its path, its bytes); `pivot`: Callers/callees opens on its frame. */
  selectNode(data: FlameData, node: number, pivot = true): void {
    const f = node > 0 ? data.frames[data.key[node]] : null;
    // the start-up fold (its own row, or the root's row holding it) unfolds; the flame toolbar folds it again
    const fold = data.startup?.find((s) => (node === 0 ? s.inRoot : s.key === data.key[node]));
    if (fold) {
      this.flameLayout = { ...this.flameLayout, startup: false };
      this.shell.status = `${fold.kind} start-up frames shown: tick "fold start-up" to fold them again`;
      return;
    }
    // a marker of folded interpreter frames expands them (python-first view; the slice bar folds them again)
    if (f?.kind === 'folded') {
      this.unfold = true;
      this.shell.status = 'interpreter frames shown: untick "show interpreter frames" to fold them again';
      return;
    }
    const facts: [string, string][] = [];
    const unit = this.unit;
    const val = (n: number, signed = false): string => formatValue(n, unit, signed);
    if (data.baseTotal) {
      const b = data.baseTotal[node];
      const t = data.total[node];
      facts.push(
        ['base', val(b)],
        ['target', val(t)],
        ['Δ', `${val(t - b, true)} (${formatPct(b > 0 ? (100 * (t - b)) / b : t > 0 ? Infinity : 0)})`],
      );
      facts.push([
        'share',
        `${((100 * b) / (data.baseGrand || 1)).toFixed(2)}% → ${((100 * t) / (data.targetGrand || 1)).toFixed(2)}%`,
      ]);
      if (b === 0 && t > 0) facts.push(['status', 'new']);
      if (t === 0 && b > 0) facts.push(['status', 'gone']);
    } else {
      facts.push(
        [
          unit === 'bytes' ? 'bytes' : 'count',
          `${val(data.total[node])} (${((100 * data.total[node]) / (data.targetGrand || 1)).toFixed(1)}%)`,
        ],
        ['objects', formatCount(data.totalObjects[node])],
        [unit === 'bytes' ? 'self bytes' : 'self', val(data.self[node])],
      );
    }
    if (f) facts.push(['kind', KIND_LABEL[f.group]]);
    const panel: PanelContent = {
      title: f ? (f.function ?? f.label) : 'all stacks',
      frames: framesOfNode(data, node),
      facts,
      series: null,
    };
    if (f) panel.fn = { name: f.function ?? f.label, module: f.module };
    this.panel = panel;
    if (f && pivot) this.selectedFrame = f.key;
  }

  /** A by-function growth row → the diff flame graph searched for it. */
  selectFunction(r: FunctionRow): void {
    this.search = r.label;
    this.tab = 'diff';
  }

  /** The node of the selected stack in a flame graph, if any. */
  highlightIn(data: FlameData | null): number | null {
    const s = this.selectedStack;
    return data && s !== null ? (data.stackNodes[s] ?? null) : null;
  }
}

function framesOfNode(data: FlameData, node: number): (FrameInfo & { hidden: boolean })[] {
  const out: (FrameInfo & { hidden: boolean })[] = [];
  for (let n = node; n > 0; n = data.parent[n]) {
    const f = data.frames[data.key[n]];
    if (f) out.push({ ...f, hidden: false });
  }
  return out;
}
