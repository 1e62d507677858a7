// The report viewer: reads the embedded data and shows summary, timeline, growth table, flame graph and diff
// flame graph (zoom, search, tooltips), the noted stacks and the notes. Every string from the data is set as
// text (dom.ts), never parsed as markup.

import { describeTarget } from '../../session/notes.js';
import type { Note } from '../../session/schema.js';
import type { ReportData, ReportProcess, ReportStack } from '../data.js';
import { DATA_ELEMENT_ID, decodePayload } from '../payload.js';
import { append, clear, h, svg } from './dom.js';
import {
  basename,
  flameTree,
  formatBytes,
  formatSigned,
  frameText,
  notesOnName,
  notesOnStack,
  snapshotIndex,
  stackTitle,
  type FlameNode,
} from './model.js';

interface State {
  proc: number;
  stack: number | null;
  flameMode: 'target' | 'diff';
  zoom: string[];
  search: string;
  table: 'growth' | 'delta' | 'live';
  sortKey: string;
  sortDesc: boolean;
}

let data: ReportData;
const state: State = { proc: 0, stack: null, flameMode: 'target', zoom: [], search: '', table: 'growth', sortKey: '', sortDesc: true };
const tooltip = h('div', { class: 'tooltip', role: 'tooltip', 'data-testid': 'tooltip' });

function proc(): ReportProcess {
  return data.processes[state.proc];
}

function showTip(ev: MouseEvent, lines: string[]): void {
  tooltip.textContent = lines.join('\n');
  tooltip.style.display = 'block';
  tooltip.style.left = `${Math.min(ev.clientX + 12, window.innerWidth - 580)}px`;
  tooltip.style.top = `${ev.clientY + 14}px`;
}

function hideTip(): void {
  tooltip.style.display = 'none';
}

const root = document.getElementById('app') as HTMLElement;
const sections = {
  summary: h('section', { 'data-testid': 'summary' }),
  timeline: h('section', { class: 'timeline', 'data-testid': 'timeline' }),
  table: h('section', { 'data-testid': 'growth-table' }),
  stack: h('section', { 'data-testid': 'stack-panel' }),
  flame: h('section', { 'data-testid': 'flame-section' }),
  noted: h('section', { 'data-testid': 'noted-stacks' }),
  notes: h('aside', { 'data-testid': 'notes' }),
};

function start(): void {
  const el = document.getElementById(DATA_ELEMENT_ID);
  try {
    data = decodePayload(el?.textContent ?? '');
  } catch (e) {
    append(root, h('p', { class: 'warn', text: `This report cannot be shown: ${e instanceof Error ? e.message : String(e)}` }));
    return;
  }
  const sel = data.session.selection.process;
  const i = sel === null ? -1 : data.processes.findIndex((p) => p.key === sel);
  state.proc = i >= 0 ? i : 0;
  state.search = data.session.view.search ?? '';
  state.zoom = Array.isArray(data.session.view.flameZoom) ? data.session.view.flameZoom.filter((x): x is string => typeof x === 'string') : [];
  if (data.session.view.tab === 'diff') state.flameMode = 'diff';
  state.table = defaultTable();
  document.title = data.title;
  const header = h(
    'header',
    {},
    h('h1', { text: data.title }),
    h('span', { class: 'muted', text: `made ${data.createdAt.replace('T', ' ').slice(0, 19)} UTC by ${data.generator}` }),
    data.sanitized.paths || data.sanitized.maps ? h('span', { class: 'badge', text: `sanitized: ${[data.sanitized.paths ? 'paths' : '', data.sanitized.maps ? 'maps' : ''].filter(Boolean).join(', ')}` }) : null,
    h('span', { class: 'badge', text: data.options.symbolized ? 'symbolized' : 'not symbolized (module+offset)' }),
  );
  const mainEl = h('main', {}, h('div', {}, sections.summary, sections.timeline, sections.flame, sections.table, sections.stack, sections.noted), sections.notes);
  append(root, header, mainEl, tooltip);
  window.addEventListener('resize', () => renderFlame());
  renderAll();
}

function renderAll(): void {
  renderSummary();
  renderTimeline();
  renderFlame();
  renderTable();
  renderStack();
  renderNoted();
  renderNotes();
}

/** The growth list when the process has growers (two or more snapshots), else the largest stacks. */
function defaultTable(): State['table'] {
  return proc().stacks.some((s) => (s.growth?.score ?? 0) > 0) ? 'growth' : 'live';
}

function selectProcess(i: number): void {
  if (i === state.proc) return;
  state.proc = i;
  state.stack = null;
  state.zoom = [];
  state.table = defaultTable();
  state.sortKey = '';
  state.sortDesc = true;
  renderAll();
}

function selectStack(si: number | null): void {
  state.stack = si;
  renderTable();
  renderStack();
  renderTimeline();
  renderFlame();
}

// ---- summary ----------------------------------------------------------------------------------

function renderSummary(): void {
  const s = sections.summary;
  clear(s);
  append(s, h('h2', { text: 'Summary' }));
  const select = h('select', { 'data-testid': 'process-select', 'aria-label': 'process' });
  data.processes.forEach((p, i) => {
    const o = h('option', { value: String(i), text: p.key });
    if (i === state.proc) o.selected = true;
    select.appendChild(o);
  });
  select.addEventListener('change', () => selectProcess(Number(select.value)));
  const rows = data.processes.map((p, i) => {
    const first = p.snapshots[p.base];
    const last = p.snapshots[p.target];
    const tr = h(
      'tr',
      { class: 'row' + (i === state.proc ? ' selected' : '') },
      h('td', { text: p.key }),
      h('td', { class: 'num', text: p.snapshots.length }),
      h('td', { class: 'num', text: formatBytes(first.liveBytes) }),
      h('td', { class: 'num', text: formatBytes(last.liveBytes) }),
      h('td', { class: 'num', text: formatSigned(last.liveBytes - first.liveBytes) }),
      h('td', { text: p.endedWithoutFinalDump ? 'no final dump (killed?)' : 'final dump' }),
    );
    tr.addEventListener('click', () => selectProcess(i));
    return tr;
  });
  append(
    s,
    h('div', { class: 'toolbar' }, 'Process ', select, h('span', { class: 'muted', text: `${data.processes.length} processes; base → target per process` })),
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, h('th', { text: 'process' }), h('th', { class: 'num', text: 'snapshots' }), h('th', { class: 'num', text: 'base' }), h('th', { class: 'num', text: 'target' }), h('th', { class: 'num', text: 'Δ' }), h('th', { text: 'end' }))),
      h('tbody', {}, ...rows),
    ),
  );
  if (data.warnings.length) {
    const det = h('details', {}, h('summary', { text: `${data.warnings.length + data.warningsOmitted} warnings while reading the dumps` }));
    for (const w of data.warnings) append(det, h('div', { class: 'warn', text: `${w.file}${w.line ? ':' + w.line : ''}: ${w.message}` }));
    append(s, det);
  }
}

// ---- timeline ---------------------------------------------------------------------------------

function renderTimeline(): void {
  const s = sections.timeline;
  clear(s);
  const p = proc();
  append(s, h('h2', { text: `Timeline — ${p.key}` }));
  const W = 1000;
  const H = 160;
  const pad = 6;
  const n = p.snapshots.length;
  const stack = state.stack !== null ? p.stacks[state.stack] : null;
  const max = Math.max(1, ...p.snapshots.map((x) => x.liveBytes));
  const x = (i: number): number => pad + (n > 1 ? (i * (W - 2 * pad)) / (n - 1) : (W - 2 * pad) / 2);
  const y = (v: number): number => H - pad - (v / max) * (H - 2 * pad);
  const chart = svg('svg', { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none', 'data-testid': 'timeline-chart' });
  // spans and snapshot notes
  for (const note of data.notes) {
    const t = note.target;
    if (t.kind === 'stack' || t.kind === 'frame' || t.process !== p.key) continue;
    if (t.kind === 'span') {
      const a = snapshotIndex(p, t.from);
      const b = snapshotIndex(p, t.to);
      if (a < 0 || b < 0) continue;
      const r = svg('rect', { x: x(Math.min(a, b)), y: 0, width: Math.max(2, Math.abs(x(b) - x(a))), height: H, fill: note.color, 'fill-opacity': 0.15, 'data-testid': 'timeline-span' });
      r.addEventListener('mousemove', (ev) => showTip(ev, [describeTarget(t), note.text]));
      r.addEventListener('mouseleave', hideTip);
      chart.appendChild(r);
    }
  }
  const line = (vals: number[], color: string, width: number): void => {
    const pts = vals.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    chart.appendChild(svg('polyline', { points: pts, fill: 'none', stroke: color, 'stroke-width': width, 'vector-effect': 'non-scaling-stroke' }));
  };
  line(
    p.snapshots.map((x2) => x2.liveBytes),
    '#2f6fb3',
    2,
  );
  if (stack?.series) line(stack.series, '#d55e00', 2);
  for (const [i, label] of [
    [p.base, 'base'],
    [p.target, 'target'],
  ] as const) {
    chart.appendChild(svg('line', { x1: x(i), x2: x(i), y1: 0, y2: H, stroke: '#5d6875', 'stroke-dasharray': '4 3', 'vector-effect': 'non-scaling-stroke', 'data-testid': `timeline-${label}` }));
  }
  p.snapshots.forEach((snap, i) => {
    const marks = data.notes.filter((nt) => nt.target.kind === 'snapshot' && nt.target.process === p.key && snapshotIndex(p, nt.target.snapshot) === i);
    const c = svg('circle', { cx: x(i), cy: y(snap.liveBytes), r: marks.length ? 6 : 3, fill: marks.length ? marks[0].color : '#2f6fb3', 'data-testid': marks.length ? 'timeline-note' : 'timeline-point' });
    c.addEventListener('mousemove', (ev) =>
      showTip(ev, [
        `${basename(snap.file)} (seq ${snap.seq ?? '-'}, ${snap.trigger})`,
        `live ${formatBytes(snap.liveBytes)} in ${Math.round(snap.liveObjects).toLocaleString('en-US')} objects${snap.truncated ? ' (truncated)' : ''}`,
        ...(stack?.series ? [`selected stack: ${formatBytes(stack.series[i])}`] : []),
        ...marks.map((m) => `note: ${m.text}`),
      ]),
    );
    c.addEventListener('mouseleave', hideTip);
    chart.appendChild(c);
  });
  append(
    s,
    chart,
    h('div', { class: 'muted', text: `max ${formatBytes(max)}; base ${basename(p.snapshots[p.base].file)} → target ${basename(p.snapshots[p.target].file)}${stack?.series ? '; vermillion: the selected stack' : ''}` }),
  );
}

// ---- flame graph ------------------------------------------------------------------------------

function renderFlame(): void {
  const s = sections.flame;
  clear(s);
  const p = proc();
  const tree = flameTree(data, p);
  const modeBtn = (mode: State['flameMode'], label: string): HTMLButtonElement => {
    const b = h('button', { type: 'button', 'aria-pressed': String(state.flameMode === mode), 'data-testid': `flame-mode-${mode}`, text: label });
    b.addEventListener('click', () => {
      state.flameMode = mode;
      renderFlame();
    });
    return b;
  };
  const search = h('input', { type: 'search', placeholder: 'search functions', 'aria-label': 'search', 'data-testid': 'flame-search', value: state.search });
  search.addEventListener('input', () => {
    state.search = search.value;
    paint();
  });
  const reset = h('button', { type: 'button', 'data-testid': 'flame-reset', text: 'reset zoom' });
  reset.addEventListener('click', () => {
    state.zoom = [];
    renderFlame();
  });
  const status = h('span', { class: 'muted', 'data-testid': 'flame-status' });
  const box = h('div', { class: 'flame', 'data-testid': 'flame' });
  append(
    s,
    h('h2', { text: state.flameMode === 'diff' ? 'Diff flame graph (base → target; vermillion grew, blue shrank)' : 'Flame graph (target snapshot, live bytes)' }),
    h('div', { class: 'toolbar tabs' }, modeBtn('target', 'flame graph'), modeBtn('diff', 'diff'), search, reset, status),
    box,
  );

  // zoom path → node
  let focus = tree;
  const ancestors: FlameNode[] = [tree];
  for (const name of state.zoom) {
    const c = focus.children.find((x) => x.name === name);
    if (!c) break;
    focus = c;
    ancestors.push(c);
  }
  const diff = state.flameMode === 'diff';
  const weight = (n: FlameNode): number => (diff ? Math.max(n.total, n.base) : n.total);
  const width = Math.max(300, box.clientWidth || s.clientWidth || 1000);
  const rowH = 18;
  const nodes: { n: FlameNode; x: number; w: number; depth: number; path: string[] }[] = [];
  ancestors.forEach((a, d) => nodes.push({ n: a, x: 0, w: width, depth: d, path: ancestors.slice(1, d + 1).map((z) => z.name) }));
  const walk = (n: FlameNode, x0: number, scale: number, depth: number, path: string[]): void => {
    let x = x0;
    for (const c of n.children) {
      const w = weight(c) * scale;
      if (w >= 0.5) {
        const cp = [...path, c.name];
        nodes.push({ n: c, x, w, depth, path: cp });
        walk(c, x, scale, depth + 1, cp);
      }
      x += w;
    }
  };
  const fw = weight(focus);
  if (fw > 0) walk(focus, 0, width / fw, ancestors.length, state.zoom.slice(0, ancestors.length - 1));
  const maxDepth = nodes.reduce((m, x) => Math.max(m, x.depth), 0);
  box.style.height = `${(maxDepth + 1) * rowH + 2}px`;
  const selected = state.stack;
  const els: { el: HTMLDivElement; n: FlameNode }[] = [];
  for (const it of nodes) {
    const n = it.n;
    const el = h('div', { class: 'node', 'data-testid': 'flame-node', 'data-name': n.name });
    el.style.left = `${it.x}px`;
    el.style.width = `${Math.max(1, it.w)}px`;
    el.style.top = `${it.depth * rowH}px`;
    el.style.background = diff ? diffColor(n) : nameColor(n.name);
    if (it.w > 30) el.textContent = n.name;
    const named = notesOnName(data.notes, p, n.name);
    const stackNotes = n.stacks.flatMap((si) => (p.stacks[si].frames.length && n.children.length === 0 ? notesOnStack(data.notes, p, p.stacks[si]) : []));
    if (named.length || stackNotes.length) {
      el.classList.add('noted');
      el.style.setProperty('--note', (named[0] ?? stackNotes[0]).color);
    }
    if (selected !== null && n.stacks.includes(selected)) el.style.fontWeight = '600';
    el.addEventListener('click', () => {
      state.zoom = it.path;
      if (n.stacks.length === 1) state.stack = n.stacks[0];
      renderFlame();
      if (n.stacks.length === 1) {
        renderTable();
        renderStack();
        renderTimeline();
      }
    });
    el.addEventListener('mousemove', (ev) =>
      showTip(ev, [
        n.name,
        ...(n.where ? [n.where] : []),
        diff
          ? `${formatBytes(n.base)} → ${formatBytes(n.total)} (${formatSigned(n.total - n.base)})`
          : `${formatBytes(n.total)} (${tree.total > 0 ? ((100 * n.total) / tree.total).toFixed(1) : '0'}% of ${formatBytes(tree.total)})`,
        ...named.map((x) => `note: ${x.text}`),
        ...stackNotes.map((x) => `note on stack: ${x.text}`),
      ]),
    );
    el.addEventListener('mouseleave', hideTip);
    box.appendChild(el);
    els.push({ el, n });
  }
  const paint = (): void => {
    const q = state.search.trim().toLowerCase();
    let matched = 0;
    const counted = new Set<number>();
    for (const { el, n } of els) {
      const m = q !== '' && n.name.toLowerCase().includes(q);
      el.classList.toggle('match', m);
      el.classList.toggle('dim', q !== '' && !m);
      if (m) for (const si of n.stacks) counted.add(si);
    }
    for (const si of counted) matched += p.stacks[si].targetBytes;
    status.textContent = q ? `matched ${formatBytes(matched)} of ${formatBytes(tree.total)}` : state.zoom.length ? `zoomed: ${state.zoom[state.zoom.length - 1]}` : `${formatBytes(tree.total)} in ${p.stacks.length} stacks shown + ${p.other.stacks} others`;
  };
  paint();
}

function nameColor(name: string): string {
  let hsh = 0;
  for (let i = 0; i < name.length; i++) hsh = (hsh * 31 + name.charCodeAt(i)) | 0;
  const hue = 10 + (Math.abs(hsh) % 45);
  return `hsl(${hue}, 80%, ${62 + (Math.abs(hsh >> 8) % 14)}%)`;
}

function diffColor(n: FlameNode): string {
  const d = n.total - n.base;
  const m = Math.max(n.total, n.base, 1);
  const t = Math.min(1, Math.abs(d) / m);
  if (d === 0) return 'hsl(0, 0%, 86%)';
  // Okabe–Ito vermillion (grew) and blue (shrank), as in the app: safe for colour-blind readers.
  return d > 0 ? `hsl(24, ${50 + 50 * t}%, ${88 - 42 * t}%)` : `hsl(202, ${50 + 50 * t}%, ${88 - 50 * t}%)`;
}

// ---- table ------------------------------------------------------------------------------------

interface Column {
  key: string;
  label: string;
  num: boolean;
  value: (s: ReportStack) => number | string;
  show: (s: ReportStack) => string;
}

function renderTable(): void {
  const s = sections.table;
  clear(s);
  const p = proc();
  const cols: Column[] = [
    { key: 'slope', label: 'slope/snap', num: true, value: (x) => x.growth?.slope ?? 0, show: (x) => (x.growth ? formatSigned(x.growth.slope) : '-') },
    { key: 'grew', label: 'grew', num: true, value: (x) => x.growth?.grew ?? 0, show: (x) => (x.growth ? `${Math.round(x.growth.grew * 100)}%` : '-') },
    { key: 'r2', label: 'r²', num: true, value: (x) => x.growth?.r2 ?? 0, show: (x) => (x.growth ? x.growth.r2.toFixed(2) : '-') },
    { key: 'delta', label: 'Δ base→target', num: true, value: (x) => x.targetBytes - x.baseBytes, show: (x) => formatSigned(x.targetBytes - x.baseBytes) },
    { key: 'live', label: 'target', num: true, value: (x) => x.targetBytes, show: (x) => formatBytes(x.targetBytes) },
    { key: 'stack', label: 'stack (leaf first)', num: false, value: (x) => stackTitle(data, p, x), show: (x) => stackTitle(data, p, x) },
  ];
  const defaults: Record<State['table'], string> = { growth: 'score', delta: 'delta', live: 'live' };
  const key = state.sortKey || defaults[state.table];
  const rows = p.stacks
    .map((st, i) => ({ st, i }))
    .filter(({ st }) => (state.table === 'growth' ? (st.growth?.score ?? 0) > 0 : state.table === 'delta' ? st.targetBytes - st.baseBytes > 0 : st.targetBytes > 0));
  const val = (st: ReportStack): number | string => (key === 'score' ? (st.growth?.score ?? 0) : (cols.find((c) => c.key === key)?.value(st) ?? 0));
  rows.sort((a, b) => {
    const va = val(a.st);
    const vb = val(b.st);
    const c = typeof va === 'number' && typeof vb === 'number' ? va - vb : String(va).localeCompare(String(vb));
    return (state.sortDesc ? -c : c) || a.i - b.i;
  });
  const tab = (t: State['table'], label: string): HTMLButtonElement => {
    const b = h('button', { type: 'button', 'aria-pressed': String(state.table === t), 'data-testid': `table-${t}`, text: label });
    b.addEventListener('click', () => {
      state.table = t;
      state.sortKey = '';
      state.sortDesc = true;
      renderTable();
    });
    return b;
  };
  const head = h('tr', {}, h('th', { class: 'num', text: '#' }));
  for (const c of cols) {
    const th = h('th', { class: c.num ? 'num' : '', 'data-testid': `sort-${c.key}`, text: c.label + (key === c.key ? (state.sortDesc ? ' ▼' : ' ▲') : '') });
    th.addEventListener('click', () => {
      if (state.sortKey === c.key) state.sortDesc = !state.sortDesc;
      else {
        state.sortKey = c.key;
        state.sortDesc = c.num;
      }
      renderTable();
    });
    head.appendChild(th);
  }
  const body = h('tbody', {});
  rows.forEach(({ st, i }, rank) => {
    const noted = notesOnStack(data.notes, p, st);
    const tr = h('tr', { class: 'row' + (state.stack === i ? ' selected' : ''), 'data-testid': 'table-row' }, h('td', { class: 'num', text: rank + 1 }));
    for (const c of cols) tr.appendChild(h('td', { class: c.num ? 'num' : '', text: c.show(st) }));
    if (noted.length) {
      const sw = h('span', { class: 'badge', title: noted.map((x) => x.text).join('\n'), text: `note${noted.length > 1 ? 's' : ''}` });
      sw.style.borderColor = noted[0].color;
      tr.lastElementChild?.appendChild(document.createTextNode(' '));
      tr.lastElementChild?.appendChild(sw);
    }
    tr.addEventListener('click', () => selectStack(i));
    body.appendChild(tr);
  });
  append(
    s,
    h('h2', { text: 'Top stacks' }),
    h('div', { class: 'toolbar tabs' }, tab('growth', 'steady growth'), tab('delta', 'grew base→target'), tab('live', 'live at target'), h('span', { class: 'muted', text: `top ${data.options.topN} per list; ${p.stackCount} stacks in all` })),
    h('table', {}, h('thead', {}, head), body),
  );
}

// ---- stack panel ------------------------------------------------------------------------------

function stackDetails(p: ReportProcess, st: ReportStack): HTMLElement {
  const list = h('ol', { class: 'frame-list', 'data-testid': 'stack-frames' });
  for (const fi of st.frames) {
    const f = p.frames[fi];
    const li = h('li', { text: frameText(data, f) });
    if (f.lines.length > 1) {
      const inl = f.lines
        .slice(0, -1)
        .map((l) => `inlined: ${data.strings[l[0]] || '?'}${data.strings[l[1]] ? ` (${basename(data.strings[l[1]])}:${l[2]})` : ''}`)
        .join('\n');
      li.title = inl;
    }
    list.appendChild(li);
  }
  return h(
    'div',
    {},
    h('div', { class: 'muted', text: `${formatBytes(st.baseBytes)} → ${formatBytes(st.targetBytes)} (${formatSigned(st.targetBytes - st.baseBytes)}), ${Math.round(st.targetObjects)} objects${st.growth ? `; grew in ${Math.round(st.growth.grew * 100)}% of intervals, r² ${st.growth.r2.toFixed(2)}` : ''}` }),
    list,
    ...notesOnStack(data.notes, p, st).map(noteCard),
  );
}

function renderStack(): void {
  const s = sections.stack;
  clear(s);
  const p = proc();
  append(s, h('h2', { text: 'Stack' }));
  if (state.stack === null || !p.stacks[state.stack]) {
    append(s, h('div', { class: 'muted', text: 'Click a row of the table or a leaf of the flame graph.' }));
    return;
  }
  append(s, stackDetails(p, p.stacks[state.stack]));
}

function renderNoted(): void {
  const s = sections.noted;
  clear(s);
  append(s, h('h2', { text: 'Stacks the notes point at' }));
  let found = false;
  for (const note of data.notes) {
    if (note.target.kind !== 'stack') continue;
    found = true;
    const t = note.target;
    const pi = data.processes.findIndex((p) => p.key === t.process);
    const p = data.processes[pi];
    const si = p ? p.stacks.findIndex((st) => st.addresses.length === t.frames.length && st.addresses.every((a, k) => a === t.frames[k])) : -1;
    const box = h('div', { 'data-testid': 'noted-stack' }, h('div', { text: `${t.process}: ${t.label ?? ''}` }));
    if (si >= 0) append(box, stackDetails(p, p.stacks[si]));
    else append(box, h('div', { class: 'muted', text: 'this stack is not in the report (another process, or not live in these dumps)' }));
    s.appendChild(box);
  }
  if (!found) append(s, h('div', { class: 'muted', text: 'No note points at a stack.' }));
}

// ---- notes ------------------------------------------------------------------------------------

function noteCard(n: Note): HTMLElement {
  const card = h(
    'div',
    { class: 'note', 'data-testid': 'note', tabindex: 0 },
    h('div', { class: 'target', text: describeTarget(n.target) }),
    h('div', { class: 'text', 'data-testid': 'note-text', text: n.text }),
    h('div', { class: 'when', text: `${n.createdAt.replace('T', ' ').slice(0, 16)}${n.updatedAt ? ` (edited ${n.updatedAt.replace('T', ' ').slice(0, 16)})` : ''}` }),
  );
  card.style.setProperty('--c', /^#[0-9a-fA-F]{6}$/.test(n.color) ? n.color : '#e4572e');
  card.addEventListener('click', () => goToNote(n));
  card.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' || ev.key === ' ') {
      ev.preventDefault();
      goToNote(n);
    }
  });
  return card;
}

function goToNote(n: Note): void {
  const t = n.target;
  if (t.kind === 'frame') {
    state.search = t.function;
    if (t.process) {
      const i = data.processes.findIndex((p) => p.key === t.process);
      if (i >= 0) selectProcess(i);
    }
    renderFlame();
    sections.flame.scrollIntoView();
    return;
  }
  const i = data.processes.findIndex((p) => p.key === t.process);
  if (i < 0) return;
  selectProcess(i);
  if (t.kind === 'stack') {
    const si = proc().stacks.findIndex((st) => st.addresses.length === t.frames.length && st.addresses.every((a, k) => a === t.frames[k]));
    if (si >= 0) selectStack(si);
    sections.stack.scrollIntoView();
  } else if (t.kind === 'diff') {
    state.flameMode = 'diff';
    renderFlame();
    sections.flame.scrollIntoView();
  } else sections.timeline.scrollIntoView();
}

function renderNotes(): void {
  const s = sections.notes;
  clear(s);
  append(s, h('section', {}, h('h2', { text: `Notes (${data.notes.length})` })));
  if (!data.notes.length) append(s, h('div', { class: 'muted', text: 'No notes.' }));
  for (const n of data.notes) s.appendChild(noteCard(n));
}

start();
