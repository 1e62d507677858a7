// What `heaplens capture` finds on the machine before it starts the job: jemalloc, the capture library shipped with
// this package, the memory limit the job will run under; and what it finds in the dumps' folder afterwards.

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isCaptureTempName, parseDumpName } from '../../core/formats/dump-filename.js';

/** Where distributions and conda put jemalloc's shared library (Debian/Ubuntu, Fedora/RHEL, Alpine, /usr/local, conda). */
export function jemallocCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  const list = [
    '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2',
    '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2',
    '/usr/lib64/libjemalloc.so.2',
    '/usr/lib/libjemalloc.so.2',
    '/usr/local/lib/libjemalloc.so.2',
    '/usr/local/lib64/libjemalloc.so.2',
  ];
  for (const prefix of [env.CONDA_PREFIX, env.VIRTUAL_ENV]) if (prefix) list.push(join(prefix, 'lib/libjemalloc.so.2'));
  return list;
}

/** jemalloc in the usual places, else the dynamic linker's cache (`ldconfig -p`); null when neither has it. */
export function findJemalloc(env: NodeJS.ProcessEnv = process.env): string | null {
  const found = jemallocCandidates(env).find((p) => existsSync(p));
  if (found) return found;
  const r = spawnSync('ldconfig', ['-p'], { encoding: 'utf8', timeout: 5_000 });
  const m = r.status === 0 ? /libjemalloc\.so\.2 \([^)]*\) => (\S+)/.exec(r.stdout) : null;
  return m && existsSync(m[1]) ? m[1] : null;
}

const LIBRARY = 'native-tools/capture/build/libheaplens_capture.so';

/**
 * The package's root (the folder holding native-tools/capture/build.sh), found from this module's own place: the
 * sources (node/cli), tsc's output (dist/node/cli) or the bundle (dist/node/cli/bundle), wherever the shell stands.
 */
export function packageRoot(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'native-tools/capture/build.sh'))) return dir;
    dir = dirname(dir);
  }
  return null;
}

/** The capture library: HEAPLENS_CAPTURE_LIBRARY, else the package's build; the path it should be at when missing. */
export function captureLibrary(env: NodeJS.ProcessEnv = process.env): {
  path: string;
  built: boolean;
  root: string | null;
} {
  if (env.HEAPLENS_CAPTURE_LIBRARY)
    return { path: env.HEAPLENS_CAPTURE_LIBRARY, built: existsSync(env.HEAPLENS_CAPTURE_LIBRARY), root: null };
  const root = packageRoot();
  const path = join(root ?? '.', LIBRARY);
  return { path, built: existsSync(path), root };
}

/** The cgroup lines of /proc/self/cgroup: v2's path and v1's memory controller's path. */
export function cgroupPaths(procSelfCgroup: string): { v2: string | null; v1memory: string | null } {
  const lines = procSelfCgroup.split('\n');
  const v2 = lines.find((l) => l.startsWith('0::'))?.slice(3) ?? null;
  const v1 = lines.find((l) => /^\d+:([^:]*,)?memory(,[^:]*)?:/.test(l));
  return { v2, v1memory: v1 ? v1.slice(v1.indexOf(':', v1.indexOf(':') + 1) + 1) : null };
}

/** v1's "no limit" is the largest page-aligned value (9223372036854771712): anything past 2^62 is none. */
const V1_UNLIMITED = 2 ** 62;

/**
 * The memory limit this process (and so the job it starts) runs under: the smallest `memory.max` (v2) or
 * `memory.limit_in_bytes` (v1) of its cgroup and the cgroups above it; null when none is set or readable.
 */
export function cgroupMemoryLimit(read: (path: string) => string | null = readOrNull): number | null {
  const self = read('/proc/self/cgroup');
  if (self === null) return null;
  const { v2, v1memory } = cgroupPaths(self);
  const limits: number[] = [];
  const walk = (base: string, path: string, file: string) => {
    let p = path === '/' ? '' : path;
    for (;;) {
      const t = read(`${base}${p}/${file}`)?.trim();
      if (t !== undefined && /^\d+$/.test(t) && Number(t) < V1_UNLIMITED) limits.push(Number(t));
      if (p === '') break;
      p = p.slice(0, p.lastIndexOf('/'));
    }
  };
  if (v1memory !== null) walk('/sys/fs/cgroup/memory', v1memory, 'memory.limit_in_bytes');
  if (v2 !== null) walk('/sys/fs/cgroup', v2, 'memory.max');
  return limits.length > 0 ? Math.min(...limits) : null;
}

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

export interface DumpCount {
  dumps: number;
  /** pid → its dumps */
  byPid: Map<number, number>;
  /** dumps written at exit (prof_final) */
  final: number;
  /** dumps without their `.pyframes` table (no Python frames or context for them) */
  withoutTable: number;
  /** `<dump>.tmp` files: dumps cut by a kill or a full disk (readers skip them) */
  cut: number;
}

/** The dumps in a folder (not its subfolders): what capture says it wrote. */
export function countDumps(dir: string): DumpCount {
  const names = existsSync(dir) ? readdirSync(dir) : [];
  const set = new Set(names);
  const c: DumpCount = { dumps: 0, byPid: new Map(), final: 0, withoutTable: 0, cut: 0 };
  for (const n of names) {
    if (isCaptureTempName(n)) {
      if (n.endsWith('.heap.tmp')) c.cut++;
      continue;
    }
    const d = parseDumpName(n);
    if (!d) continue;
    c.dumps++;
    c.byPid.set(d.pid, (c.byPid.get(d.pid) ?? 0) + 1);
    if (d.trigger === 'final') c.final++;
    if (!set.has(`${n}.pyframes`)) c.withoutTable++;
  }
  return c;
}
