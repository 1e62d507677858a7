// A reopened report (report/reopen.ts) as the data the app's views take: job summary, growth rows, flame trees
// (snapshot and diff), stack details and stacks as note targets. Pure, unit-tested (report-view.test.ts).
// In a report a stack's id in these views is its index in ReportProcess.stacks; the stacks the report left out
// are one "(N other stacks)" row/node (id = stacks.length) so totals stay whole.

import type { ReportData, ReportFrame, ReportProcess, ReportStack } from '../../../report/data.ts';
import type { StackTarget } from '../../../session/schema.ts';
import type { FlameData, FrameInfo, FrameKind, FunctionRow, GrowthResult, JobSummary, ProcessSummary, StackDetail, StackRow, StackSeries, WarningSummary } from './protocol.ts';
import { leastSquaresSlope } from '../../../analysis/growth.ts';
import { addStackToFunctions, finishFunctionRows } from '../../../analysis/function-diff.ts';


export function reportSummary(data: ReportData): JobSummary {
  const processes: ProcessSummary[] = data.processes.map((p, index) => {
    const live = p.snapshots.map((s) => s.liveBytes);
    return {
      index,
      key: p.key,
      pid: p.pid,
      prefix: p.prefix,
      snapshots: p.snapshots.map((s, si) => ({ index: si, file: s.file, seq: s.seq, trigger: s.trigger, liveBytes: s.liveBytes, liveObjects: s.liveObjects, truncated: s.truncated, complete: !s.truncated, headerLiveBytes: null, mtimeMs: s.mtimeMs })),
      lastLiveBytes: live[live.length - 1] ?? 0,
      firstLiveBytes: live[0] ?? 0,
      maxLiveBytes: live.reduce((a, b) => Math.max(a, b), 0),
      slopeBytesPerSnapshot: leastSquaresSlope(live),
      endedWithoutFinalDump: p.endedWithoutFinalDump,
      stackCount: p.stackCount,
      hasPythonFrames: p.frames.some((f) => f.kind === 'python'),
      truncatedCount: p.snapshots.filter((s) => s.truncated).length,
    };
  });
  const warnings: WarningSummary[] = data.warnings.map((w) => {
    const o: WarningSummary = { file: w.file, message: w.message, kind: /truncat|ended early/i.test(w.message) ? 'truncated' : /maps/i.test(w.message) ? 'maps' : /binary|symbol/i.test(w.message) ? 'binary' : 'other' };
    if (w.line !== undefined) o.line = w.line;
    return o;
  });
  return { processes, warnings, ignoredFiles: [], loadMs: 0, readWaitMs: 0, bytesTotal: 0 };
}

const str = (data: ReportData, id: number): string => (id > 0 ? (data.strings[id] ?? '') : '');

function frameKind(data: ReportData, f: ReportFrame): FrameKind {
  if (f.kind === 'python') return 'python';
  if (f.kind === 'allocator') return 'allocator';
  const mod = f.module >= 0 ? str(data, f.module) : '';
  if (!mod) return 'unknown';
  return /^lib|\.so(\.|$)/.test(mod) ? 'library' : 'program';
}

/** One FrameInfo per report frame (its outermost function), key = the frame's index. */
export function frameInfo(data: ReportData, p: ReportProcess, k: number): FrameInfo {
  const f = p.frames[k];
  const outer = f.lines[f.lines.length - 1] ?? [0, 0, 0];
  const fn = str(data, outer[0]) || null;
  const mod = f.module >= 0 ? str(data, f.module) || null : null;
  const label = fn ?? (mod && f.moduleOffset ? `${mod}+${f.moduleOffset}` : f.address);
  return { key: k, label, function: fn, file: str(data, outer[1]) || null, line: outer[2] || null, module: mod, modulePath: mod, offset: f.moduleOffset, address: f.address, inlined: false, kind: frameKind(data, f), unverified: false };
}

/** The frames of a stack with inlined functions expanded (innermost first), leaf first. */
export function reportStackFrames(data: ReportData, p: ReportProcess, s: ReportStack): (FrameInfo & { hidden: boolean })[] {
  const out: (FrameInfo & { hidden: boolean })[] = [];
  for (const k of s.frames) {
    const base = frameInfo(data, p, k);
    const lines = p.frames[k].lines;
    lines.forEach(([name, file, line], i) => {
      const fn = str(data, name) || null;
      out.push({ ...base, label: fn ?? base.label, function: fn ?? base.function, file: str(data, file) || null, line: line || null, inlined: i < lines.length - 1, hidden: p.frames[k].kind === 'allocator' });
    });
  }
  return out;
}

function otherLabel(p: ReportProcess): string {
  return `(${p.other.stacks.toLocaleString('en-US')} other stacks)`;
}

export function reportGrowth(data: ReportData, procIndex: number): GrowthResult {
  const p = data.processes[procIndex];
  const infos = p.frames.map((_, k) => frameInfo(data, p, k));
  const row = (stackId: number, s: Pick<ReportStack, 'baseBytes' | 'targetBytes' | 'baseObjects' | 'targetObjects'>, frames: number[], g: ReportStack['growth'], label?: string): StackRow => {
    const delta = s.targetBytes - s.baseBytes;
    const inBase = s.baseBytes !== 0 || s.baseObjects !== 0;
    const inTarget = s.targetBytes !== 0 || s.targetObjects !== 0;
    const leaf = frames.length > 0 ? infos[frames[0]] : null;
    return {
      stackId,
      members: [stackId],
      label: label ?? leaf?.label ?? '(no frames)',
      context: label ? '' : frames.slice(1, 4).map((k) => infos[k].label).join(' ← '),
      kind: leaf?.kind ?? 'unknown',
      baseBytes: s.baseBytes,
      targetBytes: s.targetBytes,
      deltaBytes: delta,
      deltaPct: s.baseBytes > 0 ? (100 * delta) / s.baseBytes : s.targetBytes > 0 ? Infinity : 0,
      baseObjects: s.baseObjects,
      targetObjects: s.targetObjects,
      status: !inBase ? 'new' : !inTarget ? 'gone' : delta > 0 ? 'grown' : delta < 0 ? 'shrunk' : 'same',
      score: g?.score ?? 0,
      slope: g?.slope ?? 0,
      growingFraction: g?.grew ?? 0,
      // reports keep no variances: nothing is greyed
      sigmaDeltaBytes: 0,
      withinNoise: false,
    };
  };
  const stacks = p.stacks.map((s, i) => row(i, s, s.frames, s.growth));
  if (p.other.stacks > 0) stacks.push(row(p.stacks.length, p.other, [], null, otherLabel(p)));
  stacks.sort((a, b) => Math.abs(b.deltaBytes) - Math.abs(a.deltaBytes) || b.targetBytes - a.targetBytes);
  const fns = new Map<string, FunctionRow>();
  const fnRow = (k: number): FunctionRow => {
    const label = infos[k].label;
    let r = fns.get(label);
    if (!r) {
      r = { key: fns.size, label, kind: infos[k].kind, selfBase: 0, selfTarget: 0, selfDelta: 0, totalBase: 0, totalTarget: 0, totalDelta: 0 };
      fns.set(label, r);
    }
    return r;
  };
  const seen = new Set<FunctionRow>();
  let baseTotal = p.other.baseBytes;
  let targetTotal = p.other.targetBytes;
  for (const s of p.stacks) {
    baseTotal += s.baseBytes;
    targetTotal += s.targetBytes;
    addStackToFunctions(s.frames, s.baseBytes, s.targetBytes, fnRow, seen);
  }
  const functions = finishFunctionRows([...fns.values()]);
  functions.sort((a, b) => b.totalDelta - a.totalDelta);
  return { proc: procIndex, pid: p.pid, base: p.base, target: p.target, stacks, stackCount: stacks.length, functions, baseTotal, targetTotal };
}

/** Flame tree of the report's target snapshot, or of the diff base → target (diff true). */
export function reportFlame(data: ReportData, procIndex: number, diff: boolean): FlameData {
  const p = data.processes[procIndex];
  const infos: Record<number, FrameInfo> = {};
  const otherKey = p.frames.length;
  interface TNode {
    key: number;
    children: Map<number, TNode>;
    total: number;
    self: number;
    objects: number;
    base: number;
    absDelta: number;
    stacks: number[];
  }
  const mk = (key: number): TNode => ({ key, children: new Map(), total: 0, self: 0, objects: 0, base: 0, absDelta: 0, stacks: [] });
  const root = mk(-1);
  const add = (stackId: number, frames: number[], s: Pick<ReportStack, 'baseBytes' | 'targetBytes' | 'targetObjects'>): void => {
    if (!diff && s.targetBytes === 0) return;
    const d = Math.abs(s.targetBytes - s.baseBytes);
    let n = root;
    const visit = (x: TNode): void => {
      x.total += s.targetBytes;
      x.objects += s.targetObjects;
      x.base += s.baseBytes;
      x.absDelta += d;
    };
    visit(n);
    for (let i = frames.length - 1; i >= 0; i--) {
      const k = frames[i];
      let c = n.children.get(k);
      if (!c) {
        c = mk(k);
        n.children.set(k, c);
      }
      visit(c);
      n = c;
    }
    n.self += s.targetBytes;
    n.stacks.push(stackId);
  };
  p.stacks.forEach((s, i) => add(i, s.frames, s));
  if (p.other.stacks > 0) add(p.stacks.length, [otherKey], p.other);
  // preorder arrays, children by descending total
  const order: { n: TNode; depth: number; parent: number }[] = [];
  const walk = (n: TNode, depth: number, parent: number): void => {
    const me = order.length;
    order.push({ n, depth, parent });
    [...n.children.values()].sort((a, b) => (diff ? b.absDelta - a.absDelta : 0) || b.total - a.total || a.key - b.key).forEach((c) => walk(c, depth + 1, me));
  };
  walk(root, 0, -1);
  const size = order.length;
  const depth = new Uint16Array(size);
  const end = new Int32Array(size);
  const parent = new Int32Array(size);
  const key = new Int32Array(size);
  const total = new Float64Array(size);
  const self = new Float64Array(size);
  const totalObjects = new Float64Array(size);
  const baseTotal = diff ? new Float64Array(size) : null;
  const absDeltaTotal = diff ? new Float64Array(size) : null;
  const stackNodes: Record<number, number> = {};
  let maxDepth = 0;
  order.forEach(({ n, depth: dp, parent: pa }, i) => {
    depth[i] = dp;
    parent[i] = pa;
    key[i] = n.key;
    total[i] = n.total;
    self[i] = n.self;
    totalObjects[i] = n.objects;
    if (baseTotal) baseTotal[i] = n.base;
    if (absDeltaTotal) absDeltaTotal[i] = n.absDelta;
    for (const s of n.stacks) stackNodes[s] = i;
    if (dp > maxDepth) maxDepth = dp;
    if (n.key >= 0 && infos[n.key] === undefined) {
      infos[n.key] = n.key === otherKey ? { key: otherKey, label: otherLabel(p), function: null, file: null, line: null, module: null, modulePath: null, offset: null, address: '', inlined: false, kind: 'unknown', unverified: false } : frameInfo(data, p, n.key);
    }
  });
  // end[i]: one past the last node of i's subtree
  for (let i = size - 1; i >= 0; i--) {
    let e = i + 1;
    while (e < size && depth[e] > depth[i]) e = end[e];
    end[i] = e;
  }
  return { size, depth, end, parent, key, total, self, totalObjects, baseTotal, absDeltaTotal, maxDepth, frames: infos, stackNodes, baseGrand: root.base, targetGrand: root.total };
}

export function reportStackDetail(data: ReportData, procIndex: number, stackId: number): StackDetail {
  const p = data.processes[procIndex];
  const s = p.stacks[stackId];
  if (!s) {
    return { stackId, frames: [], series: p.snapshots.map(() => 0), baseBytes: p.other.baseBytes, targetBytes: p.other.targetBytes };
  }
  return { stackId, frames: reportStackFrames(data, p, s), series: s.series ?? [], baseBytes: s.baseBytes, targetBytes: s.targetBytes };
}

/** Top stacks over time, from the series the report keeps (the steadiest growers and noted stacks). */
export function reportSeries(data: ReportData, procIndex: number, n: number): StackSeries {
  const p = data.processes[procIndex];
  const infos = p.frames.map((_, k) => frameInfo(data, p, k));
  const withSeries = p.stacks
    .map((s, i) => ({ s, i }))
    .filter((x) => x.s.series !== null && x.s.series.length === p.snapshots.length)
    .sort((a, b) => Math.max(...(b.s.series as number[])) - Math.max(...(a.s.series as number[])))
    .slice(0, n);
  const values = withSeries.map((x) => [...(x.s.series as number[])]);
  const rest = p.snapshots.map((snap, si) => Math.max(0, snap.liveBytes - values.reduce((sum, v) => sum + v[si], 0)));
  const labels = withSeries.map((x) => {
    const f = x.s.frames.map((k) => infos[k].label);
    return f.length > 1 ? `${f[0]} ← ${f[1]}` : (f[0] ?? '(no frames)');
  });
  return { stackIds: withSeries.map((x) => x.i), labels: [...labels, 'other stacks'], values: [...values, rest] };
}

export function reportStackTarget(data: ReportData, procIndex: number, stackId: number): StackTarget | null {
  const p = data.processes[procIndex];
  const s = p?.stacks[stackId];
  if (!s) return null;
  const leaf = s.frames.length > 0 ? frameInfo(data, p, s.frames[0]).label : undefined;
  const t: StackTarget = { kind: 'stack', process: p.key, frames: [...s.addresses] };
  if (leaf !== undefined) t.label = leaf;
  return t;
}

/** A stack target back to a report stack (by its addresses), or null. */
export function resolveReportStack(data: ReportData, t: StackTarget): { proc: number; stackId: number } | null {
  const pi = data.processes.findIndex((p) => p.key === t.process);
  if (pi < 0) return null;
  const i = data.processes[pi].stacks.findIndex((s) => s.addresses.length === t.frames.length && s.addresses.every((a, k) => a === t.frames[k]));
  return i >= 0 ? { proc: pi, stackId: i } : null;
}
