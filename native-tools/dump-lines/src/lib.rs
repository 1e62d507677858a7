//! The v2 record section of a jemalloc heap dump, read at the speed of memory: backtrace lines matched against
//! the lines this reader saw before (byte compare), new ones scanned into (hi, lo) words, and count lines
//! parsed into numbers. Only lines in the exact form jemalloc writes are read here; at any other line the
//! record is handed back whole to the JavaScript parser (core/formats/heap-dump.ts), which reads it as always.
//! No allocator: fixed tables in linear memory that never grows, so JavaScript's views of it stay valid.
#![no_std]

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}

/// Bytes of one call's input at most (the reader's pieces are 256 KiB; a longer piece is split by the caller).
pub const INPUT_BYTES: usize = 1 << 20;
const KEY_BYTES: usize = 32 << 20;
const WORD_CAP: usize = 8 << 20;
const ENTRY_CAP: usize = 1 << 18;
const SLOT_CAP: usize = 1 << 19;
const MAX_FRAMES: usize = 1024;
/// records one call may give out (a 1 MiB input holds fewer: a record is at least ~30 bytes)
const OUT_RECORDS: usize = 1 << 16;
const OUT_THREADS: usize = 1 << 17;

static mut INPUT: [u8; INPUT_BYTES] = [0; INPUT_BYTES];
static mut KEYS: [u8; KEY_BYTES] = [0; KEY_BYTES];
static mut WORDS: [u32; WORD_CAP] = [0; WORD_CAP];
static mut KEY_AT: [u32; ENTRY_CAP] = [0; ENTRY_CAP];
static mut KEY_LEN: [u32; ENTRY_CAP] = [0; ENTRY_CAP];
static mut WORD_AT: [u32; ENTRY_CAP] = [0; ENTRY_CAP];
static mut FRAMES: [u32; ENTRY_CAP] = [0; ENTRY_CAP];
static mut HASH: [i32; ENTRY_CAP] = [0; ENTRY_CAP];
static mut AFTER: [i32; ENTRY_CAP] = [0; ENTRY_CAP];
static mut SLOTS: [i32; SLOT_CAP] = [0; SLOT_CAP];
static mut SCRATCH: [u32; 2 * MAX_FRAMES] = [0; 2 * MAX_FRAMES];
// per record given out: entry, line (from the call's first line, 0-based), byte offset in the input,
// thread count; and its total's four counts
static mut OUT_U32: [u32; 4 * OUT_RECORDS] = [0; 4 * OUT_RECORDS];
static mut OUT_F64: [f64; 4 * OUT_RECORDS] = [0.0; 4 * OUT_RECORDS];
// per thread line: uid; four counts
static mut THREAD_U32: [u32; OUT_THREADS] = [0; OUT_THREADS];
static mut THREAD_F64: [f64; 4 * OUT_THREADS] = [0.0; 4 * OUT_THREADS];

static mut COUNT: usize = 0;
static mut KEYS_USED: usize = 0;
static mut WORDS_USED: usize = 0;
static mut SERIAL_BASE: u32 = 0;
static mut LAST: i32 = -1;
// what the last call did: where the caller goes on, lines consumed, records and thread lines given out
static mut STOP: u32 = 0;
static mut LINES: u32 = 0;
static mut RECORDS: u32 = 0;
static mut THREADS: u32 = 0;
/// why the last call stopped: 0 at the end of its input (the record there goes on past it), 1 at a line not
/// in jemalloc's form, 2 with its output full or its tables needing a restart (the next call goes on)
static mut REASON: u32 = 0;

#[no_mangle]
pub unsafe extern "C" fn input_ptr() -> *mut u8 {
    core::ptr::addr_of_mut!(INPUT) as *mut u8
}
#[no_mangle]
pub unsafe extern "C" fn words_ptr() -> *const u32 {
    core::ptr::addr_of!(WORDS) as *const u32
}
#[no_mangle]
pub unsafe extern "C" fn out_u32_ptr() -> *const u32 {
    core::ptr::addr_of!(OUT_U32) as *const u32
}
#[no_mangle]
pub unsafe extern "C" fn out_f64_ptr() -> *const f64 {
    core::ptr::addr_of!(OUT_F64) as *const f64
}
#[no_mangle]
pub unsafe extern "C" fn thread_u32_ptr() -> *const u32 {
    core::ptr::addr_of!(THREAD_U32) as *const u32
}
#[no_mangle]
pub unsafe extern "C" fn thread_f64_ptr() -> *const f64 {
    core::ptr::addr_of!(THREAD_F64) as *const f64
}
#[no_mangle]
pub unsafe extern "C" fn stop() -> u32 {
    STOP
}
#[no_mangle]
pub unsafe extern "C" fn lines() -> u32 {
    LINES
}
#[no_mangle]
pub unsafe extern "C" fn reason() -> u32 {
    REASON
}
#[no_mangle]
pub unsafe extern "C" fn records() -> u32 {
    RECORDS
}
#[no_mangle]
pub unsafe extern "C" fn entry_words(entry: u32) -> u32 {
    WORD_AT[entry as usize]
}
#[no_mangle]
pub unsafe extern "C" fn entry_frames(entry: u32) -> u32 {
    FRAMES[entry as usize]
}
#[no_mangle]
pub unsafe extern "C" fn entry_hash(entry: u32) -> i32 {
    HASH[entry as usize]
}
#[no_mangle]
pub unsafe extern "C" fn serial_base() -> u32 {
    SERIAL_BASE
}
/// The chain restarts (a new dump's first record is not predicted from the last one's).
#[no_mangle]
pub unsafe extern "C" fn forget_last() {
    LAST = -1;
}

/// FNV-1a over 32-bit words, seeded with the frame count (core/formats/frame-scan.ts framesHash).
fn frames_hash(w: &[u32]) -> i32 {
    let mut h: u32 = 0x811c9dc5 ^ ((w.len() as u32) >> 1);
    for &x in w {
        h = (h ^ x).wrapping_mul(0x01000193);
    }
    h as i32
}

/// a hex digit's value, 16 for any other byte (both cases, as the JavaScript scanner reads them)
static HEX: [u8; 256] = {
    let mut t = [16u8; 256];
    let mut c = 0;
    while c < 10 {
        t[b'0' as usize + c] = c as u8;
        c += 1;
    }
    let mut c = 0;
    while c < 6 {
        t[b'a' as usize + c] = 10 + c as u8;
        t[b'A' as usize + c] = 10 + c as u8;
        c += 1;
    }
    t
};

/// Whether a[0, n) and b[0, n) are equal, 8 bytes a step (compiler_builtins' memcmp goes a byte at a time).
#[inline(always)]
unsafe fn same(a: *const u8, b: *const u8, n: usize) -> bool {
    let mut i = 0;
    while i + 8 <= n {
        if (a.add(i) as *const u64).read_unaligned() != (b.add(i) as *const u64).read_unaligned() {
            return false;
        }
        i += 8;
    }
    while i < n {
        if *a.add(i) != *b.add(i) {
            return false;
        }
        i += 1;
    }
    true
}

/// "@ 0x… 0x…" (one space before each "0x", 1–16 digits) from b[s] to e (the newline): frames into SCRATCH,
/// or None for any other form.
unsafe fn scan_frames(b: &[u8], s: usize, e: usize) -> Option<usize> {
    let out = &mut *core::ptr::addr_of_mut!(SCRATCH);
    let mut i = s + 1;
    let mut n = 0usize;
    while i < e {
        if i + 3 > e || b[i] != b' ' || b[i + 1] != b'0' || b[i + 2] != b'x' {
            return None;
        }
        i += 3;
        let start = i;
        let mut v: u64 = 0;
        while i < e {
            let d = HEX[b[i] as usize];
            if d > 15 {
                break;
            }
            v = (v << 4) | d as u64;
            i += 1;
        }
        let digits = i - start;
        if digits == 0 || digits > 16 || (i < e && b[i] != b' ') || n == MAX_FRAMES {
            return None;
        }
        out[2 * n] = (v >> 32) as u32;
        out[2 * n + 1] = v as u32;
        n += 1;
    }
    if n == 0 {
        None
    } else {
        Some(n)
    }
}

unsafe fn restart() {
    SERIAL_BASE += COUNT as u32;
    COUNT = 0;
    KEYS_USED = 0;
    WORDS_USED = 0;
    LAST = -1;
    let slots = &mut *core::ptr::addr_of_mut!(SLOTS);
    for x in slots.iter_mut() {
        *x = 0;
    }
}

/// The entry of line b[s, e) with frames in SCRATCH[0, 2n): found by hash and bytes, or added.
unsafe fn find_or_add(b: &[u8], s: usize, e: usize, n: usize) -> i32 {
    let scratch = &*core::ptr::addr_of!(SCRATCH);
    let w = &scratch[..2 * n];
    let h = frames_hash(w);
    let len = e - s;
    let slots = &mut *core::ptr::addr_of_mut!(SLOTS);
    let mask = SLOT_CAP - 1;
    let mut k = (h as u32 as usize).wrapping_mul(0x9e3779b1) & mask;
    loop {
        let x = slots[k];
        if x == 0 {
            break;
        }
        let en = (x - 1) as usize;
        if KEY_LEN[en] as usize == len && HASH[en] == h {
            let a = KEY_AT[en] as usize;
            if same(core::ptr::addr_of!(KEYS).cast::<u8>().add(a), b.as_ptr().add(s), len) {
                return en as i32;
            }
        }
        k = (k + 1) & mask;
    }
    if COUNT + 1 >= ENTRY_CAP || KEYS_USED + len > KEY_BYTES || WORDS_USED + 2 * n > WORD_CAP || 2 * COUNT >= SLOT_CAP {
        return -1; // full: read() restarts the tables when no record it gave out still points into them
    }
    let en = COUNT;
    COUNT += 1;
    KEY_AT[en] = KEYS_USED as u32;
    KEY_LEN[en] = len as u32;
    KEYS[KEYS_USED..KEYS_USED + len].copy_from_slice(&b[s..e]);
    KEYS_USED += len;
    WORD_AT[en] = WORDS_USED as u32;
    FRAMES[en] = n as u32;
    WORDS[WORDS_USED..WORDS_USED + 2 * n].copy_from_slice(w);
    WORDS_USED += 2 * n;
    HASH[en] = h;
    AFTER[en] = -1;
    slots[k] = en as i32 + 1;
    en as i32
}

/// A decimal of 1–15 digits at b[i] followed by `sep`: (value, index after sep).
#[inline(always)]
fn number(b: &[u8], mut i: usize, e: usize, sep: u8) -> Option<(f64, usize)> {
    let start = i;
    let mut v: u64 = 0;
    while i < e {
        let c = b[i];
        if !c.is_ascii_digit() {
            break;
        }
        v = v * 10 + (c - b'0') as u64;
        i += 1;
    }
    if i == start || i - start > 15 || i >= e || b[i] != sep {
        return None;
    }
    Some((v as f64, i + 1))
}

/// "  t*: a: b [c: d]" or "  tN: a: b [c: d]" (b[s] the first blank, e the newline): uid (u32::MAX for *), counts.
#[inline(always)]
fn count_line(b: &[u8], s: usize, e: usize) -> Option<(u32, [f64; 4])> {
    if e - s < 17 || b[s] != b' ' || b[s + 1] != b' ' || b[s + 2] != b't' {
        return None;
    }
    let mut i = s + 3;
    let uid;
    if b[i] == b'*' {
        uid = u32::MAX;
        i += 1;
        if b[i] != b':' {
            return None;
        }
        i += 1;
    } else {
        let (u, j) = number(b, i, e, b':')?;
        if u >= 4294967295.0 {
            return None;
        }
        uid = u as u32;
        i = j;
    }
    if b[i] != b' ' {
        return None;
    }
    let (a, j) = number(b, i + 1, e, b':')?;
    if j >= e || b[j] != b' ' {
        return None;
    }
    let (bb, j) = number(b, j + 1, e, b' ')?;
    if j >= e || b[j] != b'[' {
        return None;
    }
    let (c, j) = number(b, j + 1, e, b':')?;
    if j >= e || b[j] != b' ' {
        return None;
    }
    let (d, j) = number(b, j + 1, e, b']')?;
    if j != e {
        return None;
    }
    Some((uid, [a, bb, c, d]))
}

/// Reads records from INPUT[0, len), which starts at a backtrace line. Gives out each record that a following
/// backtrace line ends; stops at the first line not in jemalloc's form, or at the input's last record, and
/// leaves STOP at the start of the record it did not give out (lines before it: LINES).
#[no_mangle]
pub unsafe extern "C" fn read(len: u32) {
    let b = &(*core::ptr::addr_of!(INPUT))[..len as usize];
    let n = b.len();
    let out_u = &mut *core::ptr::addr_of_mut!(OUT_U32);
    let out_f = &mut *core::ptr::addr_of_mut!(OUT_F64);
    let th_u = &mut *core::ptr::addr_of_mut!(THREAD_U32);
    let th_f = &mut *core::ptr::addr_of_mut!(THREAD_F64);
    let mut pos = 0usize;
    let mut line = 0u32;
    let mut recs = 0usize;
    let mut threads = 0usize;
    STOP = 0;
    REASON = 0;
    LINES = 0;
    RECORDS = 0;
    THREADS = 0;
    loop {
        // a record: its backtrace line at pos
        if pos >= n {
            break;
        }
        if b[pos] != b'@' {
            REASON = 1;
            break;
        }
        if recs == OUT_RECORDS || threads + MAX_FRAMES > OUT_THREADS {
            REASON = 2;
            break;
        }
        let rec_start = pos;
        let rec_line = line;
        let rec_threads = threads;
        // the predicted line first: the one that followed the last backtrace line before
        let mut entry: i32 = -1;
        let mut nl;
        let pred = if LAST >= 0 { AFTER[LAST as usize] } else { -1 };
        if pred >= 0 {
            let p = pred as usize;
            let l = KEY_LEN[p] as usize;
            let a = KEY_AT[p] as usize;
            if pos + l < n
                && b[pos + l] == b'\n'
                && same(core::ptr::addr_of!(KEYS).cast::<u8>().add(a), b.as_ptr().add(pos), l)
            {
                entry = pred;
            }
        }
        if entry >= 0 {
            nl = pos + KEY_LEN[entry as usize] as usize;
        } else {
            nl = pos;
            while nl < n && b[nl] != b'\n' {
                nl += 1;
            }
            if nl >= n {
                break;
            }
            let frames = match scan_frames(b, pos, nl) {
                Some(f) => f,
                None => {
                    REASON = 1;
                    break;
                }
            };
            entry = find_or_add(b, pos, nl, frames);
            if entry < 0 {
                if recs > 0 {
                    REASON = 2;
                    break; // the records given out point into the tables: the next call restarts them
                }
                restart();
                entry = find_or_add(b, pos, nl, frames);
            }
            if LAST >= 0 {
                AFTER[LAST as usize] = entry;
            }
        }
        let mut at = nl + 1;
        let mut l = line + 1;
        // its count lines: the total, then per thread
        let mut total: Option<[f64; 4]> = None;
        let mut ok = true;
        let mut done = false;
        while at < n {
            if b[at] == b'@' {
                done = true;
                break;
            }
            let mut e = at;
            while e < n && b[e] != b'\n' {
                e += 1;
            }
            if e >= n {
                break;
            }
            match count_line(b, at, e) {
                Some((uid, c)) => {
                    if uid == u32::MAX {
                        if total.is_some() {
                            ok = false;
                            break;
                        }
                        total = Some(c);
                    } else {
                        if total.is_none() || threads - rec_threads >= MAX_FRAMES {
                            ok = false;
                            break;
                        }
                        th_u[threads] = uid;
                        th_f[4 * threads..4 * threads + 4].copy_from_slice(&c);
                        threads += 1;
                    }
                }
                None => {
                    ok = false;
                    break;
                }
            }
            at = e + 1;
            l += 1;
        }
        let t = match total {
            Some(t) if ok && done => t,
            _ => {
                if !ok || done {
                    REASON = 1; // a line not in the form, or a record without its total line
                }
                // handed back whole: the JavaScript parser reads this record (the chain is where it was)
                threads = rec_threads;
                pos = rec_start;
                line = rec_line;
                LAST = entry;
                break;
            }
        };
        LAST = entry;
        out_u[4 * recs] = entry as u32;
        out_u[4 * recs + 1] = rec_line;
        out_u[4 * recs + 2] = rec_start as u32;
        out_u[4 * recs + 3] = (threads - rec_threads) as u32;
        out_f[4 * recs..4 * recs + 4].copy_from_slice(&t);
        recs += 1;
        pos = at;
        line = l;
    }
    STOP = pos as u32;
    LINES = line;
    RECORDS = recs as u32;
    THREADS = threads as u32;
}
