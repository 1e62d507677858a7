// What the capture tests share: the library's build, the interpreters they run it under, a memory
// cgroup of their own, and the completeness checks of what the library leaves behind (with our readers).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { nodeInputFile } from '../../node/io/node-files.js';
import { readDump } from '../../core/formats/read-dump.js';
import { parsePyFrames, pyFramesTokenFromMaps } from '../../core/formats/pyframes.js';
import { findPythons } from '../../tools/find-pythons.js';

export const root = resolve(import.meta.dirname, '../..');
export const JEMALLOC = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2';
export const LIBRARY = join(root, 'native-tools/capture/build/libheaplens_capture.so');
/** every distinct CPython 3.9–3.13 build on this machine (tools/find-pythons.ts); the kill tests use the first */
export const PYTHON_SEARCH = findPythons();
export const PYTHONS = PYTHON_SEARCH.found.map((f) => f.path);

/**
 * The function name the library records for a function of qualified name `qualname` under CPython `minor`
 * ("3.10"): the code object's co_qualname from 3.11, its co_name (the qualified name's last part) before.
 */
export function recordedName(qualname: string, minor: string): string {
  return Number(minor.split('.')[1]) >= 11 ? qualname : qualname.slice(qualname.lastIndexOf('.') + 1);
}
export const haveGcc = spawnSync('gcc', ['--version']).status === 0;
export const captureReady = existsSync(JEMALLOC) && haveGcc && PYTHONS.length > 0;

const SOURCES = ['heaplens_capture.c', 'py_offsets.h', 'py_layout.h', 'build.sh'].map((f) =>
  join(root, 'native-tools/capture', f),
);

/**
 * Builds the library unless the build is newer than every source (build.sh renames its output into place, so
 * parallel test files may both build). `always` builds regardless (the test that the build works).
 */
export function buildLibrary(always = false): void {
  const built = existsSync(LIBRARY) ? statSync(LIBRARY).mtimeMs : -1;
  if (!always && SOURCES.every((f) => statSync(f).mtimeMs < built)) return;
  execFileSync('bash', [join(root, 'native-tools/capture/build.sh')], { stdio: 'pipe' });
}

export interface OwnCgroup {
  version: 'v1' | 'v2';
  dir: string;
  limitFile: string;
  usageFile: string;
}

/** A child memory cgroup we may create under this process's own (root only; v2 if delegated, else v1). */
export function ownMemoryCgroup(tag = 'test'): OwnCgroup | null {
  if (process.getuid?.() !== 0) return null;
  const lines = readFileSync('/proc/self/cgroup', 'utf8').split('\n');
  const name = `heaplens-capture-${tag}-${process.pid}`;
  const v2 = lines.find((l) => l.startsWith('0::'))?.slice(3);
  if (
    v2 !== undefined &&
    existsSync(`/sys/fs/cgroup${v2}/cgroup.subtree_control`) &&
    readFileSync(`/sys/fs/cgroup${v2}/cgroup.subtree_control`, 'utf8').includes('memory')
  ) {
    return {
      version: 'v2',
      dir: `/sys/fs/cgroup${v2 === '/' ? '' : v2}/${name}`,
      limitFile: 'memory.max',
      usageFile: 'memory.current',
    };
  }
  const v1 = lines.find((l) => /^\d+:memory:/.test(l))?.split(':')[2];
  if (v1 !== undefined && existsSync(`/sys/fs/cgroup/memory${v1}/memory.limit_in_bytes`)) {
    return {
      version: 'v1',
      dir: `/sys/fs/cgroup/memory${v1 === '/' ? '' : v1}/${name}`,
      limitFile: 'memory.limit_in_bytes',
      usageFile: 'memory.usage_in_bytes',
    };
  }
  return null;
}

export interface DumpCheck {
  /** the dump reads to its end: no cut line, a complete maps section */
  complete: boolean;
  problem: string | null;
  /** its sidecar: present, ends with END, and its token is the one the dump's maps name */
  sidecar: 'complete' | 'missing' | 'incomplete' | 'foreign';
}

/** Reads one dump and its `<dump>.pyframes` with our own readers. */
export async function checkDump(path: string): Promise<DumpCheck> {
  const st = statSync(path);
  const { info } = await readDump(nodeInputFile(path, path, st.size, st.mtimeMs));
  const complete = info.fatal === null && info.truncated === null && info.mapsText !== null && info.mapsComplete;
  const problem = info.fatal?.message ?? info.truncated?.reason ?? (info.mapsText === null ? 'no maps section' : null);
  let sidecar: DumpCheck['sidecar'] = 'missing';
  if (existsSync(path + '.pyframes')) {
    const t = parsePyFrames(readFileSync(path + '.pyframes', 'utf8'));
    const token = pyFramesTokenFromMaps(info.mapsText);
    sidecar = !t || !t.complete ? 'incomplete' : token !== null && t.token !== token ? 'foreign' : 'complete';
  }
  return { complete, problem, sidecar };
}
