// What made each dump, as recorded. jemalloc's file name knows only its own triggers (i, m, u, f), so a dump the
// capture library's memory policy asked for through `prof.dump` is named "m" (manual); the dump's context says
// which rule fired (rss-step, cgroup-fraction and its fraction, cgroup-high, cgroup-pressure).

import type { DumpTrigger } from '../formats/dump-context.js';
import type { Trigger } from '../formats/dump-types.js';
import type { Snapshot } from './model.js';

/** The trigger the context recorded, else the one the file name gives. */
export function dumpTrigger(s: Pick<Snapshot, 'trigger' | 'context'>): DumpTrigger | Trigger {
  return s.context?.trigger ?? s.trigger;
}

/** For display: the trigger with the fraction of the limit a cgroup-fraction dump crossed ("cgroup-fraction 0.9"). */
export function dumpTriggerLabel(s: Pick<Snapshot, 'trigger' | 'context'>): string {
  const t = dumpTrigger(s);
  const f = s.context?.triggerFraction ?? null;
  return t === 'cgroup-fraction' && f !== null ? `${t} ${f}` : t;
}
