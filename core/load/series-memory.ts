// Each snapshot's memory figures for charts and tables: the capture context's, with RSS from an RSS
// log (core/load/rss-log-align.ts) where the dump has no context of its own.
import type { ProcessSeries } from '../model/model.js';
import { memoryPoint, type MemoryPoint } from '../model/memory-context.js';
import { rssFromLog } from './rss-log-align.js';

export interface SeriesMemoryPoint extends MemoryPoint {
  /** where `rss` came from */
  rssSource: 'context' | 'log' | null;
}

export function seriesMemory(p: Pick<ProcessSeries, 'snapshots' | 'rssLog'>): SeriesMemoryPoint[] {
  const fromLog = p.rssLog ? rssFromLog(p) : null;
  return p.snapshots.map((s, i) => {
    const m = memoryPoint(s);
    if (m.rss !== null) return { ...m, rssSource: 'context' };
    const r = fromLog?.[i] ?? null;
    return { ...m, rss: r, rssSource: r !== null ? 'log' : null };
  });
}
