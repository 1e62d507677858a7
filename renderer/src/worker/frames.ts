// Frame labels and kinds for one process, from its interned addresses and its maps (module+0xoffset) until
// symbolization provides function/file/line. Python pseudo-addresses (PYFRAMES/1: 0x7079<<48 | kind<<44 | id<<4)
// are recognised so views can colour, keep or drop them before the Python-frame tables are integrated.

import type { MapsEntry } from '../../../parsers/proc-maps.ts';
import type { ProcessSeries } from '../../../analysis/model.ts';
import type { FrameInfo, FrameKind, StackMode } from '../lib/protocol.ts';

const PY_TAG = 0x7079n;

export interface SymbolizedFrame {
  function: string | null;
  file: string | null;
  line: number | null;
  module?: string | null;
  inlined?: boolean;
  kind?: FrameKind;
  unverified?: boolean;
}

/** Per-address frame expansion (innermost first) into frame keys, plus the frame table. */
export interface FrameTable {
  frames: FrameInfo[];
  /** addressId → [start, end) into expandKeys */
  expandStart: Int32Array;
  expandKeys: Int32Array;
  /** per mode, the same expansion with frames of other kinds dropped */
  expandFor(mode: StackMode): (addressId: number) => ArrayLike<number>;
  hasPython: boolean;
}

export function basename(p: string): string {
  const i = p.lastIndexOf('/');
  return i >= 0 ? p.slice(i + 1) : p;
}

/** Index of the mapping containing `addr`, or -1 (maps sorted by start). */
export function findMapping(maps: MapsEntry[], addr: bigint): number {
  let lo = 0;
  let hi = maps.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const m = maps[mid];
    if (addr < m.start) hi = mid - 1;
    else if (addr >= m.end) lo = mid + 1;
    else return mid;
  }
  return -1;
}

const ALLOCATOR_MODULE = /(^|\/)lib(jemalloc|tcmalloc|je_malloc)[^/]*$/;

export function moduleKind(path: string, mainExe: string | null): FrameKind {
  if (path === '') return 'unknown';
  if (ALLOCATOR_MODULE.test(path)) return 'allocator';
  if (mainExe !== null && path === mainExe) return 'program';
  if (path.startsWith('[')) return 'unknown';
  return 'library';
}

/** The main executable: the first file mapping at the lowest address that is not a shared library. */
export function guessMainExecutable(maps: MapsEntry[] | null): string | null {
  if (!maps) return null;
  for (const m of maps) {
    if (m.path === '' || m.path.startsWith('[')) continue;
    if (/\.so(\.|$)/.test(basename(m.path))) continue;
    return m.path;
  }
  return null;
}

export function isPythonPseudo(addr: bigint): boolean {
  return addr >> 48n === PY_TAG;
}

export function buildFrameTable(
  proc: ProcessSeries,
  symbolized?: (addressId: number) => SymbolizedFrame[] | null,
): FrameTable {
  const maps = proc.maps ?? [];
  const mainExe = guessMainExecutable(proc.maps);
  const frames: FrameInfo[] = [];
  const keyByDescriptor = new Map<string, number>();
  const n = proc.addresses.hex.length;
  const expandStart = new Int32Array(n + 1);
  const keys: number[] = [];
  let hasPython = false;
  const intern = (descriptor: string, make: (key: number) => FrameInfo): number => {
    let k = keyByDescriptor.get(descriptor);
    if (k === undefined) {
      k = frames.length;
      frames.push(make(k));
      keyByDescriptor.set(descriptor, k);
    }
    return k;
  };
  for (let a = 0; a < n; a++) {
    expandStart[a] = keys.length;
    const hex = proc.addresses.hex[a];
    let addr: bigint;
    try {
      addr = BigInt(hex);
    } catch {
      addr = 0n;
    }
    const sym = symbolized ? symbolized(a) : null;
    if (sym && sym.length > 0) {
      for (let i = 0; i < sym.length; i++) {
        const s = sym[i];
        const kind = s.kind ?? (isPythonPseudo(addr) ? 'python' : moduleKind(s.module ?? '', mainExe));
        if (kind === 'python') hasPython = true;
        const desc = `f|${s.function ?? hex}|${s.file ?? ''}|${s.module ?? ''}|${kind}`;
        keys.push(
          intern(desc, (key) => ({
            key,
            label: s.function ?? hex,
            function: s.function,
            file: s.file,
            line: s.line,
            module: s.module ? basename(s.module) : null,
            modulePath: s.module ?? null,
            offset: null,
            address: hex,
            inlined: s.inlined ?? i < sym.length - 1,
            kind,
            unverified: s.unverified ?? false,
          })),
        );
      }
      continue;
    }
    if (isPythonPseudo(addr)) {
      const pyKind = Number((addr >> 44n) & 0xfn);
      if (pyKind === 2 || pyKind === 3) continue; // entry / unmerged markers carry no frame
      hasPython = true;
      const id = Number((addr >> 4n) & 0xffffffffffn);
      const label = pyKind === 4 ? '… (Python stack truncated)' : `python frame #${id}`;
      keys.push(
        intern(`py|${hex}`, (key) => ({
          key,
          label,
          function: null,
          file: null,
          line: null,
          module: null,
          modulePath: null,
          offset: null,
          address: hex,
          inlined: false,
          kind: 'python',
          unverified: false,
        })),
      );
      continue;
    }
    const mi = findMapping(maps, addr);
    if (mi < 0) {
      keys.push(
        intern(`a|${hex}`, (key) => ({
          key,
          label: hex,
          function: null,
          file: null,
          line: null,
          module: null,
          modulePath: null,
          offset: null,
          address: hex,
          inlined: false,
          kind: 'unknown',
          unverified: false,
        })),
      );
      continue;
    }
    const m = maps[mi];
    const off = '0x' + (addr - m.start + m.offset).toString(16);
    const mod = basename(m.path) || '[anon]';
    const label = `${mod}+${off}`;
    keys.push(
      intern(`m|${label}`, (key) => ({
        key,
        label,
        function: null,
        file: null,
        line: null,
        module: mod,
        modulePath: m.path || null,
        offset: off,
        address: hex,
        inlined: false,
        kind: moduleKind(m.path, mainExe),
        unverified: false,
      })),
    );
  }
  expandStart[n] = keys.length;
  const expandKeys = Int32Array.from(keys);
  const cache = new Map<StackMode, (a: number) => ArrayLike<number>>();
  const expandFor = (mode: StackMode): ((a: number) => ArrayLike<number>) => {
    const hit = cache.get(mode);
    if (hit) return hit;
    let fn: (a: number) => ArrayLike<number>;
    if (mode === 'merged') fn = (a) => expandKeys.subarray(expandStart[a], expandStart[a + 1]);
    else {
      const keep = (k: number): boolean => (mode === 'python' ? frames[k].kind === 'python' : frames[k].kind !== 'python');
      const per: Int32Array[] = new Array(n);
      for (let a = 0; a < n; a++) per[a] = expandKeys.subarray(expandStart[a], expandStart[a + 1]).filter(keep);
      fn = (a) => per[a];
    }
    cache.set(mode, fn);
    return fn;
  };
  return { frames, expandStart, expandKeys, expandFor, hasPython };
}
