// Reads just enough of an ELF file to symbolize it: headers, program headers (PC → virtual address and binary
// verification), section headers, build-id, .gnu_debuglink, and the compact image of debug/symbol sections that
// the WASM module parses. Only the needed byte ranges are read, so multi-GB libraries cost what their symbol
// sections cost. Every offset and size read from the file is bounds-checked: a malformed file gives ElfError.

import type { SymbolFile } from './files.js';

export class ElfError extends Error {
  override name = 'ElfError';
}

export interface ProgramHeader {
  type: number;
  flags: number;
  offset: bigint;
  vaddr: bigint;
  filesz: bigint;
  memsz: bigint;
  align: bigint;
}

export interface SectionHeader {
  name: string;
  /** sh_name: offset of the name in the section name table */
  nameOffset: number;
  type: number;
  flags: bigint;
  addr: bigint;
  offset: bigint;
  size: bigint;
  link: number;
  info: number;
  addralign: bigint;
  entsize: bigint;
}

export interface ElfInfo {
  is64: boolean;
  littleEndian: boolean;
  /** ET_EXEC = 2, ET_DYN = 3 */
  type: number;
  machine: number;
  fileSize: number;
  programHeaders: ProgramHeader[];
  sections: SectionHeader[];
  buildId: string | null;
  debugLink: { file: string; crc: number } | null;
  /** .debug_info (or .zdebug_info) with content */
  hasDwarf: boolean;
  hasSymtab: boolean;
  hasDynsym: boolean;
}

export const PT_LOAD = 1;
export const PF_X = 1;
const SHT_NOBITS = 8;
const SHT_NOTE = 7;
const SHT_SYMTAB = 2;
const SHT_DYNSYM = 11;
const NT_GNU_BUILD_ID = 3;

/** Upper bounds that no real file reaches; they stop a corrupt header from making us read gigabytes. */
const MAX_HEADERS = 1 << 16;
const MAX_SHSTRTAB = 16 << 20;
const MAX_NOTE = 1 << 16;

/** Byte ranges already read (the head and the tail of the file), served without another read. */
type ReadWindows = { offset: number; bytes: Uint8Array }[];

async function readExact(
  file: SymbolFile,
  offset: bigint,
  length: number,
  what: string,
  windows?: ReadWindows,
): Promise<Uint8Array> {
  if (offset < 0n || offset + BigInt(length) > BigInt(file.size)) {
    throw new ElfError(`${what} lies outside the file (offset ${offset}, ${length} bytes, file ${file.size} bytes)`);
  }
  const o = Number(offset);
  for (const w of windows ?? []) {
    if (o >= w.offset && o + length <= w.offset + w.bytes.length)
      return w.bytes.subarray(o - w.offset, o - w.offset + length);
  }
  const data = await file.read(o, length);
  if (data.length < length) throw new ElfError(`${what}: short read`);
  return data;
}

/** What readElfInfo reads in one go at the start of the file (ELF header, program headers, usually the
 *  build-id note) and before the section headers at its end (.shstrtab and .gnu_debuglink usually sit there). */
const HEAD_BYTES = 4096;
const TAIL_BYTES = 4096;

class Fields {
  private readonly view: DataView;
  constructor(
    bytes: Uint8Array,
    private readonly le: boolean,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  u16(o: number): number {
    return this.view.getUint16(o, this.le);
  }
  u32(o: number): number {
    return this.view.getUint32(o, this.le);
  }
  u64(o: number): bigint {
    return this.view.getBigUint64(o, this.le);
  }
  /** address-sized field */
  addr(o: number, is64: boolean): bigint {
    return is64 ? this.u64(o) : BigInt(this.u32(o));
  }
}

function cString(bytes: Uint8Array, start: number): string {
  if (start < 0 || start >= bytes.length) return '';
  let end = start;
  while (end < bytes.length && bytes[end] !== 0) end++;
  return new TextDecoder().decode(bytes.subarray(start, end));
}

export async function readElfInfo(file: SymbolFile): Promise<ElfInfo> {
  if (file.size < 52) throw new ElfError('file too small for an ELF header');
  // Few, larger reads: a job maps dozens of files, each read is a round trip to the I/O threads.
  const windows: ReadWindows = [];
  const head = await file.read(0, Math.min(file.size, HEAD_BYTES));
  windows.push({ offset: 0, bytes: head });
  const ident = await readExact(file, 0n, 16, 'ELF identification', windows);
  if (ident[0] !== 0x7f || ident[1] !== 0x45 || ident[2] !== 0x4c || ident[3] !== 0x46) {
    throw new ElfError('not an ELF file (bad magic)');
  }
  const cls = ident[4];
  const data = ident[5];
  if (cls !== 1 && cls !== 2) throw new ElfError(`bad ELF class ${cls}`);
  if (data !== 1 && data !== 2) throw new ElfError(`bad ELF data encoding ${data}`);
  const is64 = cls === 2;
  const le = data === 1;
  const ehsize = is64 ? 64 : 52;
  if (file.size < ehsize) throw new ElfError('file too small for an ELF header');
  const eh = new Fields(await readExact(file, 0n, ehsize, 'ELF header', windows), le);
  const type = eh.u16(16);
  const machine = eh.u16(18);
  const phoff = eh.addr(is64 ? 32 : 28, is64);
  const shoff = eh.addr(is64 ? 40 : 32, is64);
  const phentsize = eh.u16(is64 ? 54 : 42);
  const phnum = eh.u16(is64 ? 56 : 44);
  const shentsize = eh.u16(is64 ? 58 : 46);
  let shnum = eh.u16(is64 ? 60 : 48);
  let shstrndx = eh.u16(is64 ? 62 : 50);

  const programHeaders: ProgramHeader[] = [];
  if (phnum > 0 && phoff !== 0n) {
    const want = is64 ? 56 : 32;
    if (phentsize < want) throw new ElfError(`bad program header size ${phentsize}`);
    const raw = await readExact(file, phoff, phentsize * phnum, 'program headers', windows);
    const f = new Fields(raw, le);
    for (let i = 0; i < phnum; i++) {
      const o = i * phentsize;
      programHeaders.push(
        is64
          ? {
              type: f.u32(o),
              flags: f.u32(o + 4),
              offset: f.u64(o + 8),
              vaddr: f.u64(o + 16),
              filesz: f.u64(o + 32),
              memsz: f.u64(o + 40),
              align: f.u64(o + 48),
            }
          : {
              type: f.u32(o),
              offset: BigInt(f.u32(o + 4)),
              vaddr: BigInt(f.u32(o + 8)),
              filesz: BigInt(f.u32(o + 16)),
              memsz: BigInt(f.u32(o + 20)),
              flags: f.u32(o + 24),
              align: BigInt(f.u32(o + 28)),
            },
      );
    }
  }

  const sections: SectionHeader[] = [];
  if (shoff !== 0n && (shnum > 0 || shentsize > 0)) {
    const want = is64 ? 64 : 40;
    if (shentsize < want) throw new ElfError(`bad section header size ${shentsize}`);
    // More than 0xff00 sections: the real count and string-table index live in section header 0.
    if (shnum === 0 || shstrndx === 0xffff) {
      const f0 = new Fields(await readExact(file, shoff, shentsize, 'section header 0'), le);
      if (shnum === 0) shnum = Number(is64 ? f0.u64(32) : BigInt(f0.u32(20)));
      if (shstrndx === 0xffff) shstrndx = f0.u32(is64 ? 40 : 24);
    }
    if (shnum > MAX_HEADERS) throw new ElfError(`implausible section count ${shnum}`);
    const shEnd = shoff + BigInt(shentsize * shnum);
    if (shoff >= 0n && shEnd <= BigInt(file.size)) {
      // The section headers plus what precedes them, in one read.
      const from = Math.max(0, Number(shoff) - TAIL_BYTES);
      const tail = await file.read(from, Number(shEnd) - from);
      if (tail.length === Number(shEnd) - from) windows.push({ offset: from, bytes: tail });
    }
    const raw = await readExact(file, shoff, shentsize * shnum, 'section headers', windows);
    const f = new Fields(raw, le);
    for (let i = 0; i < shnum; i++) {
      const o = i * shentsize;
      sections.push(
        is64
          ? {
              name: '',
              nameOffset: f.u32(o),
              type: f.u32(o + 4),
              flags: f.u64(o + 8),
              addr: f.u64(o + 16),
              offset: f.u64(o + 24),
              size: f.u64(o + 32),
              link: f.u32(o + 40),
              info: f.u32(o + 44),
              addralign: f.u64(o + 48),
              entsize: f.u64(o + 56),
            }
          : {
              name: '',
              nameOffset: f.u32(o),
              type: f.u32(o + 4),
              flags: BigInt(f.u32(o + 8)),
              addr: BigInt(f.u32(o + 12)),
              offset: BigInt(f.u32(o + 16)),
              size: BigInt(f.u32(o + 20)),
              link: f.u32(o + 24),
              info: f.u32(o + 28),
              addralign: BigInt(f.u32(o + 32)),
              entsize: BigInt(f.u32(o + 36)),
            },
      );
    }
    const strtab = sections[shstrndx];
    if (strtab && strtab.type !== SHT_NOBITS && strtab.size > 0n) {
      if (strtab.size > BigInt(MAX_SHSTRTAB)) throw new ElfError('implausible section name table size');
      const names = await readExact(file, strtab.offset, Number(strtab.size), 'section name table', windows);
      for (let i = 0; i < sections.length; i++) sections[i].name = cString(names, sections[i].nameOffset);
    }
  }

  let buildId: string | null = null;
  for (const s of sections) {
    if (s.type !== SHT_NOTE || s.name !== '.note.gnu.build-id' || s.size > BigInt(MAX_NOTE)) continue;
    buildId = parseBuildIdNote(await readExact(file, s.offset, Number(s.size), 'build-id note', windows), le);
  }
  if (buildId === null) {
    // Section headers can be stripped; PT_NOTE segments still carry the note.
    for (const p of programHeaders) {
      if (p.type !== 4 || p.filesz > BigInt(MAX_NOTE) || p.filesz === 0n) continue;
      if (p.offset + p.filesz > BigInt(file.size)) continue;
      buildId = parseBuildIdNote(await readExact(file, p.offset, Number(p.filesz), 'note segment', windows), le);
      if (buildId) break;
    }
  }

  let debugLink: ElfInfo['debugLink'] = null;
  const dl = sections.find((s) => s.name === '.gnu_debuglink' && s.type !== SHT_NOBITS);
  if (dl && dl.size >= 8n && dl.size <= 4096n) {
    const raw = await readExact(file, dl.offset, Number(dl.size), '.gnu_debuglink', windows);
    const name = cString(raw, 0);
    // The CRC follows the NUL-terminated name, padded to 4 bytes.
    const crcOff = (name.length + 1 + 3) & ~3;
    if (name && crcOff + 4 <= raw.length) {
      debugLink = { file: name, crc: new Fields(raw, le).u32(crcOff) };
    }
  }

  const hasDwarf = sections.some(
    (s) => (s.name === '.debug_info' || s.name === '.zdebug_info') && s.type !== SHT_NOBITS && s.size > 0n,
  );
  return {
    is64,
    littleEndian: le,
    type,
    machine,
    fileSize: file.size,
    programHeaders,
    sections,
    buildId,
    debugLink,
    hasDwarf,
    hasSymtab: sections.some((s) => s.type === SHT_SYMTAB && s.size > 0n),
    hasDynsym: sections.some((s) => s.type === SHT_DYNSYM && s.size > 0n),
  };
}

function parseBuildIdNote(raw: Uint8Array, le: boolean): string | null {
  const f = new Fields(raw, le);
  let o = 0;
  while (o + 12 <= raw.length) {
    const namesz = f.u32(o);
    const descsz = f.u32(o + 4);
    const type = f.u32(o + 8);
    const nameStart = o + 12;
    const descStart = nameStart + ((namesz + 3) & ~3);
    const next = descStart + ((descsz + 3) & ~3);
    if (descStart + descsz > raw.length || namesz > raw.length) return null;
    const name = cString(raw.subarray(nameStart, nameStart + namesz), 0);
    if (type === NT_GNU_BUILD_ID && name === 'GNU' && descsz > 0) {
      let hex = '';
      for (const b of raw.subarray(descStart, descStart + descsz)) hex += b.toString(16).padStart(2, '0');
      return hex;
    }
    o = next;
  }
  return null;
}

/**
 * DWARF sections symbolization never reads: variable locations (often a quarter of -O2 DWARF), macros,
 * name indexes, call frame info.
 */
const UNUSED_DEBUG = new Set([
  'loc',
  'loclists',
  'macro',
  'macinfo',
  'pubnames',
  'pubtypes',
  'gnu_pubnames',
  'gnu_pubtypes',
  'frame',
]);

/** Sections the WASM module reads; everything else becomes SHT_NOBITS in the compact image. */
export function isNeededSection(name: string): boolean {
  const debug = /^\.z?debug_(.*)$/.exec(name);
  if (debug) return !UNUSED_DEBUG.has(debug[1].replace(/\.dwo$/, ''));
  return (
    name === '.symtab' ||
    name === '.strtab' ||
    name === '.dynsym' ||
    name === '.dynstr' ||
    name === '.note.gnu.build-id' ||
    name === '.gnu_debuglink' ||
    name === '.gnu_debugaltlink'
  );
}

export interface CompactLayout {
  /** total bytes of the compact image */
  size: number;
  /** the rewritten ELF header + section header table, to copy to offset 0 */
  header: Uint8Array;
  /** where each kept section's bytes go; `data` when the host already has them (inflated sections) */
  pieces: { fileOffset: number; imageOffset: number; size: number; name: string; data?: Uint8Array }[];
}

/** SHF_COMPRESSED, and the only compression type the module (and the host) inflate. */
export const SHF_COMPRESSED = 0x800n;
const ELFCOMPRESS_ZLIB = 1;

/**
 * Host-side zlib inflation: returns the inflated bytes, or null to leave the section compressed for the
 * module (whose miniz is several times slower than a native zlib). Hosts pass Node's zlib or
 * DecompressionStream.
 */
export type InflateFn = (zlibData: Uint8Array, size: number) => Promise<Uint8Array | null>;

/** Whether the image would carry SHF_COMPRESSED sections (what `inflateSections` works on). */
export function hasCompressedSections(info: ElfInfo): boolean {
  return info.sections.some(
    (s, i) => i > 0 && s.type !== SHT_NOBITS && (s.flags & SHF_COMPRESSED) !== 0n && isNeededSection(s.name),
  );
}

/**
 * Inflates the kept SHF_COMPRESSED (zlib) sections on the host, all at once: section index → inflated bytes.
 * A section that fails (bad header, wrong size, inflate error) is left out and stays compressed; the module
 * then inflates it, or reports it, as before. Results are the same either way.
 */
export async function inflateSections(
  file: SymbolFile,
  info: ElfInfo,
  inflate: InflateFn,
  maxBytes: number,
): Promise<Map<number, Uint8Array>> {
  const out = new Map<number, Uint8Array>();
  const chdr = info.is64 ? 24 : 12;
  const jobs = info.sections.map(async (s, i) => {
    if (i === 0 || s.type === SHT_NOBITS || (s.flags & SHF_COMPRESSED) === 0n || !isNeededSection(s.name)) return;
    if (s.size <= BigInt(chdr) || s.offset + s.size > BigInt(info.fileSize)) return;
    try {
      const raw = await file.read(Number(s.offset), Number(s.size));
      if (raw.length !== Number(s.size)) return;
      const f = new Fields(raw, info.littleEndian);
      const type = f.u32(0);
      const size = info.is64 ? Number(f.u64(8)) : f.u32(4);
      if (type !== ELFCOMPRESS_ZLIB || size <= 0 || size > maxBytes) return;
      const data = await inflate(raw.subarray(chdr), size);
      if (data && data.length === size) out.set(i, data);
    } catch {
      // left to the module
    }
  });
  await Promise.all(jobs);
  return out;
}

/**
 * Plans the compact image: ELF header, section header table, then the kept sections back to back. Program
 * headers are dropped (the module does not need them); dropped sections stay in the table as SHT_NOBITS
 * so section indices and sh_link stay valid.
 */
export function planCompactImage(info: ElfInfo, inflated?: ReadonlyMap<number, Uint8Array>): CompactLayout {
  const is64 = info.is64;
  const le = info.littleEndian;
  const ehsize = is64 ? 64 : 52;
  const shentsize = is64 ? 64 : 40;
  const n = info.sections.length;
  const keep = info.sections.map((s, i) => i > 0 && s.type !== SHT_NOBITS && s.size > 0n && isNeededSection(s.name));
  // String tables that kept symbol tables point at must come along, whatever their names.
  info.sections.forEach((s, i) => {
    if (keep[i] && (s.type === SHT_SYMTAB || s.type === SHT_DYNSYM)) {
      const l = info.sections[s.link];
      if (l && l.type !== SHT_NOBITS) keep[s.link] = true;
    }
  });
  // The section name table is needed so the module can find sections by name.
  let shstrndx = -1;
  for (let i = 0; i < n; i++) {
    if (info.sections[i].name === '.shstrtab') shstrndx = i;
  }
  if (shstrndx > 0) keep[shstrndx] = true;

  const header = new Uint8Array(ehsize + shentsize * n);
  const dv = new DataView(header.buffer);
  // e_ident
  header.set([0x7f, 0x45, 0x4c, 0x46, is64 ? 2 : 1, le ? 1 : 2, 1, 0]);
  dv.setUint16(16, info.type, le);
  dv.setUint16(18, info.machine, le);
  dv.setUint32(20, 1, le);
  if (is64) {
    dv.setBigUint64(40, BigInt(ehsize), le); // e_shoff
    dv.setUint16(52, ehsize, le);
    dv.setUint16(58, shentsize, le);
    dv.setUint16(60, n < 0xff00 ? n : 0, le);
    dv.setUint16(62, shstrndx > 0 ? (shstrndx < 0xff00 ? shstrndx : 0xffff) : 0, le);
  } else {
    dv.setUint32(32, ehsize, le);
    dv.setUint16(40, ehsize, le);
    dv.setUint16(46, shentsize, le);
    dv.setUint16(48, n < 0xff00 ? n : 0, le);
    dv.setUint16(50, shstrndx > 0 ? (shstrndx < 0xff00 ? shstrndx : 0xffff) : 0, le);
  }

  let cursor = header.length;
  const pieces: CompactLayout['pieces'] = [];
  for (let i = 0; i < n; i++) {
    const s = info.sections[i];
    const o = ehsize + i * shentsize;
    let type = s.type;
    let offset = 0;
    if (keep[i]) {
      if (s.offset + s.size > BigInt(info.fileSize)) {
        throw new ElfError(`section ${s.name || i} lies outside the file`);
      }
      const align = Math.min(Math.max(Number(s.addralign > 64n ? 64n : s.addralign), 1), 64);
      cursor = Math.ceil(cursor / align) * align;
      offset = cursor;
      const data = inflated?.get(i);
      if (data) {
        pieces.push({ fileOffset: Number(s.offset), imageOffset: cursor, size: data.length, name: s.name, data });
        cursor += data.length;
      } else {
        pieces.push({ fileOffset: Number(s.offset), imageOffset: cursor, size: Number(s.size), name: s.name });
        cursor += Number(s.size);
      }
    } else if (i > 0) {
      type = SHT_NOBITS;
    }
    if (i === 0) {
      // Entry 0 carries the extended section count and string index when they overflow the header.
      if (is64) {
        dv.setBigUint64(o + 32, n >= 0xff00 ? BigInt(n) : 0n, le);
        dv.setUint32(o + 40, shstrndx >= 0xff00 ? shstrndx : 0, le);
      } else {
        dv.setUint32(o + 20, n >= 0xff00 ? n : 0, le);
        dv.setUint32(o + 24, shstrndx >= 0xff00 ? shstrndx : 0, le);
      }
      continue;
    }
    dv.setUint32(o, s.nameOffset, le);
    // An inflated section is stored plain: its flags lose SHF_COMPRESSED and its size is the inflated one.
    const plain = keep[i] ? inflated?.get(i) : undefined;
    const flags = plain ? s.flags & ~SHF_COMPRESSED : s.flags;
    const size = plain ? BigInt(plain.length) : s.size;
    if (is64) {
      dv.setUint32(o + 4, type, le);
      dv.setBigUint64(o + 8, flags, le);
      dv.setBigUint64(o + 16, s.addr, le);
      dv.setBigUint64(o + 24, BigInt(offset), le);
      dv.setBigUint64(o + 32, size, le);
      dv.setUint32(o + 40, s.link, le);
      dv.setUint32(o + 44, s.info, le);
      dv.setBigUint64(o + 48, s.addralign, le);
      dv.setBigUint64(o + 56, s.entsize, le);
    } else {
      dv.setUint32(o + 4, type, le);
      dv.setUint32(o + 8, Number(flags & 0xffffffffn), le);
      dv.setUint32(o + 12, Number(s.addr & 0xffffffffn), le);
      dv.setUint32(o + 16, offset, le);
      dv.setUint32(o + 20, Number(size & 0xffffffffn), le);
      dv.setUint32(o + 24, s.link, le);
      dv.setUint32(o + 28, s.info, le);
      dv.setUint32(o + 32, Number(s.addralign & 0xffffffffn), le);
      dv.setUint32(o + 36, Number(s.entsize & 0xffffffffn), le);
    }
  }
  return { size: cursor, header, pieces };
}
