// The process list of a job of many processes as rows: the processes that matter first, then each host, then its
// roles/commands (core/query/process-groups.ts groups), each with its processes in the list's sort order and
// narrowed by the search. The rows a group shows when open; the list component draws them.

import type { ProcessGroup } from '../../../core/query/process-groups.ts';
import { fateText, type Fate } from '../../../core/stats/fates.ts';
import type { ProcessSummary } from './protocol.ts';
import { pidShown } from './format.ts';

export interface ShownGroup {
  key: string;
  /** 0: the processes that matter, or a host; 1: a role/command under its host */
  level: 0 | 1;
  /** the host row a role/command row is under (shown while it is open) */
  parent: string | null;
  host: string | null;
  label: string;
  /** processes in the group (after the search) */
  count: number;
  /** its fates counted, or why its processes matter */
  fates: string;
  title: string;
  /** its processes in the list's order; empty for a host row over several roles/commands (they hold them) */
  rows: ProcessSummary[];
  lastMax: number;
  growthMedian: number;
}

/** Whether a process matches the search: its pid as shown, host, name, command line or file prefix. */
export function matches(p: ProcessSummary, query: string): boolean {
  const q = query.trim().toLowerCase();
  if (q === '') return true;
  const text = [pidShown(p), p.host ?? '', p.name ?? '', p.identity?.cmdline ?? '', p.prefix, p.key];
  return text.some((t) => t.toLowerCase().includes(q));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.floor((s.length - 1) / 2)];
}

function counted(
  label: string,
  ps: readonly ProcessSummary[],
  extra: Partial<ShownGroup> = {},
): Omit<ShownGroup, 'key' | 'level' | 'parent' | 'host' | 'fates' | 'title'> {
  return {
    label,
    count: ps.length,
    rows: [...ps],
    lastMax: Math.max(0, ...ps.map((p) => p.lastLiveBytes)),
    growthMedian: median(ps.map((p) => p.lastLiveBytes - p.firstLiveBytes)),
    ...extra,
  };
}

/**
 * The rows of the grouped list. `sorted`: every process in the list's order; `growthOrder` −1/1 orders the groups
 * by their largest growth (most first / least first), 0 by host name (the groups' own order).
 */
export function groupedRows(
  groups: readonly ProcessGroup[],
  sorted: readonly ProcessSummary[],
  processes: readonly ProcessSummary[],
  matter: ReadonlyMap<number, readonly string[]>,
  query: string,
  growthOrder: number,
): ShownGroup[] {
  const pos = new Map(sorted.map((p, k) => [p.index, k]));
  const inOrder = (idx: readonly number[]): ProcessSummary[] =>
    idx
      .map((i) => processes[i])
      .filter((p) => p !== undefined && matches(p, query))
      .sort((a, b) => (pos.get(a.index) ?? 0) - (pos.get(b.index) ?? 0));
  const out: ShownGroup[] = [];
  const important = inOrder([...matter.keys()]);
  if (important.length > 0) {
    const why = new Map<string, number>();
    for (const p of important) for (const w of matter.get(p.index) ?? []) why.set(w, (why.get(w) ?? 0) + 1);
    out.push({
      key: 'matter',
      level: 0,
      parent: null,
      host: null,
      fates: [...why].map(([w, n]) => `${w} ${n}`).join(' · '),
      title: 'killed, the first suspects’ top holders and the outliers of growth (as `heaplens growth` lists them)',
      ...counted('processes that matter', important),
    });
  }
  const growth = (p: ProcessSummary) => p.lastLiveBytes - p.firstLiveBytes;
  const byHost = new Map<string, ProcessGroup[]>();
  for (const g of groups) {
    const k = g.host ?? '';
    byHost.set(k, [...(byHost.get(k) ?? []), g]);
  }
  const hosts = [...byHost].map(([host, gs]) => {
    const rows: ShownGroup[] = [];
    const all = inOrder(gs.flatMap((g) => g.processIndexes));
    // the host's fates: its groups' counts summed, in the groups' (FATE_ORDER) order
    const fateSum = new Map<Fate, number>();
    for (const x of gs) for (const f of x.fates) fateSum.set(f.fate, (fateSum.get(f.fate) ?? 0) + f.count);
    const fates = [...fateSum].map(([f, n]) => `${fateText(f)} ${n}`).join(' · ');
    const hostKey = `host:${host}`;
    const name = host === '' ? 'no host' : host;
    if (gs.length === 1) {
      const g = gs[0];
      const label = `${name} · ${g.role === 'process' ? g.command : `${g.role}s: ${g.command}`}`;
      rows.push({
        key: hostKey,
        level: 0,
        parent: null,
        host: g.host,
        fates: g.fates.map((f) => `${fateText(f.fate)} ${f.count}`).join(' · '),
        title: `${label}: ${g.processIndexes.length} processes`,
        ...counted(label, all),
      });
    } else {
      rows.push({
        key: hostKey,
        level: 0,
        parent: null,
        host: host === '' ? null : host,
        fates,
        title: `${name}: ${all.length} processes in ${gs.length} roles/commands`,
        ...counted(name, all, { rows: [] }),
      });
      for (const g of gs) {
        const list = inOrder(g.processIndexes);
        if (list.length === 0) continue;
        const label = g.role === 'process' ? g.command : `${g.role}s: ${g.command}`;
        rows.push({
          key: `${hostKey}\u0000${g.key}`,
          level: 1,
          parent: hostKey,
          host: g.host,
          fates: g.fates.map((f) => `${fateText(f.fate)} ${f.count}`).join(' · '),
          title: `${name} · ${label}: ${g.processIndexes.length} processes`,
          ...counted(label, list),
        });
      }
    }
    return { rows, top: Math.max(-Infinity, ...all.map(growth)), n: all.length };
  });
  const shown = hosts.filter((h) => h.n > 0);
  if (growthOrder !== 0) shown.sort((a, b) => growthOrder * (a.top - b.top));
  for (const h of shown) out.push(...h.rows);
  return out;
}
