// Heap vs RSS in words, as the memory chart's legend names the band between them: the part outside the heap and
// what the post-mortem says it is (core/stats/memory-outside-heap.ts `explanation`), with its figures.

import type { ProcessView } from '../../../core/query/postmortem-view.ts';
import { explanationWords, type MemoryExplanation } from '../../../core/stats/memory-outside-heap.ts';
import { formatBytes } from '../lib/format.ts';

/** the band's colour (Okabe–Ito reddish purple, RSS's own, lighter) */
export const OUTSIDE_COLOR = '#CC79A7';

const PART: Record<Exclude<MemoryExplanation, 'heap' | 'unknown'>, keyof ProcessView['memory']['parts']> = {
  'copy-on-write': 'copyOnWrite',
  'likely-copy-on-write': 'copyOnWrite',
  'allocator-retained': 'allocatorRetained',
  fragmentation: 'fragmentation',
  'shared-memory': 'sharedMemory',
  'not-malloc': 'notMalloc',
};

/** what each name means, for the tooltip */
const MEANS: Record<MemoryExplanation, string> = {
  'copy-on-write':
    "pages this forked process copied from its parent's (a write to an inherited page, such as a Python reference count, copies it): not allocations",
  'allocator-retained': 'pages jemalloc freed but still holds (dirty/muzzy, not yet returned to the kernel)',
  fragmentation: "jemalloc's active pages beyond what is allocated (size-class and run fragmentation)",
  'shared-memory': 'shared memory mapped by the process (/dev/shm, memfd): charged to the cgroup, in no heap',
  'not-malloc': 'memory no malloc call explains: mmap, thread stacks, the interpreter and libraries, GPU driver pages',
  heap: 'the RSS is what the heap estimate explains (what is outside is small)',
  'likely-copy-on-write':
    "without page counts the copies cannot be measured: a forked process's memory beyond its own heap is most likely its parent's pages it wrote (copy-on-write) or still shares",
  unknown: 'without page counts (Private_Dirty, Pss…) the part outside the heap cannot be told apart',
};

export function outsideText(
  m: ProcessView['memory'] | null | undefined,
): { explanation: MemoryExplanation; text: string; title: string } | null {
  if (!m || m.explanation === null || m.outsideHeapBytes === null || m.rssBytes === null) return null;
  const e = m.explanation;
  const part = e === 'heap' || e === 'unknown' ? null : m.parts[PART[e]];
  const words = explanationWords(m, formatBytes) ?? e;
  const text =
    e === 'heap'
      ? `outside the heap: little (${formatBytes(m.outsideHeapBytes)})`
      : `outside the heap ${formatBytes(m.outsideHeapBytes)}: ${words}${part !== null && formatBytes(part) !== formatBytes(m.outsideHeapBytes) ? ` ${formatBytes(part)}` : ''}`;
  return {
    explanation: e,
    text,
    title: `at the end: RSS ${formatBytes(m.rssBytes)}, heap ${formatBytes(m.heapBytes)}, outside the heap ${formatBytes(m.outsideHeapBytes)}; ${e}: ${MEANS[e]}${m.source ? ` [${m.source}]` : ''}`,
  };
}
