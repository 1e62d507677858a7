// Reader of /proc/<pid>/smaps_rollup copies (the kernel's fs/proc/task_mmu.c show_smaps_rollup: a
// "[rollup]" header line, then `Key:   N kB` lines): one copy, or a series of samples each headed by
// `# pid=P realtime_ms=T [monotonic_s=S]` as fixtures/oom-job/make-oom-job.sh writes them. The private /
// shared split is what a forked child's copy-on-write pages show up in (Private_Dirty beyond its own heap).

export interface SmapsSample {
  pid: number | null;
  /** wall clock of the sample, ms since the epoch, when the sample is headed by one */
  atMs: number | null;
  line: number;
  rss: number;
  pss: number | null;
  privateDirty: number | null;
  privateClean: number | null;
  sharedDirty: number | null;
  sharedClean: number | null;
  anonymous: number | null;
  swap: number | null;
}

export interface SmapsRollup {
  samples: SmapsSample[];
  warnings: { line: number; message: string }[];
}

const KEYS: Record<string, keyof SmapsSample> = {
  Rss: 'rss',
  Pss: 'pss',
  Private_Dirty: 'privateDirty',
  Private_Clean: 'privateClean',
  Shared_Dirty: 'sharedDirty',
  Shared_Clean: 'sharedClean',
  Anonymous: 'anonymous',
  Swap: 'swap',
};

export function looksLikeSmapsRollup(text: string): boolean {
  return /\[rollup\]\s*\n/.test(text.slice(0, 64 * 1024)) && /\nRss:\s+\d+ kB/.test(text.slice(0, 64 * 1024));
}

/** `pidFromPath`: the pid of a bare copy (proc/<pid>/smaps_rollup, smaps_rollup.<pid>). */
export function parseSmapsRollup(text: string, pidFromPath: number | null = null): SmapsRollup | null {
  if (!looksLikeSmapsRollup(text)) return null;
  const samples: SmapsSample[] = [];
  const warnings: SmapsRollup['warnings'] = [];
  let head: { pid: number | null; atMs: number | null } = { pid: pidFromPath, atMs: null };
  let cur: SmapsSample | null = null;
  const flush = (): void => {
    if (!cur) return;
    if (cur.rss >= 0) samples.push(cur);
    else warnings.push({ line: cur.line, message: 'a sample without its Rss line (cut copy): skipped' });
    cur = null;
  };
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (l.startsWith('# ')) {
      flush();
      const pid = /\bpid=(\d{1,10})\b/.exec(l);
      const t = /\brealtime_ms=(\d{1,16})\b/.exec(l);
      head = { pid: pid ? Number(pid[1]) : pidFromPath, atMs: t ? Number(t[1]) : null };
      continue;
    }
    if (/ \[rollup\]\s*$/.test(l)) {
      flush();
      cur = {
        ...head,
        line: i + 1,
        rss: -1,
        pss: null,
        privateDirty: null,
        privateClean: null,
        sharedDirty: null,
        sharedClean: null,
        anonymous: null,
        swap: null,
      };
      continue;
    }
    const m = /^([A-Za-z_]{1,32}):\s+(\d{1,15}) kB$/.exec(l);
    if (m && cur) {
      const k = KEYS[m[1]];
      if (k) (cur as unknown as Record<string, number>)[k] = Number(m[2]) * 1024;
    }
  }
  flush();
  return { samples, warnings };
}
