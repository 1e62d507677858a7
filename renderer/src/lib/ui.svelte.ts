// What the views share beyond AppState: the focused process index, selection → stack panel, the open dialogs,
// opening files, and the flame graphs' zoom reset. One instance per window, given to every view by context
// (lib/context.ts), so a view file needs no props from App.svelte.

import type { Session } from '../../../core/notes/schema.ts';
import { AppState, type PanelContent } from './state.svelte.ts';
import type { Host } from './host.ts';
import type { FlameData, FrameInfo, FunctionRow, SourceFile } from './protocol.ts';
import { formatBytes, formatCount, formatPct, snapLabel } from './format.ts';
import { KIND_LABEL } from './colors.ts';
import { NoteIndex } from './notes-index.svelte.ts';

export class Ui {
  readonly app: AppState;
  readonly notes: NoteIndex;
  showExport = $state(false);
  showKeys = $state(false);
  /** the last autosaved session, offered on the open screen */
  autosaved = $state.raw<Session | null>(null);
  /** the filter/search box of the tab bar (focused by `/` and the Find menu) */
  searchInput = $state<HTMLInputElement | undefined>();
  sessionInput = $state<HTMLInputElement | undefined>();
  private zoomResets = new Set<() => void>();

  constructor(host: Host) {
    this.app = new AppState(host);
    this.notes = new NoteIndex(this);
  }

  /** index of the focused process, or -1 */
  get procIndex(): number {
    return this.app.selected[0] ?? -1;
  }

  // -- selection → stack panel ------------------------------------------------------------------
  selectStack(stackId: number): void {
    const app = this.app;
    app.selectedStack = stackId;
    app.selectedStackTarget = null;
    const p = this.procIndex;
    if (p < 0) return;
    const row = app.growth?.stacks.find((r) => r.stackId === stackId);
    void app.client.request({ type: 'stackTargets', proc: p, stackIds: [stackId] }).then(({ targets }) => {
      if (app.selectedStack === stackId) app.selectedStackTarget = targets[0] ?? null;
    });
    const detail = app.client.request({
      type: 'stack',
      proc: p,
      stackId,
      members: row?.members,
      base: app.base,
      target: app.target,
      view: app.view,
    });
    void detail.then(({ stack }) => {
      const facts: [string, string][] = [
        [`base ${snapLabel(app.focused?.snapshots[app.base])}`, formatBytes(stack.baseBytes)],
        [`target ${snapLabel(app.focused?.snapshots[app.target])}`, formatBytes(stack.targetBytes)],
        [
          'Δ',
          `${formatBytes(stack.targetBytes - stack.baseBytes, true)} (${formatPct(stack.baseBytes > 0 ? (100 * (stack.targetBytes - stack.baseBytes)) / stack.baseBytes : stack.targetBytes > 0 ? Infinity : 0)})`,
        ],
      ];
      if (row)
        facts.push(
          ['status', row.status],
          ['steadiness of growth', formatBytes(row.steadiness) + '/dump'],
          ['grew in', `${(row.growingFraction * 100).toFixed(0)}% of intervals`],
        );
      if (row && row.members.length > 1)
        facts.push(['stacks in this row', `${row.members.length} (same visible frames)`]);
      const v = stack.verdict;
      if (v) {
        facts.push(
          ['pattern', v.pattern + (v.note ? ` (${v.note})` : '')],
          ['job-wide rank', `#${v.rank + 1} · score ${formatBytes(v.score)}`],
        );
        facts.push(['late rate', `${formatBytes(v.lateRate, true)}/${v.lateRatePerSecond ? 's' : 'dump'}`]);
        if (v.sigmaBytes > 0) facts.push(['±2σ at the end', `${formatBytes(2 * v.sigmaBytes)} (sampling)`]);
        if (v.groupProcesses > 1) facts.push(['held by', `${v.groupProcesses} processes`]);
      }
      // the title leads with the first surviving frame: not an allocator frame, not a folded interpreter frame
      const leaf =
        stack.frames.find((f) => !f.hidden && f.fold === undefined) ??
        stack.frames.find((f) => !f.hidden) ??
        stack.frames[0];
      app.panel = {
        title: `stack #${stackId}: ${leaf?.function ?? leaf?.label ?? row?.label ?? ''}`,
        frames: stack.frames,
        facts,
        series: stack.series,
        stackId,
      };
    });
  }

  /** A Suspects row → that process focused, its growth table open, the stack in the panel. */
  openSuspect(proc: number, stackId: number): void {
    const app = this.app;
    if (this.procIndex !== proc) app.focus(proc, false);
    app.tab = 'growth';
    this.selectStack(stackId);
  }

  /** A flame-graph node → the stack panel (its path, its bytes). */
  selectNode(data: FlameData, node: number): void {
    const f = node > 0 ? data.frames[data.key[node]] : null;
    // a marker of folded interpreter frames expands them (python-first view; the slice bar folds them again)
    if (f?.kind === 'folded') {
      this.app.unfold = true;
      this.app.status = 'interpreter frames shown: untick "show interpreter frames" to fold them again';
      return;
    }
    const facts: [string, string][] = [];
    if (data.baseTotal) {
      const b = data.baseTotal[node];
      const t = data.total[node];
      facts.push(
        ['base', formatBytes(b)],
        ['target', formatBytes(t)],
        ['Δ', `${formatBytes(t - b, true)} (${formatPct(b > 0 ? (100 * (t - b)) / b : t > 0 ? Infinity : 0)})`],
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
          'bytes',
          `${formatBytes(data.total[node])} (${((100 * data.total[node]) / (data.targetGrand || 1)).toFixed(1)}%)`,
        ],
        ['objects', formatCount(data.totalObjects[node])],
        ['self bytes', formatBytes(data.self[node])],
      );
    }
    if (f) facts.push(['kind', KIND_LABEL[f.kind]]);
    const panel: PanelContent = {
      title: f ? (f.function ?? f.label) : 'all stacks',
      frames: framesOfNode(data, node),
      facts,
      series: null,
    };
    if (f) panel.fn = { name: f.function ?? f.label, module: f.module };
    this.app.panel = panel;
  }

  /** A by-function growth row → the diff flame graph searched for it. */
  selectFunction(r: FunctionRow): void {
    this.app.search = r.label;
    this.app.tab = 'diff';
  }

  /** The node of the selected stack in a flame graph, if any. */
  highlightIn(data: FlameData | null): number | null {
    const s = this.app.selectedStack;
    return data && s !== null ? (data.stackNodes[s] ?? null) : null;
  }

  // -- flame graphs register their zoom reset (menu "Reset zoom") --------------------------------
  onZoomReset(fn: () => void): () => void {
    this.zoomResets.add(fn);
    return () => this.zoomResets.delete(fn);
  }
  resetZoom(): void {
    for (const f of this.zoomResets) f();
  }

  // -- opening ----------------------------------------------------------------------------------
  openFiles(files: SourceFile[]): void {
    void this.app.openAny(files);
  }

  async openSample(): Promise<void> {
    try {
      // the exact run of the leaky program is symbolized (its binary is bundled): the best first view
      void this.app.load(await this.app.host.sampleFiles(), 'exact');
    } catch (e) {
      this.app.error = e instanceof Error ? e.message : String(e);
    }
  }

  async dialog(kind: 'files' | 'folder'): Promise<void> {
    const native = this.app.host.openDialog(kind);
    if (native) {
      const f = await native;
      if (f) this.openFiles(f);
    } else {
      this.app.close();
      await Promise.resolve();
      (
        document.querySelector(
          kind === 'files' ? '[data-testid=file-input]' : '[data-testid=folder-input]',
        ) as HTMLInputElement | null
      )?.click();
    }
  }

  async openSessionDialog(): Promise<void> {
    const native = this.app.host.openDialog('files');
    if (native) {
      const f = await native;
      if (f) this.openFiles(f);
    } else this.sessionInput?.click();
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
