//! heaplens addr2line: DWARF and symbol-table lookups for ELF images, as a WebAssembly module with a plain C ABI.
//!
//! The host (TypeScript) never hands over a whole file. It builds a compact ELF image holding only the
//! sections we need (debug sections, symbol and string tables, notes); the sections it left out are
//! rewritten as SHT_NOBITS so section indices and sh_link stay valid. We parse that image with `object`,
//! borrow the DWARF sections straight out of it (only compressed ones get an owned, inflated copy) and
//! keep one `addr2line::Context` per loaded module, so repeated lookups reuse the parsed units.
//!
//! Every fallible step returns an error to the host instead of panicking: a panic aborts the instance
//! (panic = "abort") and the host would have to re-instantiate.

use std::alloc::{alloc, dealloc, Layout};
use std::borrow::Cow;
use std::collections::HashMap as StdHashMap;
use std::fmt::Write as _;
use std::hash::{BuildHasherDefault, Hasher};

use gimli::{EndianSlice, RunTimeEndian};
use object::{Object, ObjectSection, ObjectSymbol, SectionKind, SymbolKind};

type Slice = EndianSlice<'static, RunTimeEndian>;

/// Lookup flags (bit set), mirrored in symbolize/wasm-addr2line.ts.
const FLAG_INLINE: u32 = 1;
const FLAG_DEMANGLE: u32 = 2;
const FLAG_SYMTAB: u32 = 4;

/// Where a frame's function name came from.
const SOURCE_DWARF: u32 = 1;
const SOURCE_SYMTAB: u32 = 2;
/// DWARF gave the location but no function; the name is from the symbol table.
const SOURCE_DWARF_LINE_SYMTAB_NAME: u32 = 3;

const NONE: u32 = u32::MAX;

/// A multiply-rotate hash (as rustc's FxHash) for our in-memory maps: keys are pointers and names from the
/// image, nothing an attacker picks to collide, and SipHash on every frame's strings cost several percent of
/// a cold lookup in WASM. Map iteration order is never used for output.
#[derive(Default, Clone, Copy)]
struct FxHasher {
    hash: u64,
}

impl FxHasher {
    #[inline]
    fn add(&mut self, x: u64) {
        self.hash = (self.hash.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]));
        }
        let mut tail = 0u64;
        for (i, &b) in chunks.remainder().iter().enumerate() {
            tail |= (b as u64) << (8 * i);
        }
        self.add(tail);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

type HashMap<K, V> = StdHashMap<K, V, BuildHasherDefault<FxHasher>>;

struct Symbol {
    start: u64,
    size: u64,
    name: &'static [u8],
}

struct Module {
    image: *mut u8,
    image_len: usize,
    /// Inflated copies of compressed sections; the Context borrows from them.
    owned: Vec<Box<[u8]>>,
    ctx: Option<addr2line::Context<Slice>>,
    /// Function symbols from .symtab and .dynsym, sorted by start.
    symbols: Vec<Symbol>,
    symtab_count: usize,
    dynsym_count: usize,
    has_dwarf: bool,
    compressed: bool,
    /// Demangled names. Demangling a long C++ template name costs tens of microseconds, and the same names
    /// recur across thousands of addresses, and twice per function (DWARF linkage name and symbol name live
    /// in different sections): keyed by content, with a by-pointer index in front so that repeat lookups
    /// do not hash long names.
    demangled: Demangled,
}

impl Drop for Module {
    fn drop(&mut self) {
        // The Context and the symbols borrow from the image and the owned buffers: drop them first.
        self.ctx = None;
        self.symbols.clear();
        self.demangled.by_ptr.clear();
        self.demangled.by_name.clear();
        if !self.image.is_null() && self.image_len > 0 {
            unsafe { dealloc(self.image, Layout::from_size_align_unchecked(self.image_len, 1)) };
        }
    }
}

static mut MODULES: Vec<Option<Box<Module>>> = Vec::new();
static mut ERROR: String = String::new();
static mut RESULT: Vec<u8> = Vec::new();

fn set_error(msg: String) {
    unsafe { ERROR = msg };
}

fn set_result(bytes: Vec<u8>) -> *const u8 {
    unsafe {
        RESULT = bytes;
        RESULT.as_ptr()
    }
}

fn module(handle: u32) -> Option<&'static mut Module> {
    unsafe {
        let i = (handle as usize).checked_sub(1)?;
        MODULES.get_mut(i)?.as_deref_mut()
    }
}

/// Allocates `len` uninitialised bytes for the host to fill. Returns 0 when memory is exhausted, so the
/// host can report "too large" instead of the instance trapping.
#[no_mangle]
pub extern "C" fn a2l_alloc(len: usize) -> *mut u8 {
    if len == 0 || len > isize::MAX as usize {
        return std::ptr::null_mut();
    }
    unsafe { alloc(Layout::from_size_align_unchecked(len, 1)) }
}

#[no_mangle]
pub extern "C" fn a2l_free(ptr: *mut u8, len: usize) {
    if !ptr.is_null() && len > 0 {
        unsafe { dealloc(ptr, Layout::from_size_align_unchecked(len, 1)) };
    }
}

#[no_mangle]
pub extern "C" fn a2l_error() -> *const u8 {
    unsafe { ERROR.as_ptr() }
}

#[no_mangle]
pub extern "C" fn a2l_error_len() -> usize {
    unsafe { ERROR.len() }
}

#[no_mangle]
pub extern "C" fn a2l_result_len() -> usize {
    unsafe { RESULT.len() }
}

/// Takes ownership of an image allocated with `a2l_alloc` (freed here on failure). Returns a handle > 0,
/// or 0 with the reason in `a2l_error`.
#[no_mangle]
pub extern "C" fn a2l_load(ptr: *mut u8, len: usize) -> u32 {
    if ptr.is_null() || len == 0 {
        set_error("empty image".to_string());
        return 0;
    }
    let mut m = Box::new(Module {
        image: ptr,
        image_len: len,
        owned: Vec::new(),
        ctx: None,
        symbols: Vec::new(),
        symtab_count: 0,
        dynsym_count: 0,
        has_dwarf: false,
        compressed: false,
        demangled: Demangled::default(),
    });
    // The slice lives as long as the Module; Drop releases the borrowers before the memory.
    let data: &'static [u8] = unsafe { std::slice::from_raw_parts(ptr, len) };
    match build(&mut m, data) {
        Ok(()) => unsafe {
            if let Some(i) = MODULES.iter().position(|x| x.is_none()) {
                MODULES[i] = Some(m);
                (i + 1) as u32
            } else {
                MODULES.push(Some(m));
                MODULES.len() as u32
            }
        },
        Err(e) => {
            set_error(e);
            0
        }
    }
}

fn build(m: &mut Module, data: &'static [u8]) -> Result<(), String> {
    let file = object::File::parse(data).map_err(|e| format!("not a readable ELF file: {}", e))?;
    if file.format() != object::BinaryFormat::Elf {
        return Err("not an ELF file".to_string());
    }
    let endian = if file.is_little_endian() { RunTimeEndian::Little } else { RunTimeEndian::Big };

    m.has_dwarf = file
        .section_by_name(".debug_info")
        .map(|s| s.size() > 0 && s.kind() != SectionKind::UninitializedData)
        .unwrap_or(false);

    if m.has_dwarf {
        let owned = &mut m.owned;
        let compressed = &mut m.compressed;
        let load = |id: gimli::SectionId| -> Result<Slice, gimli::Error> {
            let bytes: &'static [u8] = match file.section_by_name(id.name()) {
                Some(s) if s.kind() != SectionKind::UninitializedData => match s.uncompressed_data() {
                    Ok(Cow::Borrowed(b)) => b,
                    Ok(Cow::Owned(v)) => {
                        *compressed = true;
                        let b = v.into_boxed_slice();
                        // The heap buffer does not move when the Box is moved into `owned`.
                        let s: &'static [u8] = unsafe { std::slice::from_raw_parts(b.as_ptr(), b.len()) };
                        owned.push(b);
                        s
                    }
                    Err(_) => &[],
                },
                _ => &[],
            };
            Ok(EndianSlice::new(bytes, endian))
        };
        let dwarf = gimli::Dwarf::load(load).map_err(|e| format!("DWARF: {}", e))?;
        let ctx = addr2line::Context::from_dwarf(dwarf).map_err(|e| format!("DWARF: {}", e))?;
        m.ctx = Some(ctx);
    }

    let mut symbols = Vec::new();
    for sym in file.symbols() {
        if let Some(s) = function_symbol(&sym) {
            symbols.push(s);
            m.symtab_count += 1;
        }
    }
    for sym in file.dynamic_symbols() {
        if let Some(s) = function_symbol(&sym) {
            symbols.push(s);
            m.dynsym_count += 1;
        }
    }
    // Sorted by start; among equal starts the larger one first, then the name, so results are stable.
    symbols.sort_by(|a, b| a.start.cmp(&b.start).then(b.size.cmp(&a.size)).then(a.name.cmp(b.name)));
    symbols.dedup_by(|a, b| a.start == b.start && a.size == b.size && a.name == b.name);
    m.symbols = symbols;
    Ok(())
}

fn function_symbol<S: ObjectSymbol<'static>>(sym: &S) -> Option<Symbol> {
    if sym.kind() != SymbolKind::Text || sym.is_undefined() || sym.address() == 0 {
        return None;
    }
    let name = sym.name_bytes().ok()?;
    if name.is_empty() {
        return None;
    }
    Some(Symbol { start: sym.address(), size: sym.size(), name })
}

/// The function symbol containing `addr`: the nearest preceding symbol whose size covers it, so padding
/// between functions is not attributed to the previous one. Symbols of size 0 (assembly, CRT code) carry
/// no extent; they cover up to the next symbol, as llvm-symbolizer treats them.
fn find_symbol(symbols: &[Symbol], addr: u64) -> Option<&Symbol> {
    let upper = symbols.partition_point(|s| s.start <= addr);
    if upper == 0 {
        return None;
    }
    // The closest sized symbol that covers the address. Look back a little: nested or aliased symbols can
    // share or overlap ranges.
    let lower = upper.saturating_sub(64);
    if let Some(s) = symbols[lower..upper].iter().rev().find(|s| s.size != 0 && addr - s.start < s.size) {
        return Some(s);
    }
    // Otherwise a size-0 symbol among those starting closest below the address.
    let nearest = symbols[upper - 1].start;
    symbols[..upper].iter().rev().take_while(|s| s.start == nearest).find(|s| s.size == 0)
}

#[no_mangle]
pub extern "C" fn a2l_unload(handle: u32) {
    unsafe {
        if let Some(i) = (handle as usize).checked_sub(1) {
            if let Some(slot) = MODULES.get_mut(i) {
                *slot = None;
            }
        }
    }
}

/// JSON with what the module found in the image.
#[no_mangle]
pub extern "C" fn a2l_info(handle: u32) -> *const u8 {
    let m = match module(handle) {
        Some(m) => m,
        None => {
            set_error("bad handle".to_string());
            return std::ptr::null();
        }
    };
    let mut s = String::new();
    let _ = write!(
        s,
        "{{\"hasDwarf\":{},\"compressedDebug\":{},\"symtabFunctions\":{},\"dynsymFunctions\":{},\"imageBytes\":{},\"inflatedBytes\":{}}}",
        m.has_dwarf,
        m.compressed,
        m.symtab_count,
        m.dynsym_count,
        m.image_len,
        m.owned.iter().map(|b| b.len()).sum::<usize>()
    );
    set_result(s.into_bytes())
}

/// Collects strings by identity (pointer, length) and writes each once.
struct Interner {
    index: HashMap<(usize, usize), u32>,
    list: Vec<(*const u8, usize)>,
}

impl Interner {
    fn id(&mut self, s: &str) -> u32 {
        let key = (s.as_ptr() as usize, s.len());
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        let i = self.list.len() as u32;
        self.list.push((s.as_ptr(), s.len()));
        self.index.insert(key, i);
        i
    }
}

#[derive(Default)]
struct Demangled {
    by_name: HashMap<&'static [u8], Box<str>>,
    by_ptr: HashMap<(usize, usize), *const str>,
    /// the FLAG_DEMANGLE setting the entries were made with
    demangling: bool,
}

/// The display name for a raw name; the returned string stays at its address while the module is loaded
/// (boxed, entries never removed), which the interner relies on.
fn demangled_name(
    cache: &mut Demangled,
    raw: &'static [u8],
    language: Option<gimli::DwLang>,
    demangle: bool,
) -> &'static str {
    let key = (raw.as_ptr() as usize, raw.len());
    if let Some(&p) = cache.by_ptr.get(&key) {
        return unsafe { &*p };
    }
    let boxed = cache.by_name.entry(raw).or_insert_with(|| {
        let name = String::from_utf8_lossy(raw);
        if demangle {
            addr2line::demangle_auto(name, language).into_owned().into_boxed_str()
        } else {
            name.into_owned().into_boxed_str()
        }
    });
    let p: *const str = &**boxed;
    cache.by_ptr.insert(key, p);
    unsafe { &*p }
}

struct OutFrame {
    func: u32,
    file: u32,
    line: u32,
    column: u32,
    source: u32,
}

/// Looks up `n` addresses (u64, little-endian, at `addrs`; ELF virtual addresses, already adjusted by the
/// host for return addresses). Result, little-endian u32 words:
///   [nAddrs, nFrames, nStrings, blobLen],
///   nAddrs frame counts,
///   nFrames × (func, file, line, column, source)  — func/file are string ids or 0xffffffff,
///   nStrings + 1 string offsets into the blob, then the UTF-8 blob.
/// Frames of one address are innermost inlined first; the last one is the real (outermost) function.
#[no_mangle]
pub extern "C" fn a2l_lookup(handle: u32, addrs: *const u64, n: usize, flags: u32) -> *const u8 {
    let m = match module(handle) {
        Some(m) => m,
        None => {
            set_error("bad handle".to_string());
            return std::ptr::null();
        }
    };
    if n > 0 && addrs.is_null() {
        set_error("null address buffer".to_string());
        return std::ptr::null();
    }
    let addrs: &[u64] = if n == 0 { &[] } else { unsafe { std::slice::from_raw_parts(addrs, n) } };
    let demangle = flags & FLAG_DEMANGLE != 0;
    let inline = flags & FLAG_INLINE != 0;
    let use_symtab = flags & FLAG_SYMTAB != 0;

    // The cache is keyed by the raw name pointer, but the demangled strings it holds are also used as
    // interner keys, so those stay put while this call runs (entries are only ever added).
    if m.demangled.demangling != demangle {
        // Entries made under the other setting would be wrong; nothing borrows them between calls.
        m.demangled = Demangled { demangling: demangle, ..Demangled::default() };
    }
    let cache: *mut Demangled = &mut m.demangled;
    let mut interner = Interner { index: HashMap::default(), list: Vec::new() };
    let mut counts: Vec<u32> = Vec::with_capacity(n);
    let mut frames: Vec<OutFrame> = Vec::with_capacity(n * 2);

    for &addr in addrs {
        let first = frames.len();
        // Whether the outermost DWARF frame's name is a linkage (mangled) name, which is already complete.
        let mut outer_name_is_linkage = false;
        if let Some(ctx) = m.ctx.as_ref() {
            if let Ok(mut iter) = ctx.find_frames(addr) {
                loop {
                    let frame = match iter.next() {
                        Ok(Some(f)) => f,
                        // A broken DIE ends this address's frames; what we have so far stays.
                        _ => break,
                    };
                    let func = match frame.function.as_ref() {
                        Some(f) => {
                            let raw: &'static [u8] = f.name.slice();
                            outer_name_is_linkage = raw.starts_with(b"_Z") || raw.starts_with(b"_R");
                            let name = demangled_name(unsafe { &mut *cache }, raw, f.language, demangle);
                            interner.id(name)
                        }
                        None => NONE,
                    };
                    let (file, line, column) = match frame.location.as_ref() {
                        Some(loc) => (
                            loc.file.map(|f| interner.id(f)).unwrap_or(NONE),
                            loc.line.unwrap_or(0),
                            loc.column.unwrap_or(0),
                        ),
                        None => (NONE, 0, 0),
                    };
                    frames.push(OutFrame { func, file, line, column, source: SOURCE_DWARF });
                    if !inline {
                        break;
                    }
                }
            }
        }
        if use_symtab {
            // The symbol is searched only when it is used: most frames have a DWARF linkage name.
            let dwarf_outer_plain = frames.len() > first && !outer_name_is_linkage;
            if frames.len() == first {
                if let Some(s) = find_symbol(&m.symbols, addr) {
                    let name = demangled_name(unsafe { &mut *cache }, s.name, None, demangle);
                    let func = interner.id(name);
                    frames.push(OutFrame { func, file: NONE, line: 0, column: 0, source: SOURCE_SYMTAB });
                }
            } else if let Some(last) = frames.last_mut() {
                if dwarf_outer_plain && last.func != NONE {
                    // GCC often gives template instances only a DW_AT_name without scope or parameters
                    // ("__introsort_loop<…>"); the symbol's demangled name is the full one, as GNU
                    // addr2line prints it. Keep the DWARF name when the symbol does not demangle, and for
                    // unmangled (C) symbols, whose DWARF name is already complete.
                    if let Some(s) = find_symbol(&m.symbols, addr) {
                        if s.name.starts_with(b"_Z") || s.name.starts_with(b"_R") {
                            let name = demangled_name(unsafe { &mut *cache }, s.name, None, demangle);
                            if !demangle || !(name.starts_with("_Z") || name.starts_with("_R")) {
                                last.func = interner.id(name);
                            }
                        }
                    }
                }
                // DWARF had a line for the address but no function DIE (assembly, some CRT code).
                if last.func == NONE {
                    // The line table claims the address, so the nearest preceding symbol is the function even
                    // past its recorded size (alignment padding inside the CU), as GNU addr2line names it.
                    let nearest = m.symbols[..m.symbols.partition_point(|s| s.start <= addr)].last();
                    if let Some(s) = find_symbol(&m.symbols, addr).or(nearest) {
                        let name = demangled_name(unsafe { &mut *cache }, s.name, None, demangle);
                        last.func = interner.id(name);
                        last.source = SOURCE_DWARF_LINE_SYMTAB_NAME;
                    }
                }
            }
        }
        counts.push((frames.len() - first) as u32);
    }

    let blob_len: usize = interner.list.iter().map(|&(_, l)| l).sum();
    let words = 4 + counts.len() + frames.len() * 5 + interner.list.len() + 1;
    let mut out: Vec<u8> = Vec::with_capacity(words * 4 + blob_len);
    let put = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
    put(&mut out, counts.len() as u32);
    put(&mut out, frames.len() as u32);
    put(&mut out, interner.list.len() as u32);
    put(&mut out, blob_len as u32);
    for &c in &counts {
        put(&mut out, c);
    }
    for f in &frames {
        put(&mut out, f.func);
        put(&mut out, f.file);
        put(&mut out, f.line);
        put(&mut out, f.column);
        put(&mut out, f.source);
    }
    let mut off = 0u32;
    for &(_, l) in &interner.list {
        put(&mut out, off);
        off += l as u32;
    }
    put(&mut out, off);
    for &(p, l) in &interner.list {
        out.extend_from_slice(unsafe { std::slice::from_raw_parts(p, l) });
    }
    set_result(out)
}

/// Demangles one name (C++ or Rust, guessed from the mangling); the input is returned unchanged when it
/// is not a mangled name.
#[no_mangle]
pub extern "C" fn a2l_demangle(ptr: *const u8, len: usize) -> *const u8 {
    let raw: &[u8] = if len == 0 || ptr.is_null() { &[] } else { unsafe { std::slice::from_raw_parts(ptr, len) } };
    let name = String::from_utf8_lossy(raw);
    let out = addr2line::demangle_auto(name, None).into_owned();
    set_result(out.into_bytes())
}
