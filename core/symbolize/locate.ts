// Finding the files behind a mapping: the binary (to turn file offsets into ELF virtual addresses and to check
// it is the build that was mapped) and, when the binary has no DWARF, its separate debug file.

import type { MapsEntry } from '../formats/proc-maps.js';
import { crc32Update } from './crc32.js';
import { ElfError, PF_X, PT_LOAD, readElfInfo, type ElfInfo, type ProgramHeader } from './elf.js';
import { basename } from '../formats/dump-filename.js';
import { dirName, joinPath, type SymbolFile, type SymbolFileSource } from './files.js';

import type { BinaryCheck } from '../model/symbol-table.js';
export type { BinaryCheck };

export interface SearchOptions {
  /** folders given by the user (--symbols): searched as a sysroot-like tree, as a flat folder by file name,
   *  and as debug roots (.build-id/…, usr/lib/debug/…) */
  symbolDirs: string[];
  /** a copy of the job's file system: /usr/lib/x86_64-linux-gnu/libc.so.6 is looked up under it */
  sysroot: string | null;
  /** also try the mapping's own path and /usr/lib/debug on this machine (the CLI on the host that ran the job) */
  hostPaths: boolean;
}

export interface LocatedFile {
  file: SymbolFile;
  info: ElfInfo;
}

export interface LocatedModule {
  /** the mapping's path */
  mappingPath: string;
  binary: LocatedFile;
  check: BinaryCheck;
  /** why the check came out as it did */
  checkReason: string;
  /** separate debug file, when the binary has no DWARF and one was found and matched */
  debug: LocatedFile | null;
  /** what was tried, for diagnostics */
  tried: string[];
}

const PAGE_SIZES = [4096n, 16384n, 65536n];

function alignDown(x: bigint, a: bigint): bigint {
  return x - (x % a);
}
function alignUp(x: bigint, a: bigint): bigint {
  return alignDown(x + a - 1n, a);
}

/** The PT_LOAD segment whose file bytes hold `fileOffset` (page-rounded at the edges, as mmap maps them). */
export function segmentForOffset(info: ElfInfo, fileOffset: bigint, page = 4096n): ProgramHeader | null {
  const loads = info.programHeaders.filter((p) => p.type === PT_LOAD);
  for (const p of loads) {
    if (fileOffset >= p.offset && fileOffset < p.offset + p.filesz) return p;
  }
  for (const p of loads) {
    if (fileOffset >= alignDown(p.offset, page) && fileOffset < alignUp(p.offset + p.filesz, page)) return p;
  }
  return null;
}

/** File offset → ELF virtual address (what `addr2line -e` and DWARF use), or null outside every segment. */
export function fileOffsetToVaddr(info: ElfInfo, fileOffset: bigint): bigint | null {
  const p = segmentForOffset(info, fileOffset);
  return p ? fileOffset - p.offset + p.vaddr : null;
}

/**
 * Checks that `info` can be the file mapped by `entries` (all maps lines with its path). When the mapping names
 * a build-id (pprof profiles) and the file has one, they decide: equal is the same build, different is another.
 * Else (jemalloc's maps carry no build-ids): every mapping lies inside a loadable segment, executable mappings
 * cover executable segments exactly, every mapping implies the same load bias (zero for ET_EXEC), and the file
 * is long enough; a different build of the same source usually differs in segment sizes.
 */
export function checkAgainstMappings(
  info: ElfInfo,
  entries: readonly MapsEntry[],
): { check: BinaryCheck; reason: string } {
  if (entries.length === 0) return { check: 'unverified', reason: 'no mappings to compare with' };
  const wanted = entries.find((e) => e.buildId)?.buildId;
  if (wanted && info.buildId) {
    return info.buildId.toLowerCase() === wanted
      ? { check: 'verified', reason: `build-id ${wanted} matches the mapping's` }
      : {
          check: 'mismatch',
          reason: `another build: the file's build-id is ${info.buildId.toLowerCase()}, the mapping's ${wanted}`,
        };
  }
  if (!info.programHeaders.some((p) => p.type === PT_LOAD)) {
    return { check: 'mismatch', reason: 'file has no loadable segments' };
  }
  let firstReason = '';
  for (const page of PAGE_SIZES) {
    const r = checkWithPage(info, entries, page);
    if (r.check !== 'mismatch') return r;
    if (!firstReason) firstReason = r.reason;
  }
  return { check: 'mismatch', reason: firstReason };
}

function checkWithPage(
  info: ElfInfo,
  entries: readonly MapsEntry[],
  page: bigint,
): { check: BinaryCheck; reason: string } {
  const loads = info.programHeaders.filter((p) => p.type === PT_LOAD);
  const fileEnd = alignUp(BigInt(info.fileSize), page);
  // Segments can share a page in the file (RELRO data right after .rodata), so a mapping may belong to
  // more than one segment by offset; the load bias decides which.
  const candidates = (e: MapsEntry): ProgramHeader[] =>
    loads.filter((p) => e.offset >= alignDown(p.offset, page) && e.offset < alignUp(p.offset + p.filesz, page));
  // Runtime address of the mapping start minus the ELF address of the same file byte.
  const biasOf = (e: MapsEntry, p: ProgramHeader): bigint => e.start - (e.offset - p.offset + p.vaddr);
  let bias: bigint | null = null;
  for (const e of entries) {
    const exec = e.perms[2] === 'x';
    const seg = candidates(e).find((p) => !exec || (p.flags & PF_X) !== 0);
    if (seg && (exec || bias === null)) {
      bias = biasOf(e, seg);
      if (exec) break;
    }
  }
  if (bias === null) return { check: 'mismatch', reason: 'no mapping lies inside a loadable segment' };
  let exactExec = 0;
  for (const e of entries) {
    const size = e.end - e.start;
    const hex = '0x' + e.offset.toString(16);
    if (e.offset >= fileEnd)
      return { check: 'mismatch', reason: `mapping at file offset ${hex} is past the end of the file` };
    const seg = candidates(e).find((p) => biasOf(e, p) === bias);
    if (!seg)
      return {
        check: 'mismatch',
        reason: `mapping at file offset ${hex} fits no loadable segment at the common load address`,
      };
    const segStart = alignDown(seg.offset, page);
    const segEnd = alignUp(seg.offset + seg.filesz, page);
    if (e.perms[2] === 'x') {
      if (!(seg.flags & PF_X))
        return { check: 'mismatch', reason: `executable mapping at ${hex} is a non-executable segment in the file` };
      if (e.offset + size > segEnd)
        return { check: 'mismatch', reason: `executable mapping at ${hex} is longer than its segment` };
      if (e.offset === segStart && e.offset + size === segEnd) exactExec++;
    } else if (e.offset + size > alignUp(seg.offset + seg.memsz, page) + page) {
      return { check: 'mismatch', reason: `mapping at ${hex} is longer than its segment` };
    }
  }
  if (info.type === 2 && bias !== 0n)
    return { check: 'mismatch', reason: 'non-PIE executable mapped at another address' };
  if (exactExec > 0) return { check: 'verified', reason: `segments match ${entries.length} mapping(s)` };
  return { check: 'unverified', reason: 'no executable mapping to compare segment sizes with' };
}

/** ELF virtual address of `pc` inside mapping `e`: through the segment that mapping holds. */
const loadSegments = new WeakMap<ElfInfo, ProgramHeader[]>();

export function pcToVaddr(info: ElfInfo, e: MapsEntry, pc: bigint): bigint | null {
  const fileOffset = pc - e.start + e.offset;
  const exec = e.perms[2] === 'x';
  let loads = loadSegments.get(info);
  if (!loads) loadSegments.set(info, (loads = info.programHeaders.filter((p) => p.type === PT_LOAD)));
  const holds = (p: ProgramHeader): boolean => fileOffset >= p.offset && fileOffset < p.offset + p.filesz;
  const seg =
    loads.find((p) => holds(p) && (!exec || (p.flags & PF_X) !== 0)) ??
    loads.find(holds) ??
    segmentForOffset(info, fileOffset);
  return seg ? fileOffset - seg.offset + seg.vaddr : null;
}

function binaryCandidates(mappingPath: string, opts: SearchOptions, buildId?: string): string[] {
  const out: string[] = [];
  const abs = mappingPath.startsWith('/');
  const base = basename(mappingPath);
  for (const d of opts.symbolDirs) {
    if (abs) out.push(joinPath(d, mappingPath));
    out.push(joinPath(d, base));
    // a build-id the mapping names finds the binary in a debug root's .build-id/ab/cdef… (gdb's, debuginfod's layout)
    if (buildId && buildId.length > 2) out.push(joinPath(d, '.build-id', buildId.slice(0, 2), buildId.slice(2)));
  }
  if (opts.sysroot && abs) out.push(joinPath(opts.sysroot, mappingPath));
  if (opts.hostPaths && abs) out.push(mappingPath);
  return [...new Set(out)];
}

function debugRoots(opts: SearchOptions): string[] {
  const roots: string[] = [];
  for (const d of opts.symbolDirs) roots.push(d, joinPath(d, 'usr/lib/debug'));
  if (opts.sysroot) roots.push(joinPath(opts.sysroot, 'usr/lib/debug'));
  if (opts.hostPaths) roots.push('/usr/lib/debug');
  return [...new Set(roots)];
}

async function crcOfFile(file: SymbolFile): Promise<number> {
  let crc = 0;
  const chunk = 4 << 20;
  for (let off = 0; off < file.size; off += chunk) {
    crc = crc32Update(crc, await file.read(off, Math.min(chunk, file.size - off)));
  }
  return crc;
}

async function tryOpenElf(source: SymbolFileSource, path: string, tried: string[]): Promise<LocatedFile | null> {
  tried.push(path);
  const file = await source.open(path);
  if (!file) return null;
  try {
    return { file, info: await readElfInfo(file) };
  } catch (e) {
    await file.close();
    if (e instanceof ElfError || e instanceof RangeError) {
      tried.push(`${path}: ${e.message}`);
      return null;
    }
    throw e;
  }
}

/** Finds the separate debug file of `binary` by build-id, then by .gnu_debuglink; checks it belongs. */
export async function locateDebugFile(
  source: SymbolFileSource,
  mappingPath: string,
  binary: LocatedFile,
  opts: SearchOptions,
  tried: string[],
): Promise<LocatedFile | null> {
  const id = binary.info.buildId;
  const roots = debugRoots(opts);
  if (id && id.length > 2) {
    for (const r of roots) {
      const got = await tryOpenElf(source, joinPath(r, '.build-id', id.slice(0, 2), id.slice(2) + '.debug'), tried);
      if (!got) continue;
      if (got.info.buildId === id && got.info.hasDwarf) return got;
      await got.file.close();
    }
  }
  const link = binary.info.debugLink;
  if (link) {
    const dir = dirName(binary.file.path);
    const mapDir = dirName(mappingPath);
    const paths = [joinPath(dir, link.file), joinPath(dir, '.debug', link.file)];
    for (const r of roots) paths.push(joinPath(r, mapDir, link.file), joinPath(r, link.file));
    for (const p of [...new Set(paths)]) {
      if (p === binary.file.path) continue;
      const got = await tryOpenElf(source, p, tried);
      if (!got) continue;
      // Same build-id is proof; without build-ids fall back to the CRC the binary recorded.
      const ok =
        got.info.hasDwarf &&
        (id && got.info.buildId ? got.info.buildId === id : (await crcOfFile(got.file)) === link.crc);
      if (ok) return got;
      await got.file.close();
    }
  }
  return null;
}

/** Finds and checks the binary for a mapping, then its debug file if it lacks DWARF. */
export async function locateModule(
  source: SymbolFileSource,
  mappingPath: string,
  entries: readonly MapsEntry[],
  opts: SearchOptions,
): Promise<LocatedModule | null> {
  const tried: string[] = [];
  let best: { f: LocatedFile; check: BinaryCheck; reason: string } | null = null;
  for (const p of binaryCandidates(mappingPath, opts, entries.find((e) => e.buildId)?.buildId)) {
    const f = await tryOpenElf(source, p, tried);
    if (!f) continue;
    const { check, reason } = checkAgainstMappings(f.info, entries);
    const rank = (c: BinaryCheck): number => (c === 'verified' ? 2 : c === 'unverified' ? 1 : 0);
    if (!best || rank(check) > rank(best.check)) {
      if (best) await best.f.file.close();
      best = { f, check, reason };
      if (check === 'verified') break;
    } else {
      await f.file.close();
    }
  }
  if (!best) return null;
  let debug: LocatedFile | null = null;
  if (!best.f.info.hasDwarf) debug = await locateDebugFile(source, mappingPath, best.f, opts, tried);
  return { mappingPath, binary: best.f, check: best.check, checkReason: best.reason, debug, tried };
}
