// Reader of a memory cgroup's files as copied off the machine, cgroup v2 (Documentation/admin-guide/cgroup-v2.rst,
// "Memory Interface Files": memory.events, memory.peak, memory.max, memory.current, memory.stat) and v1
// (Documentation/admin-guide/cgroup-v1/memory.rst: memory.oom_control, memory.max_usage_in_bytes,
// memory.limit_in_bytes, memory.usage_in_bytes, memory.failcnt, memory.stat). The keyed files are known by
// their content; a file holding one number says nothing of what it counts, so for those the name decides.

export type CgroupFileKind =
  | 'memory.events'
  | 'memory.oom_control'
  | 'memory.stat'
  | 'memory.max'
  | 'memory.peak'
  | 'memory.current'
  | 'memory.limit_in_bytes'
  | 'memory.max_usage_in_bytes'
  | 'memory.usage_in_bytes'
  | 'memory.failcnt';

export interface CgroupFile {
  kind: CgroupFileKind;
  version: 1 | 2;
  /** keyed files: every `key value` line; one-number files: { value } (null for "max": no limit) */
  values: Record<string, number | null>;
  warnings: { line: number; message: string }[];
}

/**
 * v1 reports "no limit" as the largest page-aligned counter (PAGE_COUNTER_MAX × PAGE_SIZE, 9223372036854771712
 * on x86-64); anything this large is no limit.
 */
export const V1_UNLIMITED = 2 ** 62;

const SINGLE: Record<string, { kind: CgroupFileKind; version: 1 | 2 }> = {
  'memory.max': { kind: 'memory.max', version: 2 },
  'memory.peak': { kind: 'memory.peak', version: 2 },
  'memory.current': { kind: 'memory.current', version: 2 },
  'memory.limit_in_bytes': { kind: 'memory.limit_in_bytes', version: 1 },
  'memory.max_usage_in_bytes': { kind: 'memory.max_usage_in_bytes', version: 1 },
  'memory.usage_in_bytes': { kind: 'memory.usage_in_bytes', version: 1 },
  'memory.failcnt': { kind: 'memory.failcnt', version: 1 },
};

const MAX_LINES = 512;

function keyed(text: string): { values: Record<string, number | null>; warnings: CgroupFile['warnings'] } | null {
  const values: Record<string, number | null> = {};
  const warnings: CgroupFile['warnings'] = [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0 || lines.length > MAX_LINES) return null;
  for (let i = 0; i < lines.length; i++) {
    const m = /^([a-z_0-9]{1,64}) (\d{1,20})$/.exec(lines[i]);
    if (!m) {
      // one odd line in an otherwise keyed file (cut copy): named; more than that is not a cgroup file
      if (warnings.length > 0 || i === 0) return null;
      warnings.push({
        line: i + 1,
        message: `not a "key value" line: ${JSON.stringify(lines[i].slice(0, 60))}: skipped`,
      });
      continue;
    }
    values[m[1]] = Number(m[2]);
  }
  return { values, warnings };
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** Reads a cgroup memory file, or null when the text is none. `path` decides only for one-number files. */
export function parseCgroupFile(path: string, text: string): CgroupFile | null {
  const k = keyed(text);
  if (k) {
    const v = k.values;
    if ('oom_kill_disable' in v && 'under_oom' in v) return { kind: 'memory.oom_control', version: 1, ...k };
    if ('oom' in v && 'oom_kill' in v && 'max' in v) return { kind: 'memory.events', version: 2, ...k };
    if ('anon' in v && 'file' in v && 'pgfault' in v) return { kind: 'memory.stat', version: 2, ...k };
    if ('rss' in v && 'cache' in v && 'pgfault' in v) return { kind: 'memory.stat', version: 1, ...k };
  }
  const single = SINGLE[baseName(path)];
  if (!single) return null;
  const t = text.trim();
  if (t === 'max') return { ...single, values: { value: null }, warnings: [] };
  if (!/^\d{1,20}$/.test(t)) return null;
  const n = Number(t);
  const unlimited = single.kind === 'memory.limit_in_bytes' && n >= V1_UNLIMITED;
  return { ...single, values: { value: unlimited ? null : n }, warnings: [] };
}

export interface CgroupMemory {
  version: 1 | 2 | null;
  limitBytes: number | null;
  /** memory.peak / memory.max_usage_in_bytes */
  peakBytes: number | null;
  usageBytes: number | null;
  /** v2 memory.events oom_kill, v1 memory.oom_control oom_kill (kernels ≥ 4.13) */
  oomKills: number | null;
  /** v2 memory.events oom and max: times the limit was hit / reclaim failed */
  oomEvents: number | null;
  maxEvents: number | null;
  highEvents: number | null;
  /** v1 memory.failcnt: charges refused at the limit */
  failcnt: number | null;
  stat: Record<string, number> | null;
  /** which file gave what, for "logs read" */
  files: { file: string; kind: CgroupFileKind }[];
}

/** One cgroup's figures from the files of it that were given. */
export function combineCgroupFiles(files: readonly { file: string; cg: CgroupFile }[]): CgroupMemory {
  const out: CgroupMemory = {
    version: null,
    limitBytes: null,
    peakBytes: null,
    usageBytes: null,
    oomKills: null,
    oomEvents: null,
    maxEvents: null,
    highEvents: null,
    failcnt: null,
    stat: null,
    files: [],
  };
  for (const { file, cg } of files) {
    out.version ??= cg.version;
    out.files.push({ file, kind: cg.kind });
    const v = cg.values;
    switch (cg.kind) {
      case 'memory.max':
      case 'memory.limit_in_bytes':
        out.limitBytes = v.value;
        break;
      case 'memory.peak':
      case 'memory.max_usage_in_bytes':
        out.peakBytes = v.value;
        break;
      case 'memory.current':
      case 'memory.usage_in_bytes':
        out.usageBytes = v.value;
        break;
      case 'memory.failcnt':
        out.failcnt = v.value;
        break;
      case 'memory.oom_control':
        out.oomKills = v.oom_kill ?? null;
        break;
      case 'memory.events':
        out.oomKills = v.oom_kill ?? null;
        out.oomEvents = v.oom ?? null;
        out.maxEvents = v.max ?? null;
        out.highEvents = v.high ?? null;
        break;
      case 'memory.stat':
        out.stat = Object.fromEntries(Object.entries(v).filter((e): e is [string, number] => e[1] !== null));
        break;
    }
  }
  return out;
}
