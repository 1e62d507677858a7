/*
 * heaplens capture: adds CPython frames to jemalloc heap profile backtraces (format PYFRAMES/1,
 * see docs/pyframes-format.md) and writes the frame table next to (or into) every dump.
 *
 * Loaded with LD_PRELOAD after jemalloc 5.3:
 *   LD_PRELOAD="/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 .../libheaplens_capture.so" MALLOC_CONF=prof:true ...
 *
 * Rules the sampling path (hl_backtrace_hook) keeps:
 *   - no malloc, no stdio, no lock that Python code can hold (only our own spin lock, taken to add a
 *     new table entry; Python never sees it);
 *   - reads only the calling thread's own interpreter frames, without the GIL (as faulthandler does);
 *   - bounded work: at most max_py_frames frames kept, max_py_walk frames visited.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h> /* rename() only */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "py_offsets.h"

#define HL_EXPORT __attribute__((visibility("default")))
#define HL_LIKELY(x) __builtin_expect(!!(x), 1)
#define HL_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- PYFRAMES/1 pseudo-addresses ------------------------------------------------------------- */
#define PF_TAG 0x7079ULL
#define PF_KIND_SHIFT 44
#define PF_ID_SHIFT 4
enum { PF_FRAME = 1, PF_ENTRY = 2, PF_UNMERGED = 3, PF_TRUNCATED = 4, PF_UNKNOWN = 5 };
#define PF_ADDR(kind, id) \
    ((PF_TAG << 48) | ((uint64_t)(kind) << PF_KIND_SHIFT) | ((uint64_t)(id) << PF_ID_SHIFT))

/* ---- jemalloc's experimental hook types (include/jemalloc/internal/prof_hook.h, 5.3.0) -------- */
typedef void (*prof_backtrace_hook_t)(void **vec, unsigned *len, unsigned max_len);
typedef void (*prof_dump_hook_t)(const char *filename);
typedef int (*mallctl_fn)(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

/* ---- configuration (environment, read once in the constructor) ---------------------------------- */
enum { TABLE_NONE = 0, TABLE_SIDECAR = 1, TABLE_APPEND = 2, TABLE_BOTH = 3 };
static int cfg_python = 1;
static int cfg_lines = 1;
static int cfg_table = TABLE_SIDECAR;
static int cfg_max_py_frames = 96;
static int cfg_max_py_walk = 1024;
static int cfg_force_unmerged = 0;
static int cfg_timing = 0;
static int cfg_verbose = 0;
static int cfg_context = 1;

/* ---- state found at start-up ----------------------------------------------------------------- */
static prof_backtrace_hook_t native_backtrace; /* jemalloc's own unwinder */
/* libunwind's unw_backtrace, when found (native_unwind below) */
static int (*unw_backtrace_fn)(void **buffer, int size);
static int py_ok;                              /* Python frames enabled and the layout known */
static int dump_hook_on;                       /* the dump hook is installed (frames and/or context) */
static mallctl_fn je_mallctl;                  /* jemalloc's mallctl, for the context's stats */
static const struct hl_py_layout *L;
static unsigned py_major, py_minor, py_micro;
static void *py_code_type, *py_unicode_type;
static void *(*py_tstate_unchecked)(void);     /* 3.12+: attached tstate of this thread, or NULL */
static void *(*py_gilstate_get)(void);         /* PyGILState_GetThisThreadState (TSS, any version) */
static int (*py_is_finalizing)(void);
static int (*py_is_initialized)(void);
static int (*py_addr2line)(void *code, int addrq);
static atomic_int py_seen_initialized;
/* token= of the table header; a memfd named pyframes-<token> is mapped so that every dump's
 * MAPPED_LIBRARIES names the table that belongs to it (guards against stale or renamed sidecars) */
static char table_token[17];

#define MAX_RANGES 4
static uintptr_t eval_lo[MAX_RANGES], eval_hi[MAX_RANGES]; /* _PyEval_EvalFrameDefault (+ .cold) */
static int n_eval;
static uintptr_t self_lo[MAX_RANGES], self_hi[MAX_RANGES]; /* our own executable segments */
static int n_self;

/* ---- counters --------------------------------------------------------------------------------- */
static atomic_ulong st_samples, st_merged, st_unmerged, st_nopython, st_truncated, st_unknown;
static atomic_ulong st_native_ns, st_python_ns;
/* per-sample times by power of two of nanoseconds (bucket k: [2^k, 2^(k+1)) ns): medians that a
 * preempted sample or two cannot skew, unlike the sums above */
#define HIST_BUCKETS 32
static atomic_ulong hist_native[HIST_BUCKETS], hist_python[HIST_BUCKETS];

static inline void hist_add(atomic_ulong *h, uint64_t ns) {
    int k = ns ? 63 - __builtin_clzll(ns) : 0;
    if (k >= HIST_BUCKETS) k = HIST_BUCKETS - 1;
    atomic_fetch_add_explicit(&h[k], 1, memory_order_relaxed);
}

/* ---- the frame table: append-only, mmap'd, lock-free lookups ----------------------------------- */
struct entry {
    uintptr_t code, qualname, filename; /* object addresses: part of the key (detects reuse) */
    int32_t firstlineno, line;
    uint32_t qual_off, file_off;        /* into the string arena, encoded, NUL-free */
    uint16_t qual_len, file_len_hi;     /* file length = file_len_hi << 16 | file_len_lo */
    uint16_t file_len_lo, pad;
};
#define ENTRY_CAP (1u << 18)
#define SLOT_BITS 19
#define SLOT_CAP (1u << SLOT_BITS)
#define ARENA_CAP (64u << 20)
#define QUAL_MAX_CHARS 1024
#define FILE_MAX_CHARS 4096

static struct entry *entries;       /* entries[id - 1] */
static _Atomic uint32_t *slots;     /* hash slots holding ids, 0 = empty */
static char *arena;
static uint32_t arena_used;
static _Atomic uint32_t n_entries;  /* published count (release) */
static atomic_flag table_lock = ATOMIC_FLAG_INIT;

static void lock_table(void) {
    while (atomic_flag_test_and_set_explicit(&table_lock, memory_order_acquire)) {
        __builtin_ia32_pause();
    }
}
static void unlock_table(void) { atomic_flag_clear_explicit(&table_lock, memory_order_release); }

/* ---- small helpers that never allocate ---------------------------------------------------------- */
static void say(const char *a, const char *b, const char *c) {
    /* one line on stderr via write(2) */
    char buf[512];
    size_t n = 0;
    const char *parts[4] = {"heaplens-capture: ", a, b, c};
    for (int i = 0; i < 4; i++) {
        for (const char *p = parts[i]; p && *p && n < sizeof buf - 2; p++) buf[n++] = *p;
    }
    buf[n++] = '\n';
    ssize_t r = write(2, buf, n);
    (void)r;
}

static int env_int(const char *name, int dflt, int lo, int hi) {
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    char *end;
    long x = strtol(v, &end, 10);
    if (*end || x < lo || x > hi) {
        say("ignoring invalid ", name, "");
        return dflt;
    }
    return (int)x;
}

/* "<number>[.<fraction>][k|K|M|G|T][i][B]" (binary units: 1K = 1024) -> bytes; -1 when malformed */
static int64_t parse_size(const char *v) {
    char *end;
    double x = strtod(v, &end);
    if (end == v || x < 0) return -1;
    double mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1024.0; end++; break;
    case 'm': case 'M': mul = 1048576.0; end++; break;
    case 'g': case 'G': mul = 1073741824.0; end++; break;
    case 't': case 'T': mul = 1099511627776.0; end++; break;
    default: break;
    }
    if (mul > 1 && *end == 'i') end++;
    if (*end == 'B') end++;
    if (*end) return -1;
    double b = x * mul;
    return b < 9.2e18 ? (int64_t)b : -1;
}

/* "<number>[ns|us|ms|s|m|h]" (plain number: seconds) -> ns; -1 when malformed */
static int64_t parse_duration(const char *v) {
    char *end;
    double x = strtod(v, &end);
    if (end == v || x < 0) return -1;
    double mul = 1e9;
    if (!strcmp(end, "ns")) mul = 1;
    else if (!strcmp(end, "us")) mul = 1e3;
    else if (!strcmp(end, "ms")) mul = 1e6;
    else if (!strcmp(end, "s") || !*end) mul = 1e9;
    else if (!strcmp(end, "m")) mul = 60e9;
    else if (!strcmp(end, "h")) mul = 3600e9;
    else return -1;
    double ns = x * mul;
    return ns < 9.2e18 ? (int64_t)ns : -1;
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uintptr_t ld_ptr(uintptr_t base, int off) { return *(const uintptr_t *)(base + (uintptr_t)off); }
static inline int32_t ld_i32(uintptr_t base, int off) { return *(const int32_t *)(base + (uintptr_t)off); }

/* ---- string encoding: CPython compact str -> UTF-8 -> PYFRAMES percent-encoding ---------------- */
static size_t put_byte(char *out, size_t n, size_t cap, unsigned char b) {
    static const char hex[] = "0123456789ABCDEF";
    if (b <= 0x20 || b == '%' || b >= 0x7f) {
        if (n + 3 > cap) return (size_t)-1;
        out[n] = '%';
        out[n + 1] = hex[b >> 4];
        out[n + 2] = hex[b & 15];
        return n + 3;
    }
    if (n + 1 > cap) return (size_t)-1;
    out[n] = (char)b;
    return n + 1;
}

static size_t put_cp(char *out, size_t n, size_t cap, uint32_t cp) {
    unsigned char u[4];
    int k;
    if (cp >= 0xDC80 && cp <= 0xDCFF) { /* surrogateescape: the original byte */
        return put_byte(out, n, cap, (unsigned char)(cp - 0xDC00));
    }
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) cp = 0xFFFD;
    if (cp < 0x80) { u[0] = (unsigned char)cp; k = 1; }
    else if (cp < 0x800) { u[0] = (unsigned char)(0xC0 | (cp >> 6)); u[1] = (unsigned char)(0x80 | (cp & 63)); k = 2; }
    else if (cp < 0x10000) {
        u[0] = (unsigned char)(0xE0 | (cp >> 12)); u[1] = (unsigned char)(0x80 | ((cp >> 6) & 63));
        u[2] = (unsigned char)(0x80 | (cp & 63)); k = 3;
    } else {
        u[0] = (unsigned char)(0xF0 | (cp >> 18)); u[1] = (unsigned char)(0x80 | ((cp >> 12) & 63));
        u[2] = (unsigned char)(0x80 | ((cp >> 6) & 63)); u[3] = (unsigned char)(0x80 | (cp & 63)); k = 4;
    }
    size_t start = n;
    for (int i = 0; i < k; i++) {
        n = put_byte(out, n, cap, u[i]);
        if (n == (size_t)-1) return (size_t)-1; /* no room: the caller cuts before this code point */
    }
    (void)start;
    return n;
}

/* Encodes str object `s` into out[0..cap); returns the length. Unreadable -> "%3F" ("?"). */
static size_t encode_str(uintptr_t s, char *out, size_t cap, size_t max_chars) {
    size_t n = 0;
    if (!s || ld_ptr(s, L->ob_type) != (uintptr_t)py_unicode_type) goto unknown;
    unsigned int state = *(const unsigned int *)(s + (uintptr_t)L->str_state);
    if (!(state & L->str_compact_mask)) goto unknown;
    int64_t len = *(const int64_t *)(s + (uintptr_t)L->str_length);
    if (len < 0) goto unknown;
    if (len == 0) { out[0] = '-'; return 1; }
    unsigned kind = (state & L->str_kind_mask) >> L->str_kind_shift;
    uintptr_t data = s + (uintptr_t)((state & L->str_ascii_mask) ? L->str_ascii_data : L->str_compact_data);
    if (kind != 1 && kind != 2 && kind != 4) goto unknown;
    size_t count = (size_t)len < max_chars ? (size_t)len : max_chars;
    for (size_t i = 0; i < count; i++) {
        uint32_t cp = kind == 1 ? ((const uint8_t *)data)[i]
                    : kind == 2 ? ((const uint16_t *)data)[i] : ((const uint32_t *)data)[i];
        size_t m;
        if (i == 0 && cp == '-') { /* a leading '-' would read as "empty": always %2D */
            if (n + 3 > cap) break;
            out[n] = '%'; out[n + 1] = '2'; out[n + 2] = 'D';
            m = n + 3;
        } else {
            m = put_cp(out, n, cap, cp);
            if (m == (size_t)-1) break;
        }
        n = m;
    }
    if (n == 0) goto unknown;
    return n;
unknown:
    out[0] = '%'; out[1] = '3'; out[2] = 'F';
    return 3;
}

/* ---- interning ----------------------------------------------------------------------------------- */
static inline uint64_t mix(uint64_t h) {
    h ^= h >> 33; h *= 0xff51afd7ed558ccdull; h ^= h >> 33; h *= 0xc4ceb9fe1a85ec53ull; h ^= h >> 33;
    return h;
}

static inline int entry_eq(const struct entry *e, uintptr_t code, uintptr_t q, uintptr_t f, int32_t fl, int32_t line) {
    return e->code == code && e->line == line && e->qualname == q && e->filename == f && e->firstlineno == fl;
}

/* Returns the id of (code, line), adding it if new; 0 when the table is full. */
static uint32_t intern(uintptr_t code, int32_t line) {
    uintptr_t q = ld_ptr(code, L->code_qualname), f = ld_ptr(code, L->code_filename);
    int32_t fl = ld_i32(code, L->code_firstlineno);
    uint64_t h = mix((uint64_t)code ^ ((uint64_t)(uint32_t)line << 32) ^ (uint64_t)q * 31 ^ (uint64_t)f * 17);
    uint32_t i = (uint32_t)h & (SLOT_CAP - 1);
    for (uint32_t probes = 0; probes < SLOT_CAP; probes++, i = (i + 1) & (SLOT_CAP - 1)) {
        uint32_t id = atomic_load_explicit(&slots[i], memory_order_acquire);
        if (id == 0) break;
        if (entry_eq(&entries[id - 1], code, q, f, fl, line)) return id;
    }
    lock_table();
    uint32_t id = 0;
    i = (uint32_t)h & (SLOT_CAP - 1);
    for (;; i = (i + 1) & (SLOT_CAP - 1)) {
        uint32_t cur = atomic_load_explicit(&slots[i], memory_order_relaxed);
        if (cur == 0) break;
        if (entry_eq(&entries[cur - 1], code, q, f, fl, line)) { id = cur; goto out; }
    }
    uint32_t count = atomic_load_explicit(&n_entries, memory_order_relaxed);
    /* worst case per entry: 3 bytes per UTF-8 byte, 4 UTF-8 bytes per char */
    size_t need = (size_t)(QUAL_MAX_CHARS + FILE_MAX_CHARS) * 12;
    if (count >= ENTRY_CAP || arena_used + need > ARENA_CAP) goto out;
    struct entry *e = &entries[count];
    e->code = code; e->qualname = q; e->filename = f; e->firstlineno = fl; e->line = line;
    size_t ql = encode_str(q, arena + arena_used, (size_t)QUAL_MAX_CHARS * 12, QUAL_MAX_CHARS);
    e->qual_off = arena_used; e->qual_len = (uint16_t)ql; arena_used += (uint32_t)ql;
    size_t fln = encode_str(f, arena + arena_used, (size_t)FILE_MAX_CHARS * 12, FILE_MAX_CHARS);
    e->file_off = arena_used; e->file_len_hi = (uint16_t)(fln >> 16); e->file_len_lo = (uint16_t)fln;
    arena_used += (uint32_t)fln;
    id = count + 1;
    atomic_store_explicit(&n_entries, id, memory_order_release);
    atomic_store_explicit(&slots[i], id, memory_order_release);
out:
    unlock_table();
    return id;
}

/* ---- the Python walk ------------------------------------------------------------------------------ */
struct pyframe { uint64_t addr; int group; };

struct walk {
    int kept;          /* frames in out[] */
    int groups;        /* C-level eval calls seen (each is a group, possibly empty) */
    int dropped;       /* frames visited but not kept (walk limit) */
    int complete;      /* reached the end of the chain */
};

static void *current_tstate(void) {
    void *ts = NULL;
    if (py_tstate_unchecked) ts = py_tstate_unchecked();      /* 3.12+: thread-local, attached */
    if (!ts && py_gilstate_get) ts = py_gilstate_get();       /* TSS: also when the GIL is released */
    if (ts && (unsigned long)ld_ptr((uintptr_t)ts, L->tstate_thread_id) != (unsigned long)pthread_self()) {
        return NULL; /* not this thread's state (3.11's unchecked get is process-wide) */
    }
    return ts;
}

/* Keeps one started frame of `code`, executing at byte offset `addrq` of its bytecode, in group `group`
 * (or counts it dropped when out[] is full: no line looked up then). */
static void keep_frame(struct pyframe *out, int cap, struct walk *w, uintptr_t code, int addrq, int group) {
    if (w->kept >= cap) { w->dropped++; return; }
    int32_t line = cfg_lines ? py_addr2line((void *)code, addrq) : ld_i32(code, L->code_firstlineno);
    uint32_t id = intern(code, line);
    if (id) out[w->kept].addr = PF_ADDR(PF_FRAME, id);
    else { out[w->kept].addr = PF_ADDR(PF_UNKNOWN, 0); atomic_fetch_add_explicit(&st_unknown, 1, memory_order_relaxed); }
    out[w->kept].group = group;
    w->kept++;
}

/* 3.9, 3.10: PyThreadState.frame is the innermost PyFrameObject, linked outward by f_back. Each frame
 * is run by a C call of its own to _PyEval_EvalFrameDefault (which links it into tstate->frame first
 * thing), so every frame is a group of its own. f_lasti is the instruction executing (in a caller: its
 * call), in bytes on 3.9 and code units on 3.10, -1 before the first instruction (not started: skipped,
 * its eval call still counts). PyCode_Addr2Line takes a byte offset and reads the version's own line
 * table (3.9 co_lnotab, 3.10 co_linetable) without allocating. */
static void py_walk_frame_objects(uintptr_t frame, struct pyframe *out, int cap, struct walk *w) {
    int group = 0;
    for (int visited = 0; frame; visited++, group++) {
        if (visited >= cfg_max_py_walk) { w->groups = group; return; }
        uintptr_t code = ld_ptr(frame, L->frame_code);
        int32_t lasti = ld_i32(frame, L->frame_lasti);
        if (code && ld_ptr(code, L->ob_type) == (uintptr_t)py_code_type && lasti >= 0)
            keep_frame(out, cap, w, code, lasti * L->lasti_unit, group);
        frame = ld_ptr(frame, L->frame_previous);
    }
    w->groups = group;
    w->complete = 1;
}

static void py_walk(struct pyframe *out, int cap, struct walk *w) {
    w->kept = 0; w->groups = 0; w->dropped = 0; w->complete = 0;
    void *ts = current_tstate();
    if (!ts) return;
    uintptr_t frame;
    if (L->tstate_frame >= 0) { /* 3.9, 3.10 */
        py_walk_frame_objects(ld_ptr((uintptr_t)ts, L->tstate_frame), out, cap, w);
        return;
    }
    if (L->tstate_current_frame >= 0) {
        frame = ld_ptr((uintptr_t)ts, L->tstate_current_frame);
    } else {
        uintptr_t cf = ld_ptr((uintptr_t)ts, L->tstate_cframe);
        if (!cf) return;
        frame = ld_ptr(cf, L->cframe_current_frame);
    }
    int group = 0, in_group = 0;
    for (int visited = 0; frame; visited++) {
        if (visited >= cfg_max_py_walk) { w->groups = group + in_group; return; }
        int owner = *(const signed char *)(frame + (uintptr_t)L->frame_owner);
        uintptr_t prev = ld_ptr(frame, L->frame_previous);
        if (L->owner_cstack >= 0 && owner == L->owner_cstack) { /* 3.12+: end of one eval call */
            group++; in_group = 0;
            frame = prev;
            continue;
        }
        in_group = 1;
        uintptr_t code = ld_ptr(frame, L->frame_code);
        if (code && ld_ptr(code, L->ob_type) == (uintptr_t)py_code_type) {
            uintptr_t instr = ld_ptr(frame, L->frame_instr);
            uintptr_t start = code + (uintptr_t)L->code_code_adaptive;
            int32_t first = ld_i32(code, L->code_firsttraceable);
            int incomplete = owner != L->owner_generator && instr < start + (uintptr_t)first * 2;
            if (!incomplete) keep_frame(out, cap, w, code, (int)(intptr_t)(instr - start), group);
        }
        if (L->frame_is_entry >= 0 && *(const unsigned char *)(frame + (uintptr_t)L->frame_is_entry)) {
            group++; in_group = 0; /* 3.11: this frame was the first of its eval call */
        }
        frame = prev;
    }
    w->groups = group + in_group;
    w->complete = 1;
}

/* ---- the backtrace hook ------------------------------------------------------------------------- */
static inline int in_ranges(uintptr_t a, const uintptr_t *lo, const uintptr_t *hi, int n) {
    for (int i = 0; i < n; i++) if (a >= lo[i] && a < hi[i]) return 1;
    return 0;
}

static int python_usable(void) {
    if (!py_ok) return 0;
    if (py_is_finalizing && py_is_finalizing()) return 0;
    if (py_is_initialized) {
        if (py_is_initialized()) {
            if (!atomic_load_explicit(&py_seen_initialized, memory_order_relaxed))
                atomic_store_explicit(&py_seen_initialized, 1, memory_order_relaxed);
        } else if (atomic_load_explicit(&py_seen_initialized, memory_order_relaxed)) {
            return 0; /* finalized */
        }
    }
    return 1;
}

#define OUT_CAP 512

/* The native stack. jemalloc's own unwinder (Debian's and Ubuntu's libjemalloc2 use libgcc's
 * _Unwind_Backtrace) interprets every frame's DWARF call-frame information afresh, about 100 ns a frame;
 * before 3.11 each Python call is 2-4 C frames, so a sample's native stack cost 10-13 us on 3.9 and 3.10
 * (3 us on 3.12), most of the profiling's cost per sample. libunwind's unw_backtrace (the unwinder jemalloc
 * itself builds with --enable-prof-libunwind, called in the same place) keeps each return address's frame
 * layout once it has read it: the same addresses, about 15x faster on a 3.10 stack. Used when libunwind.so.8
 * loads (HEAPLENS_CAPTURE_UNWIND=jemalloc keeps jemalloc's); jemalloc's when it finds no frame. Both run
 * inside jemalloc's reentrancy guard (pre_reentrancy in prof_backtrace): an allocation they make
 * (libunwind's per-thread cache, a thread's first use of its thread-local storage) takes jemalloc's
 * reentrant path. The one frame that
 * differs is jemalloc's own prof_backtrace_impl on top (an allocator frame, hidden with the others). */
static void native_unwind(void **vec, unsigned *len, unsigned max_len) {
    if (unw_backtrace_fn) {
        int k = unw_backtrace_fn(vec, (int)max_len);
        if (k > 0) { *len = (unsigned)k; return; }
        *len = 0;
    }
    native_backtrace(vec, len, max_len);
}

static void watch_maybe_resume(void);

static void hl_backtrace_hook(void **vec, unsigned *len, unsigned max_len) {
    uint64_t t0 = cfg_timing ? now_ns() : 0;
    watch_maybe_resume(); /* a watcher stopped for a fork starts again here (below) */
    native_unwind(vec, len, max_len);
    unsigned n0 = *len;
    int native_full = n0 >= max_len;
    /* drop our own frame(s): jemalloc's unwinder saw this hook between itself and jemalloc */
    unsigned n = 0;
    for (unsigned i = 0; i < n0; i++) {
        if (!in_ranges((uintptr_t)vec[i], self_lo, self_hi, n_self)) vec[n++] = vec[i];
    }
    *len = n;
    uint64_t t1 = cfg_timing ? now_ns() : 0;
    atomic_fetch_add_explicit(&st_samples, 1, memory_order_relaxed);
    if (!python_usable()) {
        atomic_fetch_add_explicit(&st_nopython, 1, memory_order_relaxed);
        goto done;
    }

    struct pyframe py[128];
    struct walk w;
    int cap = cfg_max_py_frames < 128 ? cfg_max_py_frames : 128;
    py_walk(py, cap, &w);
    if (w.kept == 0 && w.dropped == 0) {
        atomic_fetch_add_explicit(&st_nopython, 1, memory_order_relaxed);
        goto done;
    }
    int py_truncated = w.dropped > 0 || !w.complete;

    /* native eval frames, leaf first (return address - 1 inside an eval-loop range) */
    int evals[128], ne = 0;
    for (unsigned i = 0; i < n && ne < 128; i++) {
        uintptr_t a = (uintptr_t)vec[i];
        if (a && in_ranges(a - 1, eval_lo, eval_hi, n_eval)) evals[ne++] = (int)i;
    }
    int ng = w.groups;
    uint64_t out[OUT_CAP];
    int m = 0;
    int merged = !cfg_force_unmerged && ng > 0 && (ne >= ng || (native_full && ne > 0));
    if (merged) {
        /* pair_of[i] = group to insert leafward of native frame i, or -1 */
        int pair_of[128];
        for (unsigned i = 0; i < n; i++) pair_of[i] = -1;
        if (native_full || py_truncated) {
            /* outer frames are missing on one side: pair innermost first */
            for (int g = 0; g < ng && g < ne; g++) pair_of[evals[g]] = g;
        } else {
            for (int g = 0; g < ng; g++) pair_of[evals[ne - ng + g]] = g;
        }
        int last_kept_group = w.kept ? py[w.kept - 1].group : -1;
        int k = 0;
        for (unsigned i = 0; i < n && m < OUT_CAP - 2; i++) {
            int g = pair_of[i];
            if (g >= 0) {
                while (k < w.kept && py[k].group < g) k++; /* groups without an eval frame: dropped */
                while (k < w.kept && py[k].group == g && m < OUT_CAP - 2) out[m++] = py[k++].addr;
                if (w.dropped > 0 && g == last_kept_group) out[m++] = PF_ADDR(PF_TRUNCATED, 0);
            }
            out[m++] = (uint64_t)(uintptr_t)vec[i];
        }
        if (k < w.kept) py_truncated = 1; /* python frames with no place: counted as truncated */
        atomic_fetch_add_explicit(&st_merged, 1, memory_order_relaxed);
    } else {
        for (unsigned i = 0; i < n; i++) out[m++] = (uint64_t)(uintptr_t)vec[i];
        out[m++] = PF_ADDR(PF_UNMERGED, 0);
        for (int k = 0; k < w.kept && m < OUT_CAP - 2; k++) {
            if (k > 0 && py[k].group != py[k - 1].group) out[m++] = PF_ADDR(PF_ENTRY, 0);
            out[m++] = py[k].addr;
        }
        if (py_truncated) out[m++] = PF_ADDR(PF_TRUNCATED, 0);
        atomic_fetch_add_explicit(&st_unmerged, 1, memory_order_relaxed);
    }
    if ((unsigned)m > max_len) {
        m = (int)max_len;
        out[m - 1] = PF_ADDR(PF_TRUNCATED, 0);
        py_truncated = 1;
    }
    if (py_truncated) atomic_fetch_add_explicit(&st_truncated, 1, memory_order_relaxed);
    for (int i = 0; i < m; i++) vec[i] = (void *)(uintptr_t)out[i];
    *len = (unsigned)m;
done:
    if (cfg_timing) {
        uint64_t t2 = now_ns();
        atomic_fetch_add_explicit(&st_native_ns, t1 - t0, memory_order_relaxed);
        atomic_fetch_add_explicit(&st_python_ns, t2 - t1, memory_order_relaxed);
        hist_add(hist_native, t1 - t0);
        hist_add(hist_python, t2 - t1);
    }
}


/* ---- the context written with each dump (docs/pyframes-format.md §5a) ------------------------------
 * Runs in the dump hook: jemalloc holds its prof_dump_mtx (dumps are serialized, so the static buffers
 * below are never shared) and no sampled thread waits on it. Only raw system calls (open/read/close,
 * clock_gettime, uname), jemalloc's own mallctl (which takes ctl_mtx, never held by a sampled thread or
 * by our backtrace hook), no malloc, no stdio. */
#define CTX_FILE_MAX 8192     /* /proc/self/status and memory.stat are 1.5-4 KB */
#define CTX_CMDLINE_MAX 4096  /* the command line is cut here (cmdline_cut 1) */
#define CTX_PATH_MAX 4096
static char ctx_file[CTX_FILE_MAX + 1];
static char ctx_cgdir[CTX_PATH_MAX];
static long ctx_clk_tck = 100; /* sysconf(_SC_CLK_TCK), read at start-up */

/* Reads up to cap bytes of path into buf (NUL-terminated); returns the length or -1. */
static ssize_t ctx_read(const char *path, char *buf, size_t cap) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t n = 0;
    while (n < cap) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0) { if (errno == EINTR) continue; close(fd); return -1; }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = 0;
    return (ssize_t)n;
}

/* Parses the unsigned decimal at *p (skipping blanks); -1 when there is none. */
static int64_t ctx_num(const char *p) {
    while (*p == ' ' || *p == '\t') p++;
    if (*p < '0' || *p > '9') return -1;
    uint64_t v = 0;
    while (*p >= '0' && *p <= '9') {
        if (v > (uint64_t)INT64_MAX / 10) return INT64_MAX; /* saturates (cgroup v1 writes "no limit" as ~2^63) */
        v = v * 10 + (uint64_t)(*p - '0'); p++;
    }
    return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* Value of "key <n>" at a line start in text (key includes its separator, e.g. "VmRSS:"); -1 if absent. */
static int64_t ctx_field(const char *text, const char *key) {
    size_t kl = strlen(key);
    for (const char *p = text; p && *p; ) {
        if (strncmp(p, key, kl) == 0) return ctx_num(p + kl);
        p = strchr(p, '\n');
        if (p) p++;
    }
    return -1;
}

static size_t ctx_join(char *out, size_t cap, const char *a, const char *b, const char *c) {
    size_t n = 0;
    const char *parts[3] = {a, b, c};
    for (int i = 0; i < 3; i++)
        for (const char *q = parts[i]; q && *q; q++) { if (n + 1 >= cap) { out[0] = 0; return 0; } out[n++] = *q; }
    out[n] = 0;
    return n;
}

/* /proc/self/smaps_rollup fields we keep: the kernel's label and our key (docs/pyframes-format.md §5a) */
#define SR_N 12
static const char *const sr_labels[SR_N] = {"Rss:", "Pss:", "Pss_Anon:", "Pss_File:", "Pss_Shmem:", "Shared_Clean:",
    "Shared_Dirty:", "Private_Clean:", "Private_Dirty:", "Anonymous:", "Swap:", "SwapPss:"};
static const char *const sr_keys[SR_N] = {"sr_rss", "sr_pss", "sr_pss_anon", "sr_pss_file", "sr_pss_shmem",
    "sr_shared_clean", "sr_shared_dirty", "sr_private_clean", "sr_private_dirty", "sr_anonymous", "sr_swap", "sr_swap_pss"};
static long ctx_page_size = 4096;
/* Set in a forked child by its atfork handler: the parent's pid and the time of the fork. */
static int64_t fork_ppid = -1, fork_real_ns = -1, fork_mono_ns = -1;

#define MAX_NS_LEVELS 32 /* the kernel's MAX_PID_NS_LEVEL */
struct hl_context {
    int64_t real_ns, mono_ns, boot_ns, pid, ppid, start_boot_ns, start_real_ns;
    int64_t nspid[MAX_NS_LEVELS]; int n_nspid; /* NSpid: of /proc/self/status, outermost first */
    int64_t pid_ns;                       /* inode of /proc/self/ns/pid */
    int64_t je[6];
    int64_t rss, rss_anon;
    int cg_version;                       /* 0: none found */
    int64_t cg_current, cg_max, cg_anon, cg_file; /* cg_max: -2 = unlimited */
    char comm[32]; size_t comm_len;
    size_t cmd_len; int cmd_cut;
    char host[72];
    int64_t cost_ns, je_delay_ns;
    int64_t hook_alloc; /* HEAPLENS_CAPTURE_TIMING=1: bytes the dump hook allocated (jemalloc's thread.allocated), else -1 */
    int64_t sr[SR_N];                     /* smaps_rollup, bytes (-1: absent) */
    int64_t shm_used, shm_size;           /* /dev/shm */
    int64_t je_pdirty, je_pmuzzy;         /* pages */
    int64_t fork_ppid, fork_real_ns, fork_mono_ns;
    const char *trigger;                  /* a static string, or NULL */
    int64_t trigger_ppm;
    char cmdline[CTX_CMDLINE_MAX + 1];
    char cgdir[CTX_PATH_MAX];
};
static const char *const je_names[6] = {"stats.allocated", "stats.active", "stats.resident", "stats.mapped", "stats.retained", "stats.metadata"};
static const char *const je_keys[6] = {"je_allocated", "je_active", "je_resident", "je_mapped", "je_retained", "je_metadata"};

/* /proc/sys/kernel/random/boot_id without its newline: the same for every process (and container) of a boot */
static char ctx_boot_id[40];

/* "NSpid:\t<outer>\t...\t<own>" -> c->nspid (the pid in each namespace this /proc shows, outermost first) */
static void ctx_nspid(struct hl_context *c, const char *status) {
    c->n_nspid = 0;
    const char *p = strstr(status, "\nNSpid:");
    if (!p) return;
    p += 7;
    while (*p && *p != '\n' && c->n_nspid < MAX_NS_LEVELS) {
        while (*p == ' ' || *p == '\t') p++;
        int64_t v = ctx_num(p);
        if (v < 0) break;
        c->nspid[c->n_nspid++] = v;
        while (*p >= '0' && *p <= '9') p++;
    }
}

/* "pid:[4026531836]" -> the pid namespace's inode, -1 when unreadable */
static int64_t ctx_pid_ns(void) {
    char b[64];
    ssize_t n = readlink("/proc/self/ns/pid", b, sizeof b - 1);
    if (n <= 5 || strncmp(b, "pid:[", 5) != 0) return -1;
    b[n] = 0;
    return ctx_num(b + 5);
}

static int64_t ts_ns(clockid_t c) {
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0) return -1;
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* Finds the directory holding this process's memory counters: cgroup v2 (the `0::` path under
 * /sys/fs/cgroup, or /sys/fs/cgroup/unified on hybrid hosts), else v1's memory controller. Without a
 * cgroup namespace the path /proc/self/cgroup names may not exist inside the container's mount: then
 * the mount's root (the container's own cgroup) is used. Returns the version, 0 for none. */
/* text: /proc/self/cgroup (changed in place); dir: CTX_PATH_MAX bytes */
static int find_cgroup_dir_in(char *dir, char *text) {
    char v2path[CTX_PATH_MAX] = "", v1path[CTX_PATH_MAX] = "";
    for (char *line = text; line && *line; ) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c1 && c2) {
            if (c1[1] == ':' && strlen(c2 + 1) < sizeof v2path) ctx_join(v2path, sizeof v2path, c2 + 1, "", "");
            else if (strncmp(c1 + 1, "memory:", 7) == 0 || strstr(c1 + 1, ",memory") == c2 - 7)
                ctx_join(v1path, sizeof v1path, c2 + 1, "", "");
        }
        line = nl ? nl + 1 : NULL;
    }
    static const char *const v2roots[2] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
    char probe[CTX_PATH_MAX];
    for (int pass = 0; pass < 2; pass++) {
        for (int r = 0; r < 2; r++) {
            const char *sub = pass == 0 ? v2path : "";
            if (pass == 0 && !v2path[0]) continue;
            if (!ctx_join(probe, sizeof probe, v2roots[r], strcmp(sub, "/") ? sub : "", "/memory.current")) continue;
            if (access(probe, R_OK) == 0) { ctx_join(dir, CTX_PATH_MAX, v2roots[r], strcmp(sub, "/") ? sub : "", ""); return 2; }
        }
    }
    for (int pass = 0; pass < 2; pass++) {
        const char *sub = pass == 0 ? v1path : "";
        if (pass == 0 && !v1path[0]) continue;
        if (!ctx_join(probe, sizeof probe, "/sys/fs/cgroup/memory", strcmp(sub, "/") ? sub : "", "/memory.usage_in_bytes")) continue;
        if (access(probe, R_OK) == 0) { ctx_join(dir, CTX_PATH_MAX, "/sys/fs/cgroup/memory", strcmp(sub, "/") ? sub : "", ""); return 1; }
    }
    dir[0] = 0;
    return 0;
}
/* scratch: CTX_FILE_MAX + 1 bytes */
static int find_cgroup_dir(char *dir, char *scratch) {
    if (ctx_read("/proc/self/cgroup", scratch, CTX_FILE_MAX) <= 0) scratch[0] = 0;
    return find_cgroup_dir_in(dir, scratch);
}

/* The directory follows /proc/self/cgroup: looked for again (a few access(2) probes, 50-70 us a dump on
 * a cgroup v1 host) only when that text changed, i.e. the process was moved to another cgroup. */
static char cg_seen[CTX_FILE_MAX + 1];
static ssize_t cg_seen_len = -1;
static int cg_seen_version;
static int ctx_cgroup_dir(void) {
    ssize_t n = ctx_read("/proc/self/cgroup", ctx_file, CTX_FILE_MAX);
    if (n < 0) { n = 0; ctx_file[0] = 0; }
    if (n == cg_seen_len && memcmp(ctx_file, cg_seen, (size_t)n) == 0) return cg_seen_version;
    memcpy(cg_seen, ctx_file, (size_t)n + 1);
    cg_seen_version = find_cgroup_dir_in(ctx_cgdir, ctx_file);
    cg_seen_len = n;
    return cg_seen_version;
}

static int64_t ctx_cg_value(const char *name, int *unlimited) {
    char path[CTX_PATH_MAX + 64];
    if (!ctx_join(path, sizeof path, ctx_cgdir, "/", name)) return -1;
    char b[64];
    if (ctx_read(path, b, sizeof b - 1) <= 0) return -1;
    if (unlimited && strncmp(b, "max", 3) == 0) { *unlimited = 1; return -1; }
    return ctx_num(b);
}

/* What stays the same for a process's whole life (its start time, its pid namespace: setns and unshare
 * change only its children's), read at its first dump; a forked child is another pid and reads its own. */
static int64_t once_pid = -1, once_start_boot_ns = -1, once_pid_ns = -1;

static void ctx_once(int64_t pid) {
    if (once_pid == pid) return;
    once_start_boot_ns = -1;
    if (ctx_read("/proc/self/stat", ctx_file, CTX_FILE_MAX) > 0) {
        char *p = strrchr(ctx_file, ')'); /* comm may hold blanks and parentheses: fields follow the last ')' */
        for (int field = 2; p && field < 22; field++) { p = strchr(p + 1, ' '); }
        int64_t ticks = p ? ctx_num(p + 1) : -1;
        if (ticks >= 0 && ctx_clk_tck > 0)
            once_start_boot_ns = ticks / ctx_clk_tck * 1000000000ll + ticks % ctx_clk_tck * (1000000000ll / ctx_clk_tck);
    }
    once_pid_ns = ctx_pid_ns();
    once_pid = pid;
}

static void ctx_collect(struct hl_context *c) {
    int64_t t0 = ts_ns(CLOCK_MONOTONIC);
    c->real_ns = ts_ns(CLOCK_REALTIME);
    c->mono_ns = t0;
    c->boot_ns = ts_ns(CLOCK_BOOTTIME);
    c->pid = getpid();
    c->ppid = getppid();
    ctx_once(c->pid);
    c->start_boot_ns = once_start_boot_ns;
    c->start_real_ns = -1;
    if (c->start_boot_ns >= 0 && c->boot_ns >= 0 && c->real_ns >= 0) c->start_real_ns = c->real_ns - (c->boot_ns - c->start_boot_ns);
    c->comm_len = 0;
    ssize_t n = ctx_read("/proc/self/comm", c->comm, sizeof c->comm - 1);
    if (n > 0) { while (n > 0 && c->comm[n - 1] == '\n') n--; c->comm_len = (size_t)n; }
    n = ctx_read("/proc/self/cmdline", c->cmdline, CTX_CMDLINE_MAX);
    c->cmd_len = n > 0 ? (size_t)n : 0;
    c->cmd_cut = n == CTX_CMDLINE_MAX; /* a full buffer: longer, or exactly this long (rare) */
    struct utsname u;
    c->host[0] = 0;
    if (uname(&u) == 0) ctx_join(c->host, sizeof c->host, u.nodename, "", "");
    for (int i = 0; i < 6; i++) c->je[i] = -1;
    c->je_delay_ns = -1;
    c->rss = c->rss_anon = -1;
    c->n_nspid = 0;
    c->pid_ns = once_pid_ns;
    if (!ctx_boot_id[0] && ctx_read("/proc/sys/kernel/random/boot_id", ctx_file, 39) == 37 && ctx_file[36] == '\n') {
        memcpy(ctx_boot_id, ctx_file, 36);
        ctx_boot_id[36] = 0;
    }
    if (ctx_read("/proc/self/status", ctx_file, CTX_FILE_MAX) > 0) {
        ctx_nspid(c, ctx_file);
        int64_t v = ctx_field(ctx_file, "VmRSS:");
        if (v >= 0) c->rss = v * 1024;
        v = ctx_field(ctx_file, "RssAnon:");
        if (v >= 0) c->rss_anon = v * 1024;
    }
    c->cg_current = c->cg_max = c->cg_anon = c->cg_file = -1;
    c->cg_version = ctx_cgroup_dir();
    if (c->cg_version) {
        int unlimited = 0;
        char path[CTX_PATH_MAX + 64];
        if (c->cg_version == 2) {
            c->cg_current = ctx_cg_value("memory.current", NULL);
            c->cg_max = ctx_cg_value("memory.max", &unlimited);
        } else {
            c->cg_current = ctx_cg_value("memory.usage_in_bytes", NULL);
            c->cg_max = ctx_cg_value("memory.limit_in_bytes", NULL);
            if (c->cg_max >= (1ll << 62)) { c->cg_max = -1; unlimited = 1; } /* v1 writes "no limit" as ~2^63 */
        }
        if (unlimited) c->cg_max = -2;
        if (ctx_join(path, sizeof path, ctx_cgdir, "/memory.stat", "") && ctx_read(path, ctx_file, CTX_FILE_MAX) > 0) {
            c->cg_anon = ctx_field(ctx_file, c->cg_version == 2 ? "anon " : "rss ");
            c->cg_file = ctx_field(ctx_file, c->cg_version == 2 ? "file " : "cache ");
        }
    }
    ctx_join(c->cgdir, sizeof c->cgdir, c->cg_version ? ctx_cgdir : "", "", "");
    for (int i = 0; i < SR_N; i++) c->sr[i] = -1;
    if (ctx_read("/proc/self/smaps_rollup", ctx_file, CTX_FILE_MAX) > 0) {
        for (int i = 0; i < SR_N; i++) {
            int64_t v = ctx_field(ctx_file, sr_labels[i]);
            if (v >= 0) c->sr[i] = v * 1024;
        }
    }
    c->shm_used = c->shm_size = -1;
    struct statfs sf;
    if (statfs("/dev/shm", &sf) == 0 && sf.f_type == 0x01021994 /* TMPFS_MAGIC */) {
        c->shm_size = (int64_t)sf.f_blocks * (int64_t)sf.f_bsize;
        c->shm_used = (int64_t)(sf.f_blocks - sf.f_bfree) * (int64_t)sf.f_bsize;
    }
    c->je_pdirty = c->je_pmuzzy = -1;
    c->fork_ppid = fork_ppid; c->fork_real_ns = fork_real_ns; c->fork_mono_ns = fork_mono_ns;
    c->trigger = NULL; c->trigger_ppm = -1;
    c->hook_alloc = -1;
    c->cost_ns = ts_ns(CLOCK_MONOTONIC) - t0;
}

/* jemalloc's stats after an epoch refresh. Never from the dump hook: ctl_refresh takes prof_dump_mtx,
 * which jemalloc holds while it calls the hook (it would deadlock). The context thread calls this
 * right after the hook returned; the call waits for jemalloc to release that lock. */
static void ctx_jemalloc(struct hl_context *c) {
    if (!je_mallctl) return;
    uint64_t epoch = 1;
    size_t sz = sizeof epoch;
    if (je_mallctl("epoch", &epoch, &sz, &epoch, sz) != 0) return;
    for (int i = 0; i < 6; i++) {
        size_t v = 0;
        sz = sizeof v;
        if (je_mallctl(je_names[i], &v, &sz, NULL, 0) == 0) c->je[i] = (int64_t)v;
    }
    /* dirty and muzzy pages of all arenas (4096 = MALLCTL_ARENAS_ALL) */
    size_t pg = 0;
    sz = sizeof pg;
    if (je_mallctl("stats.arenas.4096.pdirty", &pg, &sz, NULL, 0) == 0) c->je_pdirty = (int64_t)pg;
    sz = sizeof pg;
    if (je_mallctl("stats.arenas.4096.pmuzzy", &pg, &sz, NULL, 0) == 0) c->je_pmuzzy = (int64_t)pg;
    c->je_delay_ns = ts_ns(CLOCK_MONOTONIC) - c->mono_ns;
}

/* ---- the dump hook: writes the table ------------------------------------------------------------ */
/* Output through a fixed buffer with write(2). Two writers exist: the context thread's (which also formats
 * the late keys it writes into the hook's sidecar, late_patch) and the dump hook's own. */
struct writer {
    char buf[1 << 16]; size_t len; int fd; int err;
    off_t flushed;  /* bytes already written to fd: the file offset of buf[0] */
    int reserve;    /* write_context: leave LATE_LEN bytes for the late keys instead of writing them */
    off_t late_off; /* where that reservation went (-1: none) */
};

static void wflush(struct writer *w) {
    size_t off = 0;
    while (off < w->len && !w->err) {
        ssize_t r = write(w->fd, w->buf + off, w->len - off);
        if (r < 0) { if (errno == EINTR) continue; w->err = 1; break; }
        off += (size_t)r;
    }
    w->flushed += (off_t)w->len;
    w->len = 0;
}
static void wmem(struct writer *w, const char *s, size_t n) {
    while (n) {
        if (w->len == sizeof w->buf) wflush(w);
        size_t k = sizeof w->buf - w->len < n ? sizeof w->buf - w->len : n;
        memcpy(w->buf + w->len, s, k);
        w->len += k; s += k; n -= k;
    }
}
static void wstr(struct writer *w, const char *s) { wmem(w, s, strlen(s)); }
static void wdec(struct writer *w, int64_t v) {
    char t[24]; int i = 24; uint64_t u = v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
    do { t[--i] = (char)('0' + u % 10); u /= 10; } while (u);
    if (v < 0) t[--i] = '-';
    wmem(w, t + i, (size_t)(24 - i));
}
static void whex(struct writer *w, uint64_t u) {
    char t[20]; int i = 20;
    do { t[--i] = "0123456789abcdef"[u & 15]; u >>= 4; } while (u);
    t[--i] = 'x'; t[--i] = '0';
    wmem(w, t + i, (size_t)(20 - i));
}


/* A string field, percent-encoded as in PYFRAMES/1 §3 ("-" when empty, a leading '-' as %2D). */
static void wenc(struct writer *w, const char *s, size_t n) {
    if (n == 0) { wstr(w, "-"); return; }
    char t[3];
    for (size_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)s[i];
        if (i == 0 && b == '-') { wstr(w, "%2D"); continue; }
        size_t k = put_byte(t, 0, sizeof t, b);
        wmem(w, t, k);
    }
}
static void wkv(struct writer *w, const char *key, int64_t v) {
    if (v < 0) return; /* unreadable: the key is left out */
    wstr(w, "C "); wstr(w, key); wstr(w, " "); wdec(w, v); wstr(w, "\n");
}

/* The keys known only after the dump (the context thread's jemalloc stats) and hook_alloc_bytes (known
 * after the hook's own sidecar write): written together, right after "C context 1". */
static void write_late(struct writer *w, const struct hl_context *c) {
    for (int i = 0; i < 6; i++) wkv(w, je_keys[i], c->je[i]);
    wkv(w, "je_pdirty", c->je_pdirty);
    wkv(w, "je_pmuzzy", c->je_pmuzzy);
    if (c->je_pdirty >= 0 || c->je_pmuzzy >= 0) wkv(w, "page_size", ctx_page_size);
    wkv(w, "je_delay_ns", c->je_delay_ns);
    wkv(w, "hook_alloc_bytes", c->hook_alloc);
}

/* The hook's sidecar leaves LATE_LEN bytes for those keys, a blank comment line the context thread
 * overwrites in place (one pwrite) with them and a shorter blank comment: the sidecar keeps its inode and
 * name, where a second version written beside it and renamed over it cost a file creation, a deletion
 * and, on ext4, a write-back forced by the rename (about 0.25 ms of CPU a dump on the development VM, four
 * times the rest of the thread's work). The region never spans a page boundary, so a kill during the
 * pwrite leaves the old bytes or the new ones (a write into one page of the page cache is one copy), both
 * a whole context. At most 11 keys of at most 40 bytes each. */
#define LATE_LEN 512
#define LATE_PAGE 4096
static const char late_blank[] = "# (jemalloc stats: written here after the dump)";

/* A comment line of exactly n bytes (n >= 2): "#...", padded with blanks, then a newline. */
static void wpad(struct writer *w, size_t n, const char *text) {
    size_t t = strlen(text);
    if (t > n - 1) t = n - 1;
    wmem(w, text, t);
    for (size_t i = t; i < n - 1; i++) wmem(w, " ", 1);
    wmem(w, "\n", 1);
}

static void reserve_late(struct writer *w) {
    off_t at = w->flushed + (off_t)w->len;
    size_t room = LATE_PAGE - (size_t)(at % LATE_PAGE);
    if (room < LATE_LEN) { /* would straddle a page: fill up to the next one */
        if (room == 1) wmem(w, "\n", 1); else wpad(w, room, "#");
        at += (off_t)room;
    }
    w->late_off = at;
    wpad(w, LATE_LEN, late_blank);
}

static void write_context(struct writer *w, const struct hl_context *cp) {
    const struct hl_context c = *cp;
    wstr(w, "C context 1\n");
    if (w->reserve) reserve_late(w);
    else write_late(w, cp);
    wkv(w, "time_real_ns", c.real_ns);
    wkv(w, "time_mono_ns", c.mono_ns);
    wkv(w, "time_boot_ns", c.boot_ns);
    wkv(w, "pid", c.pid);
    wkv(w, "ppid", c.ppid);
    if (c.n_nspid > 0) {
        wstr(w, "C nspid ");
        for (int i = 0; i < c.n_nspid; i++) { if (i) wstr(w, ","); wdec(w, c.nspid[i]); }
        wstr(w, "\n");
    }
    wkv(w, "pid_ns", c.pid_ns);
    if (ctx_boot_id[0]) { wstr(w, "C boot_id "); wenc(w, ctx_boot_id, strlen(ctx_boot_id)); wstr(w, "\n"); }
    wkv(w, "start_boot_ns", c.start_boot_ns);
    wkv(w, "start_real_ns", c.start_real_ns);
    if (c.comm_len) { wstr(w, "C comm "); wenc(w, c.comm, c.comm_len); wstr(w, "\n"); }
    if (c.cmd_len) { wstr(w, "C cmdline "); wenc(w, cp->cmdline, c.cmd_len); wstr(w, "\n"); }
    if (c.cmd_cut) wkv(w, "cmdline_cut", 1);
    if (c.host[0]) { wstr(w, "C hostname "); wenc(w, c.host, strlen(c.host)); wstr(w, "\n"); }
    wkv(w, "rss", c.rss);
    wkv(w, "rss_anon", c.rss_anon);
    if (c.cg_version) {
        wkv(w, "cg_version", c.cg_version);
        wstr(w, "C cg_path "); wenc(w, cp->cgdir, strlen(cp->cgdir)); wstr(w, "\n");
        wkv(w, "cg_current", c.cg_current);
        if (c.cg_max == -2) wstr(w, "C cg_max max\n"); else wkv(w, "cg_max", c.cg_max);
        wkv(w, "cg_anon", c.cg_anon);
        wkv(w, "cg_file", c.cg_file);
    }
    for (int i = 0; i < SR_N; i++) wkv(w, sr_keys[i], c.sr[i]);
    wkv(w, "shm_used", c.shm_used);
    wkv(w, "shm_size", c.shm_size);
    wkv(w, "fork_ppid", c.fork_ppid);
    if (c.fork_ppid >= 0) { wkv(w, "fork_real_ns", c.fork_real_ns); wkv(w, "fork_mono_ns", c.fork_mono_ns); }
    if (c.trigger) { wstr(w, "C trigger "); wstr(w, c.trigger); wstr(w, "\n"); }
    wkv(w, "trigger_ppm", c.trigger_ppm);
    wkv(w, "ctx_cost_ns", c.cost_ns);
}

static void write_watch_stats(struct writer *w);

static void write_table(struct writer *w, int fd, const struct hl_context *c) {
    w->fd = fd; w->len = 0; w->err = 0; w->flushed = 0; w->late_off = -1;
    uint32_t count = py_ok ? atomic_load_explicit(&n_entries, memory_order_acquire) : 0;
    wstr(w, "PYFRAMES/1 tag=0x7079 kind_shift=44 id_shift=4 pid=");
    wdec(w, getpid());
    wstr(w, " python=");
    if (py_ok) { wdec(w, py_major); wstr(w, "."); wdec(w, py_minor); wstr(w, "."); wdec(w, py_micro); }
    else wstr(w, "-"); /* no Python frames in this process: the table carries the context only */
    if (table_token[0]) { wstr(w, " token="); wstr(w, table_token); }
    wstr(w, cfg_lines ? " granularity=line" : " granularity=function");
    wstr(w, " producer=heaplens-capture\n# samples=");
    wdec(w, (int64_t)atomic_load(&st_samples)); wstr(w, " merged="); wdec(w, (int64_t)atomic_load(&st_merged));
    wstr(w, " unmerged="); wdec(w, (int64_t)atomic_load(&st_unmerged));
    wstr(w, " nopython="); wdec(w, (int64_t)atomic_load(&st_nopython));
    wstr(w, " truncated="); wdec(w, (int64_t)atomic_load(&st_truncated));
    wstr(w, " unknown="); wdec(w, (int64_t)atomic_load(&st_unknown));
    if (cfg_timing) {
        wstr(w, " native_ns="); wdec(w, (int64_t)atomic_load(&st_native_ns));
        wstr(w, " python_ns="); wdec(w, (int64_t)atomic_load(&st_python_ns));
    }
    wstr(w, "\n");
    if (cfg_timing) { /* "# timing_log2_ns native=c0,c1,... python=..." (bucket k counts samples in [2^k, 2^(k+1)) ns) */
        wstr(w, "# timing_log2_ns native=");
        for (int k = 0; k < HIST_BUCKETS; k++) { if (k) wstr(w, ","); wdec(w, (int64_t)atomic_load(&hist_native[k])); }
        wstr(w, " python=");
        for (int k = 0; k < HIST_BUCKETS; k++) { if (k) wstr(w, ","); wdec(w, (int64_t)atomic_load(&hist_python[k])); }
        wstr(w, "\n");
    }
    if (cfg_timing) write_watch_stats(w);
    if (c) write_context(w, c);
    static const char *const names[] = {"", "", "entry", "unmerged", "truncated", "unknown"};
    for (int k = PF_ENTRY; k <= PF_UNKNOWN; k++) {
        wstr(w, "M "); whex(w, PF_ADDR(k, 0)); wstr(w, " "); wstr(w, names[k]); wstr(w, "\n");
    }
    for (uint32_t id = 1; id <= count; id++) {
        const struct entry *e = &entries[id - 1];
        wstr(w, "F "); whex(w, PF_ADDR(PF_FRAME, id));
        wstr(w, " "); wdec(w, e->line); wstr(w, " "); wdec(w, e->firstlineno); wstr(w, " ");
        wmem(w, arena + e->qual_off, e->qual_len); wstr(w, " ");
        wmem(w, arena + e->file_off, ((size_t)e->file_len_hi << 16) | e->file_len_lo); wstr(w, "\n");
    }
    wstr(w, "END "); wdec(w, count); wstr(w, "\n");
    wflush(w);
}

/* ---- private temp files -------------------------------------------------------------------------
 * Every file the library writes under a temporary name is `<base>.<16 random hex>.tmp`, created with
 * O_CREAT|O_EXCL|O_NOFOLLOW: a link planted in the dump folder is never written through, and a file
 * another user created beforehand is never adopted (its name is unknown in advance, and O_EXCL refuses
 * an existing one). Mode: the caller's (jemalloc's 0644, the sidecar's 0644), less the umask. */
#define TMP_SUFFIX_MAX 22 /* ".<16 hex>.tmp" and its NUL */
static _Atomic uint64_t tmp_counter;

static void random_hex16(char out[17]) {
    unsigned char r[8];
    if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        /* no entropy yet (early boot): unique within the process, hard enough to guess across */
        uint64_t x = mix(now_ns() ^ ((uint64_t)getpid() << 40) ^ atomic_fetch_add(&tmp_counter, 1) * 0x9e3779b97f4a7c15ULL);
        memcpy(r, &x, sizeof r);
    }
    for (int i = 0; i < 8; i++) {
        out[2 * i] = "0123456789abcdef"[r[i] >> 4];
        out[2 * i + 1] = "0123456789abcdef"[r[i] & 15];
    }
    out[16] = 0;
}

/* Opens a new private `<base>.<random>.tmp` for writing; its name goes into tmp (cap bytes). -1 with errno. */
static int open_private_tmp(char *tmp, size_t cap, const char *base, mode_t mode) {
    size_t n = strlen(base);
    if (n + TMP_SUFFIX_MAX > cap) { errno = ENAMETOOLONG; return -1; }
    memcpy(tmp, base, n);
    for (int tries = 0; tries < 8; tries++) {
        char r[17];
        random_hex16(r);
        tmp[n] = '.';
        memcpy(tmp + n + 1, r, 16);
        memcpy(tmp + n + 17, ".tmp", 5);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    return -1;
}

#define REPLACE_ONLY 8 /* write_tables: the sidecar only replaces an existing one (the thread's fallback when the
                        * hook's sidecar has no room for the late keys) */
static struct writer ctx_writer, hook_writer;
static const char *hook_append_path; /* set by the dump hook while the dump is still under its temporary name */
/* keep: the sidecar is written with room for the late keys (reserve_late) and, once renamed into place,
 * its fd and the room's offset are left in keep->fd and keep->off for the context thread (fd -1 otherwise) */
struct late_slot { int fd; off_t off; };
static void write_tables(struct writer *w, const char *filename, const struct hl_context *c, int modes, struct late_slot *keep) {
    size_t fl = strlen(filename);
    if (keep) keep->fd = -1;
    if (modes & TABLE_SIDECAR) {
        char path[4096], tmp[4096 + TMP_SUFFIX_MAX];
        if (fl + sizeof ".pyframes" <= sizeof path) {
            memcpy(path, filename, fl); memcpy(path + fl, ".pyframes", sizeof ".pyframes");
            int fd = open_private_tmp(tmp, sizeof tmp, path, 0644);
            if (fd >= 0) {
                w->reserve = keep != NULL;
                write_table(w, fd, c);
                w->reserve = 0;
                int bad = w->err;
                /* replacing the hook's first version: not if someone removed it meanwhile */
                if (!bad && (!(modes & REPLACE_ONLY) || access(path, F_OK) == 0) && rename(tmp, path) == 0) {
                    if (keep && w->late_off >= 0) { keep->fd = fd; keep->off = w->late_off; fd = -1; }
                } else {
                    unlink(tmp);
                }
                if (fd >= 0) close(fd);
            }
        }
    }
    if (modes & TABLE_APPEND) {
        /* the hook appends to a staged dump before it is renamed into place */
        int fd = open(w == &hook_writer && hook_append_path ? hook_append_path : filename, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
            /* a write that fails (a full disk) is cut back off: the dump stays whole, without its table */
            struct stat st;
            int sized = fstat(fd, &st) == 0;
            write_table(w, fd, c);
            if (w->err && sized && ftruncate(fd, st.st_size) != 0) {}
            close(fd);
        }
    }
}

/* ---- the context thread ----------------------------------------------------------------------------
 * The dump hook captures the context (times, identity, RSS, cgroup) and queues it with the dump's name;
 * this thread adds jemalloc's refreshed stats once jemalloc released its dump lock: into the room the
 * hook's sidecar left for them (late_patch), and/or in an appended table it writes whole.
 * One producer (dumps are serialized by jemalloc), one consumer.
 *
 * The thread lives only while it has work: the hook starts it for a dump and it ends once the queue has
 * been empty for its linger (a burst of dumps keeps one thread), so a process between dumps runs no
 * thread of ours (Python 3.12+ warns at every os.fork() in a process with more than one thread), and
 * fork() asks it to end at once and waits for that (ctx_atfork_prepare). The linger is CTX_LINGER_NS after
 * a lone dump and twice the spacing of the last two dumps when they came less than CTX_LINGER_MAX_NS / 2
 * apart: dumps that follow each other that closely (a job allocating fast, interval dumps every few
 * hundred ms) keep one thread instead of starting and ending one per dump (about 0.1 ms of CPU each:
 * the clone, jemalloc's thread data set up and torn down).
 * ctx_state: 0 no thread; 1 running; 2 it found the queue empty and returns (joined before the next). The
 * thread stores 2, then looks at the queue once more; the hook publishes a dump, then reads the state: one
 * of the two sees the other (sequentially consistent), so no queued dump is left without a thread. */
#define PENDING_CAP 8 /* dumps queued at most; more (the thread far behind) are written by the hook itself */
struct pending { char filename[4096]; struct hl_context c; struct late_slot late; };
static struct pending pending[PENDING_CAP];
static _Atomic uint32_t pend_head, pend_tail; /* head: next slot the hook fills; tail: next the thread writes */
static _Atomic int ctx_state;
static pthread_t ctx_tid;
static _Atomic uint32_t pend_seq; /* futex word the lingering thread sleeps on: bumped by each dump and by fork */
static _Atomic int ctx_quit;      /* set by fork's prepare handler: end without lingering */
#define CTX_LINGER_NS 20000000
#define CTX_LINGER_MAX_NS 500000000
static _Atomic int64_t ctx_linger_ns = CTX_LINGER_NS; /* set by the hook at each dump */
static int64_t ctx_prev_dump_ns = -1;                 /* the previous dump's time_mono_ns (the hook's) */

/* From the hook: the linger after this dump, from its spacing to the previous one. */
static void ctx_set_linger(int64_t mono_ns) {
    int64_t gap = ctx_prev_dump_ns >= 0 && mono_ns >= ctx_prev_dump_ns ? mono_ns - ctx_prev_dump_ns : -1;
    ctx_prev_dump_ns = mono_ns;
    int64_t l = CTX_LINGER_NS;
    if (gap >= 0 && gap <= CTX_LINGER_MAX_NS / 2 && 2 * gap > l) l = 2 * gap;
    atomic_store(&ctx_linger_ns, l);
}

static void fwake(_Atomic uint32_t *addr) {
    atomic_fetch_add(addr, 1);
    syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Writes the late keys into the room the hook's sidecar left for them (reserve_late), then closes it. */
static void late_patch(struct late_slot *s, const struct hl_context *c) {
    if (s->fd < 0) return;
    struct writer *w = &ctx_writer; /* the thread's; write_table resets it afterwards */
    w->fd = -1; w->len = 0; w->err = 0; w->flushed = 0;
    write_late(w, c);
    if (w->len + 2 <= LATE_LEN) {
        wpad(w, LATE_LEN - w->len, "#");
        ssize_t r = pwrite(s->fd, w->buf, LATE_LEN, s->off); /* one write within one page: whole or not at all */
        (void)r;
    }
    w->len = 0;
    close(s->fd);
    s->fd = -1;
}

static void *ctx_thread_main(void *arg) {
    (void)arg;
    int lingered = 0;
    for (;;) {
        uint32_t seq = atomic_load(&pend_seq);
        uint32_t tail = atomic_load(&pend_tail);
        if (tail == atomic_load(&pend_head)) {
            if (!lingered && !atomic_load(&ctx_quit)) {
                int64_t l = atomic_load(&ctx_linger_ns);
                struct timespec d = {(time_t)(l / 1000000000), (long)(l % 1000000000)};
                syscall(SYS_futex, &pend_seq, FUTEX_WAIT_PRIVATE, seq, &d, NULL, 0);
                lingered = 1;
                continue;
            }
            atomic_store(&ctx_state, 2);
            if (tail == atomic_load(&pend_head)) return NULL;
            int ending = 2;
            if (!atomic_compare_exchange_strong(&ctx_state, &ending, 1)) return NULL; /* the hook took over */
            continue;
        }
        lingered = 0;
        struct pending *p = &pending[tail % PENDING_CAP];
        ctx_jemalloc(&p->c);
        int modes = cfg_table;
        if (p->late.fd >= 0) modes &= ~TABLE_SIDECAR; /* the hook's sidecar, completed in place */
        else if (modes & TABLE_SIDECAR) modes |= REPLACE_ONLY;
        late_patch(&p->late, &p->c);
        write_tables(&ctx_writer, p->filename, &p->c, modes, NULL);
        atomic_store(&pend_tail, tail + 1);
    }
}

/* Joins a thread that said it ends (state 2 -> 0); 1 when it did, 0 when the thread went on (state 1). */
static int ctx_thread_reap(void) {
    int ending = 2;
    if (!atomic_compare_exchange_strong(&ctx_state, &ending, 0)) return 0;
    pthread_join(ctx_tid, NULL);
    return 1;
}

/* Starts the thread (state 0 -> 1); 0 when it could not be started. */
static int ctx_thread_start(void) {
    pthread_attr_t a;
    sigset_t all, old;
    if (pthread_attr_init(&a) != 0) return 0;
    pthread_attr_setstacksize(&a, 64 * 1024); /* buffers are static; the thread needs little stack */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* signals stay with the program's own threads */
    atomic_store(&ctx_state, 1);
    int ok = pthread_create(&ctx_tid, &a, ctx_thread_main, NULL) == 0;
    if (ok) pthread_setname_np(ctx_tid, "heaplens-ctx");
    else atomic_store(&ctx_state, 0);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&a);
    return ok;
}

/* After the hook queued a dump: make sure a thread will write it. 0 when none could be started. */
static int ctx_thread_ensure(void) {
    for (;;) {
        int st = atomic_load(&ctx_state);
        if (st == 1) return 1;
        if (st == 2 && !ctx_thread_reap()) continue;
        return ctx_thread_start();
    }
}

/* Before fork: let the thread write what is queued and end (bounded), so that the child is forked from a
 * process without our thread and the parent has none when Python counts its threads after fork(). */
#define EXIT_WAIT_MS 2000
static void ctx_atfork_prepare(void) {
    atomic_store(&ctx_quit, 1);
    fwake(&pend_seq);
    for (int ms = 0; ms < EXIT_WAIT_MS; ms++) {
        int st = atomic_load(&ctx_state);
        if (st == 0 || (st == 2 && ctx_thread_reap())) break;
        struct timespec d = {0, 1000000};
        nanosleep(&d, NULL);
    }
    atomic_store(&ctx_quit, 0);
}

/* A forked child has no context thread (threads do not survive fork) and must not write its parent's
 * queued dumps; its first dump starts one. jemalloc's own child handler, registered before ours, has
 * already reset its locks. */
static void ctx_atfork_child(void) {
    for (uint32_t i = atomic_load(&pend_tail); i != atomic_load(&pend_head); i++) {
        struct late_slot *s = &pending[i % PENDING_CAP].late;
        if (s->fd >= 0) { close(s->fd); s->fd = -1; } /* the parent's copy stays its thread's to complete */
    }
    atomic_store(&pend_head, 0);
    atomic_store(&pend_tail, 0);
    ctx_prev_dump_ns = -1;
    atomic_store(&ctx_linger_ns, CTX_LINGER_NS);
    atomic_store(&ctx_state, 0);
    atomic_store(&ctx_quit, 0);
}

/* At exit the final dump (prof_final, an atexit handler) may still be queued: wait for it, bounded. */
__attribute__((destructor)) static void hl_fini(void) {
    for (int ms = 0; ms < EXIT_WAIT_MS; ms++) {
        if (atomic_load(&pend_tail) == atomic_load(&pend_head) || atomic_load(&ctx_state) == 0) return;
        struct timespec d = {0, 1000000};
        nanosleep(&d, NULL);
    }
}

/* jemalloc's per-thread allocation counter (a lock-free read of the thread's own tsd): lets a timing
 * run prove that the hook allocates nothing */
static int64_t thread_allocated(void) {
    uint64_t v = 0;
    size_t sz = sizeof v;
    return je_mallctl && je_mallctl("thread.allocated", &v, &sz, NULL, 0) == 0 ? (int64_t)v : -1;
}

/* ---- atomic dumps and the ring (HEAPLENS_DUMP_ATOMIC, HEAPLENS_DUMP_KEEP) ---------------------------
 * jemalloc opens each dump with creat(2) (prof_sys.c, prof_dump_open_file_impl) while it holds
 * prof_dump_mtx, writes it, closes it and then calls the dump hook with the same name. This library is
 * preloaded, so its creat() is the one jemalloc calls: for a name jemalloc generated for this process
 * (<prefix>.<pid>.<seq>.<i|m|u|f><n>.heap) it opens <name>.<random>.tmp instead, and the hook, once that file is
 * complete, writes the sidecar and renames that file to <name>. A kill at any moment leaves every
 * <name> whole (README "After a kill"). Names given explicitly to prof.dump are written as given.
 * The stage_* state is only touched under prof_dump_mtx (creat and the hook both run inside it). */
static int cfg_atomic = 1;
static int cfg_keep;                      /* 0: keep every dump */
static char stage_final[4096], stage_tmp[4096 + TMP_SUFFIX_MAX];
static int stage_state;                   /* 0 nothing staged, 1 <name>.<random>.tmp open, -1 its creat failed */
static int stage_errno;
static char *ring_names;                  /* cfg_keep names of CTX_PATH_MAX bytes (mmap'd) */
static uint32_t ring_len, ring_start;
static int ring_have_first;               /* the process's first dump: kept, never in the ring */
static int said_open, said_cut, said_rename, said_policy_dump, said_folder;

/* The letter of a dump name jemalloc generates for this process, or 0. */
static char jemalloc_dump_letter(const char *path) {
    size_t n = strlen(path);
    if (n < 12 || strcmp(path + n - 5, ".heap") != 0) return 0;
    const char *p = path + n - 5;
    while (p > path && p[-1] >= '0' && p[-1] <= '9') p--;             /* <n> */
    if (p - path < 2 || !strchr("imuf", p[-1]) || p[-2] != '.') return 0;
    char letter = p[-1];
    p -= 2;
    const char *q = p;
    while (q > path && q[-1] >= '0' && q[-1] <= '9') q--;             /* <seq> */
    if (q == p || q - path < 2 || q[-1] != '.') return 0;
    q--;
    const char *r = q;
    int64_t pid = 0;
    while (r > path && r[-1] >= '0' && r[-1] <= '9') r--;             /* <pid> */
    if (r == q || r == path || r[-1] != '.' || q - r > 10) return 0;
    for (const char *d = r; d < q; d++) pid = pid * 10 + (*d - '0');
    return pid == (int64_t)getpid() ? letter : 0;
}

static void say_once(int *said, const char *a, const char *b, const char *c);

/* Once per process: a dump folder every user may write to and without the sticky bit lets another user
 * rename, replace or delete the dumps (and plant links, which the library refuses to follow). */
static void check_dump_folder(const char *path) {
    if (said_folder) return;
    char dir[4096];
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    if (n >= sizeof dir) return;
    if (slash && n == 0) n = 1; /* "/name" */
    if (slash) memcpy(dir, path, n); else dir[n++] = '.';
    dir[n] = 0;
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return;
    if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
        say_once(&said_folder, "the dump folder ", dir,
                 " is writable by every user and not sticky: another user can replace or delete its dumps (use a folder only you can write)");
}

static int stage_open(const char *path, mode_t mode) {
    size_t n = strlen(path);
    if (dump_hook_on && jemalloc_dump_letter(path)) {
        check_dump_folder(path);
        if (cfg_atomic && n < sizeof stage_final) {
            memcpy(stage_final, path, n + 1);
            int fd = open_private_tmp(stage_tmp, sizeof stage_tmp, path, mode);
            stage_state = fd >= 0 ? 1 : -1;
            stage_errno = errno;
            return fd;
        }
        /* written under its final name: a new file of ours, never through a planted link nor into a file
         * that stood there (another user's, or a stale one of a reused pid: removed, as a rename would) */
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0 && errno == EEXIST && unlink(path) == 0)
            fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        return fd;
    }
    return open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}
HL_EXPORT int creat(const char *path, mode_t mode) { return stage_open(path, mode); }
HL_EXPORT int creat64(const char *path, mode_t mode) { return stage_open(path, mode); }

/* strerror without the locale machinery (which may allocate) */
static const char *errno_text(int e) {
    switch (e) {
    case EACCES: return "permission denied";
    case EROFS: return "read-only file system";
    case ENOSPC: return "no space left on device";
    case EDQUOT: return "disk quota exceeded";
    case ENOENT: return "no such folder";
    case ELOOP: return "a link stands at the dump's name";
    case EMFILE: case ENFILE: return "too many open files";
    default: return "I/O error";
    }
}

static void say_once(int *said, const char *a, const char *b, const char *c) {
    if (*said) return;
    *said = 1;
    say(a, b, c);
}

/* NULL when the staged file is a whole dump: it ends with a complete line of its maps section (the last
 * thing jemalloc writes). jemalloc ignores short writes and stops at a failed one, so a full disk leaves
 * a file cut anywhere: such a file is never renamed to the dump's name. */
static const char *stage_problem(void) {
    int fd = open(stage_tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return "it vanished while written";
    struct stat st;
    struct statfs sf;
    char tail[512];
    int full = fstatfs(fd, &sf) == 0 && sf.f_bfree == 0;
    if (fstat(fd, &st) != 0 || st.st_size == 0) {
        close(fd);
        return full ? "the disk is full (nothing was written)" : "nothing was written (a write error)";
    }
    size_t k = st.st_size < (off_t)sizeof tail ? (size_t)st.st_size : sizeof tail;
    ssize_t r = pread(fd, tail, k, st.st_size - (off_t)k);
    close(fd);
    const char *cut = full ? "the disk is full (it was cut)" : "it was cut (a write error)";
    if (r != (ssize_t)k || tail[k - 1] != '\n') return cut;
    size_t b = k - 1;
    while (b > 0 && tail[b - 1] != '\n') b--;
    size_t h = b;
    while (h < k && ((tail[h] >= '0' && tail[h] <= '9') || (tail[h] >= 'a' && tail[h] <= 'f'))) h++;
    if (h == b || h >= k || tail[h] != '-') return cut; /* the last line is not a maps line */
    return NULL;
}

/* A pid namespace that sees an outer namespace's /proc (`unshare --pid` without `--mount-proc`, a runtime sharing
 * the host's /proc): jemalloc reads its maps from /proc/<getpid()>/..., another process's or none, so its dumps
 * lack this process's maps (and the completeness check would drop them as cut). /proc/self is still this
 * process: the staged dump's maps section is replaced with /proc/self/maps. */
static char maps_buf[1 << 16];
static const char MAPS_HEAD[] = "\nMAPPED_LIBRARIES:\n";
#define MAPS_SCAN_MAX (8 << 20) /* a maps section is at the end and far smaller than this */

static int64_t foreign_pid = -1; /* the process the answer below is for (a forked child asks again) */
static int foreign_answer;

static int proc_is_foreign_read(void) {
    char b[32];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, b, sizeof b - 1);
    close(fd);
    if (n <= 0) return 0;
    b[n] = 0;
    int64_t seen = ctx_num(b);
    return seen > 0 && seen != (int64_t)getpid();
}

/* The same for the process's whole life (its pid namespace and the /proc it sees do not change under it) */
static int proc_is_foreign(void) {
    int64_t pid = getpid();
    if (foreign_pid != pid) { foreign_answer = proc_is_foreign_read(); foreign_pid = pid; }
    return foreign_answer;
}

static void stage_fix_maps(void) {
    if (!proc_is_foreign()) return;
    int fd = open(stage_tmp, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) != 0) { close(fd); return; }
    /* where jemalloc's maps section starts, scanning back from the end (chunks overlap by the marker's length) */
    off_t end = st.st_size, cut = -1, floor = end > MAPS_SCAN_MAX ? end - MAPS_SCAN_MAX : 0;
    size_t hl = sizeof MAPS_HEAD - 1;
    while (end > floor && cut < 0) {
        off_t start = end - (off_t)sizeof maps_buf > floor ? end - (off_t)sizeof maps_buf : floor;
        ssize_t r = pread(fd, maps_buf, (size_t)(end - start), start);
        if (r <= 0) break;
        for (ssize_t i = r - (ssize_t)hl; i >= 0; i--)
            if (memcmp(maps_buf + i, MAPS_HEAD, hl) == 0) { cut = start + i; break; }
        if (start == floor) break;
        end = start + (off_t)hl;
    }
    int in = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (in >= 0 && ftruncate(fd, cut >= 0 ? cut : st.st_size) == 0 && lseek(fd, 0, SEEK_END) >= 0 &&
        write(fd, MAPS_HEAD, hl) == (ssize_t)hl) {
        ssize_t r;
        while ((r = read(in, maps_buf, sizeof maps_buf)) > 0)
            if (write(fd, maps_buf, (size_t)r) != r) break; /* a short write: the completeness check drops the dump */
    }
    if (in >= 0) close(in);
    close(fd);
}

static char *ring_at(uint32_t i) { return ring_names + (size_t)((ring_start + i) % (uint32_t)cfg_keep) * CTX_PATH_MAX; }

static void unlink_dump(const char *name) {
    char side[CTX_PATH_MAX + 16];
    unlink(name); /* the dump first: a kill in between leaves a table without its dump, which readers skip */
    if (ctx_join(side, sizeof side, name, ".pyframes", "")) unlink(side);
}

/* Renames the staged dump into place. With HEAPLENS_DUMP_KEEP=N the oldest of the newest N goes first,
 * so that at no moment more than the first dump and N others exist. */
static void stage_commit(void) {
    int ringed = cfg_keep > 0 && ring_names;
    if (ringed && ring_have_first && ring_len == (uint32_t)cfg_keep) {
        unlink_dump(ring_at(0));
        ring_start = (ring_start + 1) % (uint32_t)cfg_keep;
        ring_len--;
    }
    if (rename(stage_tmp, stage_final) != 0) {
        int e = errno;
        unlink(stage_tmp);
        say_once(&said_rename, "could not rename a finished dump into place (", errno_text(e), "); it was dropped");
        return;
    }
    if (!ring_have_first) ring_have_first = 1;
    else if (ringed) {
        ctx_join(ring_at(ring_len), CTX_PATH_MAX, stage_final, "", "");
        ring_len++;
    }
}

/* ---- the memory policy: dumps driven by RSS and the cgroup (HEAPLENS_DUMP_*, README) ------------------
 * A helper thread (heaplens-watch) polls /proc/self/statm and the cgroup's files with pread(2) into
 * static buffers (nothing allocated, no lock the program can hold) and asks jemalloc for a dump with
 * the prof.dump mallctl when a rule fires.
 *
 * fork(): the watcher ends before it (watch_atfork_prepare: woken, it finishes a dump it is writing and
 * returns; fork() waits, bounded), so no thread of ours is copied into the child in the middle of
 * anything, and the parent has no thread of ours when Python 3.12+ counts its threads right after fork()
 * (its DeprecationWarning "This process is multi-threaded, use of fork() may lead to deadlocks"). In a
 * Python process the parent's watcher starts again at the first sampled allocation WATCH_RESUME_NS after
 * the fork (the backtrace hook), never inside fork() itself; elsewhere, in fork's parent handler. Its rules'
 * state (fractions fired, pressure seen) lives in statics, so a restart does not fire them again. */
#define MAX_FRACTIONS 8
static int64_t cfg_rss_step;              /* bytes; 0: off */
static double cfg_fractions[MAX_FRACTIONS];
static int cfg_nfractions;
static int64_t cfg_min_interval_ns = 1000000000;
static int64_t cfg_poll_ns = 100000000;
static int64_t cfg_pressure_interval_ns = 30000000000;  /* v2 memory.events high / PSI; 0: off */
static int cfg_psi_percent = 10;
static pthread_t watch_tid;
static _Atomic int watch_on, watch_dumping;
/* the thread's life: 0 none, 1 running, 2 returned (joinable); watch_quit asks it to return, watch_seq wakes it */
static _Atomic int watch_state, watch_quit;
static _Atomic uint32_t watch_seq;
/* > 0: the watcher was stopped for a fork and starts again at the first sampled allocation from this time */
static _Atomic int64_t watch_resume_ns;
static int watch_stopped_for_fork;
#define WATCH_RESUME_NS 50000000
/* the rules' state across the watcher's restarts in one process (a forked child starts afresh) */
static int w_fired[MAX_FRACTIONS], w_said_nolimit, w_said_start;
static int64_t w_prev_high = -1, w_prev_psi_us = -1, w_prev_psi_t = -1, w_last_pressure = -1;
static const char *watch_trigger;         /* set by the watcher around its own prof.dump call */
static int64_t watch_ppm = -1;
static _Atomic int64_t last_dump_rss = -1, last_dump_mono = -1;
/* HEAPLENS_CAPTURE_TIMING=1: the watcher's own cost and each memory-driven dump's, for the benchmark */
#define DUMP_NS_KEEP 64
static _Atomic uint64_t watch_polls, watch_poll_cpu_ns, watch_start_ns, pol_dumps;
static _Atomic int64_t pol_dump_ns[DUMP_NS_KEEP];

static int policy_on(void) { return cfg_rss_step > 0 || cfg_nfractions > 0; }

/* "# watch polls=<n> poll_cpu_ns=<sum> wall_ns=<since start> dumps=<n> dump_ns=<last 64, oldest first>" */
static void write_watch_stats(struct writer *w) {
    if (!atomic_load(&watch_on)) return;
    uint64_t nd = atomic_load(&pol_dumps), start = atomic_load(&watch_start_ns);
    wstr(w, "# watch polls="); wdec(w, (int64_t)atomic_load(&watch_polls));
    wstr(w, " poll_cpu_ns="); wdec(w, (int64_t)atomic_load(&watch_poll_cpu_ns));
    wstr(w, " wall_ns="); wdec(w, start ? ts_ns(CLOCK_MONOTONIC) - (int64_t)start : 0);
    wstr(w, " dumps="); wdec(w, (int64_t)nd);
    wstr(w, " dump_ns=");
    uint64_t first = nd > DUMP_NS_KEEP ? nd - DUMP_NS_KEEP : 0;
    for (uint64_t k = first; k < nd; k++) {
        if (k > first) wstr(w, ",");
        wdec(w, atomic_load(&pol_dump_ns[k % DUMP_NS_KEEP]));
    }
    wstr(w, "\n");
}

/* RSS from a statm text ("size resident shared ..." in pages) */
static int64_t statm_rss(const char *b) {
    const char *p = strchr(b, ' ');
    int64_t pages = p ? ctx_num(p + 1) : -1;
    return pages >= 0 ? pages * ctx_page_size : -1;
}

/* The dump hook tells the watcher about every dump (its own and jemalloc's): the RSS step counts from it. */
static void watch_note_dump(void) {
    char b[128];
    if (!atomic_load(&watch_on) || ctx_read("/proc/self/statm", b, sizeof b - 1) <= 0) return;
    atomic_store(&last_dump_rss, statm_rss(b));
    atomic_store(&last_dump_mono, ts_ns(CLOCK_MONOTONIC));
}

static int64_t pread_num(int fd, char *b, size_t cap, int *unlimited) {
    if (fd < 0) return -1;
    ssize_t n = pread(fd, b, cap - 1, 0);
    if (n <= 0) return -1;
    b[n] = 0;
    if (unlimited) *unlimited = strncmp(b, "max", 3) == 0;
    return ctx_num(b);
}

/* Sleeps one poll, or until fork's prepare handler wakes it: 1 when it is to return. */
static int watch_sleep(int64_t ns) {
    uint32_t seq = atomic_load(&watch_seq);
    if (atomic_load(&watch_quit)) return 1;
    struct timespec d = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    syscall(SYS_futex, &watch_seq, FUTEX_WAIT_PRIVATE, seq, &d, NULL, 0);
    return atomic_load(&watch_quit);
}

static int watch_dump(const char *trigger, int64_t ppm) {
    watch_trigger = trigger;
    watch_ppm = ppm;
    atomic_store(&watch_dumping, 1);
    int64_t t0 = ts_ns(CLOCK_MONOTONIC);
    int r = je_mallctl("prof.dump", NULL, NULL, NULL, 0);
    int64_t t1 = ts_ns(CLOCK_MONOTONIC);
    atomic_store(&watch_dumping, 0);
    uint64_t k = atomic_fetch_add(&pol_dumps, 1);
    atomic_store(&pol_dump_ns[k % DUMP_NS_KEEP], t1 - t0);
    if (r != 0) say_once(&said_policy_dump, "a memory-driven dump failed (prof.dump: ", errno_text(r), "); watching goes on");
    /* a dump that could not be written still counts for the interval: a failing disk is not retried at once */
    atomic_store(&last_dump_mono, t1);
    return r == 0;
}

static char watch_file[CTX_FILE_MAX + 1], watch_cgdir[CTX_PATH_MAX], watch_path[CTX_PATH_MAX + 64];

static int watch_open(const char *name) {
    if (!ctx_join(watch_path, sizeof watch_path, watch_cgdir, "/", name)) return -1;
    return open(watch_path, O_RDONLY | O_CLOEXEC);
}

static void *watch_main(void *arg) {
    (void)arg;
    char b[256];
    int statm = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    int fd_use = -1, fd_lim = -1, fd_events = -1, fd_psi = -1;
    int fractions = cfg_nfractions > 0;
    int v = find_cgroup_dir(watch_cgdir, watch_file);
    if (v == 2) {
        fd_use = watch_open("memory.current");
        fd_lim = watch_open("memory.max");
        if (cfg_pressure_interval_ns > 0) { fd_events = watch_open("memory.events"); fd_psi = watch_open("memory.pressure"); }
    } else if (v == 1) {
        fd_use = watch_open("memory.usage_in_bytes");
        fd_lim = watch_open("memory.limit_in_bytes");
    }
    if (fractions && (fd_use < 0 || fd_lim < 0)) {
        if (!w_said_start)
            say("HEAPLENS_DUMP_CGROUP_FRACTIONS: no readable memory cgroup (", v ? watch_cgdir : "none found in /proc/self/cgroup",
                "); dumps by cgroup usage are off, the rest goes on");
        fractions = 0;
    }
    int *fired = w_fired;
    if (fractions && !w_said_start) {
        /* said at start, not after the first poll: a short program must still learn its setting does nothing */
        int unlimited = 0;
        int64_t limit0 = pread_num(fd_lim, b, sizeof b, &unlimited);
        if (v == 1 && limit0 >= (1ll << 62)) unlimited = 1;
        if (unlimited || limit0 <= 0) {
            say("HEAPLENS_DUMP_CGROUP_FRACTIONS: cgroup ", watch_cgdir, " has no memory limit; no fraction dumps until it has one");
            w_said_nolimit = 1;
        }
    }
    w_said_start = 1;
    if (statm >= 0 && pread(statm, b, sizeof b - 1, 0) > 0) {
        b[sizeof b - 1] = 0;
        if (atomic_load(&last_dump_rss) < 0) atomic_store(&last_dump_rss, statm_rss(b));
    }
    uint64_t unset = 0;
    atomic_compare_exchange_strong(&watch_start_ns, &unset, (uint64_t)ts_ns(CLOCK_MONOTONIC));
    for (;;) {
        if (watch_sleep(cfg_poll_ns)) break;
        int64_t c0 = ts_ns(CLOCK_THREAD_CPUTIME_ID), now = ts_ns(CLOCK_MONOTONIC);
        const char *trig = NULL;
        int64_t ppm = -1;
        int crossing = -1;
        int64_t usage = -1, limit = -1;
        if (cfg_rss_step > 0 && statm >= 0) {
            ssize_t n = pread(statm, b, sizeof b - 1, 0);
            if (n > 0) {
                b[n] = 0;
                int64_t rss = statm_rss(b), base = atomic_load(&last_dump_rss);
                if (rss >= 0 && base >= 0 && rss - base >= cfg_rss_step) trig = "rss-step";
            }
        }
        if (fractions) {
            int unlimited = 0;
            usage = pread_num(fd_use, b, sizeof b, NULL);
            limit = pread_num(fd_lim, b, sizeof b, &unlimited);
            if (v == 1 && limit >= (1ll << 62)) unlimited = 1; /* v1 writes "no limit" as ~2^63 */
            if (unlimited || limit <= 0) {
                if (!w_said_nolimit) say("HEAPLENS_DUMP_CGROUP_FRACTIONS: cgroup ", watch_cgdir, " has no memory limit; no fraction dumps until it has one");
                w_said_nolimit = 1;
            } else if (usage >= 0) {
                for (int i = 0; i < cfg_nfractions; i++) {
                    double thr = cfg_fractions[i] * (double)limit;
                    if ((double)usage >= thr) { if (!fired[i]) crossing = i; }
                    else if ((double)usage < thr - 0.02 * (double)limit) fired[i] = 0; /* fell back: re-armed */
                }
                if (crossing >= 0) { trig = "cgroup-fraction"; ppm = (int64_t)(cfg_fractions[crossing] * 1e6 + 0.5); }
            }
        }
        if (fd_events >= 0 || fd_psi >= 0) {
            int64_t high = -1, psi_us = -1;
            ssize_t n;
            if (fd_events >= 0 && (n = pread(fd_events, watch_file, CTX_FILE_MAX, 0)) > 0) { watch_file[n] = 0; high = ctx_field(watch_file, "high "); }
            if (fd_psi >= 0 && (n = pread(fd_psi, watch_file, CTX_FILE_MAX, 0)) > 0) {
                watch_file[n] = 0;
                char *t = strstr(watch_file, "total="); /* the first line is "some ... total=<us>" */
                psi_us = t ? ctx_num(t + 6) : -1;
            }
            const char *pt = NULL;
            if (high >= 0 && w_prev_high >= 0 && high > w_prev_high) pt = "cgroup-high";
            else if (psi_us >= 0 && w_prev_psi_us >= 0 && now > w_prev_psi_t &&
                     (psi_us - w_prev_psi_us) * 1000 * 100 >= (int64_t)cfg_psi_percent * (now - w_prev_psi_t)) pt = "cgroup-pressure";
            if (high >= 0) w_prev_high = high;
            if (psi_us >= 0) { w_prev_psi_us = psi_us; w_prev_psi_t = now; }
            if (pt && !trig && (w_last_pressure < 0 || now - w_last_pressure >= cfg_pressure_interval_ns)) trig = pt;
        }
        atomic_fetch_add(&watch_polls, 1);
        atomic_fetch_add(&watch_poll_cpu_ns, (uint64_t)(ts_ns(CLOCK_THREAD_CPUTIME_ID) - c0));
        int64_t last = atomic_load(&last_dump_mono);
        if (!trig || (last >= 0 && now - last < cfg_min_interval_ns)) continue; /* still true at the next poll */
        if (!watch_dump(trig, ppm)) continue;
        if (!strncmp(trig, "cgroup-h", 8) || !strncmp(trig, "cgroup-p", 8)) w_last_pressure = now;
        if (usage >= 0 && limit > 0)
            for (int i = 0; i < cfg_nfractions; i++)
                if ((double)usage >= cfg_fractions[i] * (double)limit) fired[i] = 1;
    }
    /* asked to end (a fork): the files are opened again at the next start */
    int fds[] = {statm, fd_use, fd_lim, fd_events, fd_psi};
    for (unsigned i = 0; i < sizeof fds / sizeof fds[0]; i++)
        if (fds[i] >= 0) close(fds[i]);
    atomic_store(&watch_state, 2);
    return NULL;
}

static void watch_start(void) {
    if (!policy_on() || !je_mallctl || atomic_load(&watch_state) != 0) return;
    pthread_attr_t a;
    sigset_t all, old;
    if (pthread_attr_init(&a) != 0) return;
    /* joinable: fork's prepare handler waits for it to end */
    /* the thread runs jemalloc's dump and this library's dump hook (some 30 KB of path buffers on the stack) */
    pthread_attr_setstacksize(&a, 256 * 1024);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    atomic_store(&watch_on, 1);
    atomic_store(&watch_quit, 0);
    atomic_store(&watch_state, 1);
    if (pthread_create(&watch_tid, &a, watch_main, NULL) == 0) pthread_setname_np(watch_tid, "heaplens-watch");
    else {
        atomic_store(&watch_state, 0);
        atomic_store(&watch_on, 0);
        say("could not start the memory watcher thread; memory-driven dumps are off", "", "");
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&a);
}

/* Before fork: the watcher ends (it finishes a dump it is writing; bounded), so that neither the child nor
 * the parent has a thread of ours when fork() returns. */
static void watch_atfork_prepare(void) {
    /* A restart still pending from an earlier fork is due after this one, not at its old time: that may fall
     * just as this fork() returns, while CPython counts the threads (the warning the restart's delay avoids). */
    if (atomic_exchange(&watch_resume_ns, 0) > 0) {
        watch_stopped_for_fork = 1;
        return;
    }
    if (atomic_load(&watch_state) != 1) return;
    atomic_store(&watch_quit, 1);
    fwake(&watch_seq);
    for (int i = 0; i < EXIT_WAIT_MS * 10 && atomic_load(&watch_state) != 2; i++) {
        struct timespec d = {0, 100000};
        nanosleep(&d, NULL);
    }
    if (atomic_load(&watch_state) != 2) return; /* still in a dump after EXIT_WAIT_MS: forked with it, as before */
    pthread_join(watch_tid, NULL);
    atomic_store(&watch_state, 0);
    watch_stopped_for_fork = 1;
}

/* After fork, in the parent: not at once in a Python process (it counts threads as fork() returns): at the
 * first sampled allocation WATCH_RESUME_NS from now (watch_maybe_resume); elsewhere at once. */
static void watch_atfork_parent(void) {
    if (!watch_stopped_for_fork) return;
    watch_stopped_for_fork = 0;
    if (!py_ok) { watch_start(); return; }
    atomic_store(&watch_resume_ns, ts_ns(CLOCK_MONOTONIC) + WATCH_RESUME_NS);
}

/* From the backtrace hook (a sampled allocation, on any thread): a relaxed load unless a restart is due. */
static void watch_maybe_resume(void) {
    int64_t at = atomic_load_explicit(&watch_resume_ns, memory_order_relaxed);
    if (at <= 0 || ts_ns(CLOCK_MONOTONIC) < at) return;
    if (atomic_compare_exchange_strong(&watch_resume_ns, &at, 0)) watch_start();
}

/* A forked child: its pages are its parent's until written (copy-on-write), so it records when and from
 * whom it was forked; it has its own dumps (a ring of its own) and, with the policy, its own watcher. */
static void policy_atfork_child(void) {
    fork_ppid = getppid();
    fork_real_ns = ts_ns(CLOCK_REALTIME);
    fork_mono_ns = ts_ns(CLOCK_MONOTONIC);
    stage_state = 0;
    ring_len = ring_start = 0;
    ring_have_first = 0;
    atomic_store(&last_dump_rss, -1);
    atomic_store(&last_dump_mono, -1);
    atomic_store(&watch_polls, 0);
    atomic_store(&watch_poll_cpu_ns, 0);
    atomic_store(&pol_dumps, 0);
    atomic_store(&watch_on, 0);
    atomic_store(&watch_dumping, 0); /* the parent's watcher may have been about to dump */
    /* no thread survived fork(): the child's watcher is its own, its rules start afresh */
    atomic_store(&watch_state, 0);
    atomic_store(&watch_resume_ns, 0);
    watch_stopped_for_fork = 0;
    memset(w_fired, 0, sizeof w_fired);
    w_said_nolimit = 0;
    w_prev_high = w_prev_psi_us = w_prev_psi_t = w_last_pressure = -1;
    atomic_store(&watch_start_ns, 0);
    watch_start();
}

/* What made this dump: the watcher's rule when the watcher asked for it, else jemalloc's own trigger. */
static const char *dump_trigger(const char *filename, int64_t *ppm) {
    *ppm = -1;
    if (atomic_load(&watch_dumping) && pthread_equal(pthread_self(), watch_tid)) { *ppm = watch_ppm; return watch_trigger; }
    switch (jemalloc_dump_letter(filename)) {
    case 'i': return "interval";
    case 'm': return "manual";
    case 'f': return "final";
    case 'u': return "high-water";
    default: return "manual"; /* a name given to prof.dump */
    }
}

static void hook_tables(const char *filename, const char *trig, int64_t ppm) {
    if ((!py_ok && !cfg_context) || cfg_table == TABLE_NONE) return; /* nothing to write (no thread started) */
    if (!cfg_context) { write_tables(&hook_writer, filename, NULL, cfg_table, NULL); return; }
    int64_t a0 = cfg_timing ? thread_allocated() : -1;
    uint32_t head = atomic_load_explicit(&pend_head, memory_order_relaxed);
    uint32_t tail = atomic_load_explicit(&pend_tail, memory_order_acquire);
    size_t fl = strlen(filename);
    if (cfg_context != 1 || head - tail >= PENDING_CAP || fl >= sizeof pending[0].filename) {
        /* no thread (or far behind): write now, without jemalloc's stats (they cannot be refreshed here) */
        static struct hl_context c;
        ctx_collect(&c);
        c.trigger = trig; c.trigger_ppm = ppm;
        c.hook_alloc = a0 >= 0 ? thread_allocated() - a0 : -1;
        write_tables(&hook_writer, filename, &c, cfg_table, NULL);
        return;
    }
    struct pending *p = &pending[head % PENDING_CAP];
    ctx_collect(&p->c);
    p->c.trigger = trig; p->c.trigger_ppm = ppm;
    memcpy(p->filename, filename, fl + 1);
    /* The sidecar is written now, without jemalloc's stats, so that a process ending right after the
     * dump (os._exit in a worker) still leaves its table; the context thread writes the stats into the
     * room left for them (late_patch). An appended table is written once, by the thread (two would both stay). */
    p->late.fd = -1;
    if (cfg_table & TABLE_SIDECAR) write_tables(&hook_writer, filename, &p->c, TABLE_SIDECAR, &p->late);
    p->c.hook_alloc = a0 >= 0 ? thread_allocated() - a0 : -1;
    ctx_set_linger(p->c.mono_ns);
    atomic_store(&pend_head, head + 1);
    fwake(&pend_seq); /* a lingering thread */
    /* The thread is started after the figures above: its start allocates (glibc's TLS vector, on jemalloc's
     * reentrant path, once per burst of dumps), the context's collection does not. */
    if (!ctx_thread_ensure()) {
        /* no thread could be started: the queued dump is written here, without jemalloc's stats */
        if (p->late.fd >= 0) { close(p->late.fd); p->late.fd = -1; } /* the sidecar stays as written, its room blank */
        if (!(cfg_table & TABLE_SIDECAR)) write_tables(&hook_writer, filename, &p->c, cfg_table, NULL);
        else if (cfg_table & TABLE_APPEND) write_tables(&hook_writer, filename, &p->c, TABLE_APPEND, NULL);
        atomic_store(&pend_tail, head + 1);
    }
}

/* After jemalloc closed a dump (prof_dump_mtx held): check a staged dump, write the table (sidecar
 * first), then rename the dump into place. An appended table goes into the staged file before the rename
 * only when the hook writes it; the context thread appends to the dump's final name. */
static void hl_dump_hook(const char *filename) {
    if (!filename || !dump_hook_on) return;
    int staged = stage_state && strcmp(filename, stage_final) == 0 ? stage_state : 0;
    stage_state = 0;
    if (staged < 0) {
        say_once(&said_open, "cannot write dumps (", errno_text(stage_errno), "); the program goes on without them");
        return;
    }
    if (staged > 0) {
        stage_fix_maps();
        const char *why = stage_problem();
        if (why) {
            unlink(stage_tmp);
            say_once(&said_cut, "a dump was not kept: ", why, "; earlier dumps are untouched");
            return;
        }
    }
    int64_t ppm;
    const char *trig = dump_trigger(filename, &ppm);
    watch_note_dump();
    hook_append_path = staged > 0 ? stage_tmp : NULL;
    hook_tables(filename, trig, ppm);
    hook_append_path = NULL;
    if (staged > 0) stage_commit();
}

/* ---- start-up --------------------------------------------------------------------------------- */
struct self_search { uintptr_t base; };
static int self_phdr_cb(struct dl_phdr_info *info, size_t size, void *arg) {
    (void)size;
    struct self_search *s = arg;
    if (info->dlpi_addr != s->base) return 0;
    for (int i = 0; i < info->dlpi_phnum && n_self < MAX_RANGES; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type == PT_LOAD && (p->p_flags & PF_X)) {
            self_lo[n_self] = info->dlpi_addr + p->p_vaddr;
            self_hi[n_self] = self_lo[n_self] + p->p_memsz;
            n_self++;
        }
    }
    return 1;
}

/* Adds `<sym>.cold` from the file's .symtab (gcc splits the eval loop's unlikely paths there). */
static void add_cold_range(const char *path, uintptr_t base, const char *sym) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(ElfW(Ehdr))) { close(fd); return; }
    const unsigned char *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return;
    size_t size = (size_t)st.st_size;
    const ElfW(Ehdr) *eh = (const void *)m;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shoff == 0 || eh->e_shoff + (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) > size) goto out;
    const ElfW(Shdr) *sh = (const void *)(m + eh->e_shoff);
    size_t symlen = strlen(sym);
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum) continue;
        const ElfW(Shdr) *strs = &sh[sh[i].sh_link];
        if (sh[i].sh_offset + sh[i].sh_size > size || strs->sh_offset + strs->sh_size > size) continue;
        const ElfW(Sym) *syms = (const void *)(m + sh[i].sh_offset);
        size_t ns = sh[i].sh_size / sizeof(ElfW(Sym));
        const char *names = (const char *)(m + strs->sh_offset);
        for (size_t j = 0; j < ns && n_eval < MAX_RANGES; j++) {
            if (syms[j].st_name >= strs->sh_size || syms[j].st_size == 0) continue;
            const char *nm = names + syms[j].st_name;
            if (strncmp(nm, sym, symlen) == 0 && strcmp(nm + symlen, ".cold") == 0) {
                eval_lo[n_eval] = base + syms[j].st_value;
                eval_hi[n_eval] = eval_lo[n_eval] + syms[j].st_size;
                n_eval++;
            }
        }
    }
out:
    munmap((void *)m, size);
}

/* The one line naming an interpreter the library does not read (version `vs`) with the versions it
 * reads, listed from py_offsets.h, e.g. "Python 3.8.18 is not supported (Python frames on CPython 3.9,
 * 3.10, 3.11, 3.12, 3.13); native stacks only" */
static void say_unsupported(const char *vs) {
    char list[8 * (sizeof hl_py_layouts / sizeof hl_py_layouts[0]) + 1];
    size_t n = 0;
    for (size_t i = 0; i < sizeof hl_py_layouts / sizeof hl_py_layouts[0]; i++) {
        int m = hl_py_layouts[i].minor;
        if (i) { list[n++] = ','; list[n++] = ' '; }
        list[n++] = '3'; list[n++] = '.';
        if (m >= 10) list[n++] = (char)('0' + m / 10);
        list[n++] = (char)('0' + m % 10);
    }
    list[n] = 0;
    char head[64] = "Python ";
    n = 7;
    for (const char *p = vs; *p && n < sizeof head - 1; p++) head[n++] = *p;
    head[n] = 0;
    const char tail[] = " is not supported (Python frames on CPython ";
    char rest[sizeof list + 32];
    memcpy(rest, list, sizeof list);
    memcpy(rest + strlen(list), "); native stacks only", sizeof "); native stacks only");
    say(head, tail, rest);
}

/* leading "X.Y.Z" of a version string ("3.10.13 (main, ...)", "3.9.18+"): 1 when major.minor were read */
static int parse_version(const char *s, unsigned parts[3]) {
    int p = 0;
    parts[0] = parts[1] = parts[2] = 0;
    while (p < 3 && *s >= '0' && *s <= '9') {
        unsigned u = 0;
        while (*s >= '0' && *s <= '9' && u < 100000) u = u * 10 + (unsigned)(*s++ - '0');
        parts[p++] = u;
        if (*s != '.') break;
        s++;
    }
    return p >= 2;
}

static int setup_python(void) {
    /* the version: Py_Version (3.11+), else the string of Py_GetVersion (every CPython; a static buffer,
     * nothing the interpreter must have set up) */
    const unsigned long *ver = dlsym(RTLD_DEFAULT, "Py_Version");
    if (ver) {
        py_major = (unsigned)(*ver >> 24) & 0xff; py_minor = (unsigned)(*ver >> 16) & 0xff; py_micro = (unsigned)(*ver >> 8) & 0xff;
    } else {
        const char *(*get_version)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "Py_GetVersion");
        unsigned parts[3];
        if (!get_version) {
            if (cfg_verbose) say("no Python runtime in this process; native frames only", "", "");
            return 0;
        }
        const char *gv = get_version();
        if (!gv || !parse_version(gv, parts)) { say_unsupported("of unknown version"); return 0; }
        py_major = parts[0]; py_minor = parts[1]; py_micro = parts[2];
    }
    char vs[32];
    { /* "3.X.Y" without stdio */
        int i = 0; unsigned parts[3] = {py_major, py_minor, py_micro};
        for (int p = 0; p < 3; p++) {
            char t[6]; int k = 0; unsigned u = parts[p];
            do { t[k++] = (char)('0' + u % 10); u /= 10; } while (u && k < 6);
            while (k) vs[i++] = t[--k];
            vs[i++] = p < 2 ? '.' : 0;
        }
    }
    L = NULL;
    for (size_t i = 0; i < sizeof hl_py_layouts / sizeof hl_py_layouts[0]; i++) {
        if (py_major == 3 && hl_py_layouts[i].minor == (int)py_minor) L = &hl_py_layouts[i];
    }
    if (!L) { say_unsupported(vs); return 0; } /* never a guess at another version's offsets */
    Dl_info di;
    if (ver && dladdr(ver, &di) && di.dli_fname) { /* free-threaded builds exist from 3.13 */
        char needle[24] = "python3.1Xt";
        needle[9] = (char)('0' + py_minor % 10);
        if (strstr(di.dli_fname, needle)) { say("free-threaded Python ", vs, " is not supported; Python frames disabled"); return 0; }
    }
    py_code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
    py_unicode_type = dlsym(RTLD_DEFAULT, "PyUnicode_Type");
    py_gilstate_get = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
    py_addr2line = (int (*)(void *, int))dlsym(RTLD_DEFAULT, "PyCode_Addr2Line");
    py_is_initialized = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    if (py_minor >= 13) {
        py_tstate_unchecked = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyThreadState_GetUnchecked");
        py_is_finalizing = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsFinalizing");
    } else {
        /* 3.11's _PyThreadState_UncheckedGet is the GIL holder's state, not this thread's: TSS only */
        if (py_minor >= 12) py_tstate_unchecked = (void *(*)(void))dlsym(RTLD_DEFAULT, "_PyThreadState_UncheckedGet");
        py_is_finalizing = (int (*)(void))dlsym(RTLD_DEFAULT, "_Py_IsFinalizing");
    }
    void *eval = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
    if (!py_code_type || !py_unicode_type || !py_gilstate_get || !py_addr2line || !eval) {
        say("Python ", vs, ": interpreter symbols not found; Python frames disabled");
        return 0;
    }
    const ElfW(Sym) *es = NULL;
    if (!dladdr1(eval, &di, (void **)&es, RTLD_DL_SYMENT) || !es || es->st_size == 0) {
        say("Python ", vs, ": size of _PyEval_EvalFrameDefault unknown; Python frames disabled");
        return 0;
    }
    eval_lo[0] = (uintptr_t)eval; eval_hi[0] = (uintptr_t)eval + es->st_size; n_eval = 1;
    struct link_map *lm = NULL;
    if (dladdr1(eval, &di, (void **)&lm, RTLD_DL_LINKMAP) && lm) {
        /* the main program has an empty l_name: read it through /proc/self/exe */
        const char *file = (lm->l_name && lm->l_name[0]) ? lm->l_name : "/proc/self/exe";
        add_cold_range(file, (uintptr_t)lm->l_addr, "_PyEval_EvalFrameDefault");
    }
    if (cfg_verbose) say("Python ", vs, n_eval > 1 ? ": frames on (with .cold range)" : ": frames on");
    return 1;
}

/* HEAPLENS_CAPTURE_UNWIND: libunwind (default, when libunwind.so.8 loads) or jemalloc (its own unwinder). */
static void unwind_setup(void) {
    const char *u = getenv("HEAPLENS_CAPTURE_UNWIND");
    if (u && *u && strcmp(u, "libunwind") != 0) {
        if (strcmp(u, "jemalloc") != 0) say("ignoring invalid HEAPLENS_CAPTURE_UNWIND=", u, " (libunwind|jemalloc)");
        else return;
    }
    void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    int (*fn)(void **, int) = h ? (int (*)(void **, int))dlsym(h, "unw_backtrace") : NULL;
    if (!fn) {
        if (cfg_verbose) say("libunwind.so.8 not found: jemalloc's own unwinder for the native frames", "", "");
        return;
    }
    void *probe[8];
    if (fn(probe, 8) <= 0) { /* it cannot unwind even this: jemalloc's */
        if (cfg_verbose) say("libunwind found no frame here: jemalloc's own unwinder for the native frames", "", "");
        return;
    }
    unw_backtrace_fn = fn;
    if (cfg_verbose) say("native frames by libunwind's unw_backtrace", "", "");
}

static void token_setup(void) {
    unsigned char r[8];
    if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        uint64_t x = mix(now_ns() ^ ((uint64_t)getpid() << 32));
        memcpy(r, &x, sizeof r);
    }
    char name[32] = "pyframes-";
    for (int i = 0; i < 8; i++) {
        table_token[2 * i] = "0123456789abcdef"[r[i] >> 4];
        table_token[2 * i + 1] = "0123456789abcdef"[r[i] & 15];
    }
    table_token[16] = 0;
    memcpy(name + 9, table_token, 17);
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0) { table_token[0] = 0; return; }
    void *m = ftruncate(fd, 4096) == 0 ? mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
    close(fd);
    if (m == MAP_FAILED) table_token[0] = 0; /* no mapping, no token: readers then skip the check */
}

static int table_setup(void) {
    entries = mmap(NULL, (size_t)ENTRY_CAP * sizeof(struct entry), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    slots = mmap(NULL, (size_t)SLOT_CAP * sizeof(uint32_t), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    arena = mmap(NULL, ARENA_CAP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return entries != MAP_FAILED && slots != MAP_FAILED && arena != MAP_FAILED;
}

/* Fork: the table is private anonymous memory, so the child gets a copy and keeps numbering after
 * the parent's entries. Holding the lock across fork keeps that copy consistent. */
static void atfork_prepare(void) { lock_table(); }
static void atfork_release(void) { unlock_table(); }

/* HEAPLENS_DUMP_* (README "Memory-driven dumps"): a bad value is ignored with one line on stderr. */
static void policy_config(void) {
    const char *v = getenv("HEAPLENS_DUMP_RSS_STEP");
    if (v && *v) {
        int64_t b = parse_size(v);
        if (b > 0) cfg_rss_step = b;
        else say("ignoring HEAPLENS_DUMP_RSS_STEP=", v, ": want a size above 0 such as 512M or 1G; no dumps by RSS growth");
    }
    v = getenv("HEAPLENS_DUMP_CGROUP_FRACTIONS");
    if (v && *v) {
        int n = 0, ok = 1;
        const char *p = v;
        while (*p && ok) {
            char *end;
            double f = strtod(p, &end);
            if (end == p || !(f > 0 && f <= 1) || n == MAX_FRACTIONS || (*end && *end != ',')) ok = 0;
            else cfg_fractions[n++] = f;
            p = *end ? end + 1 : end;
        }
        if (!ok || n == 0) {
            n = 0;
            say("ignoring HEAPLENS_DUMP_CGROUP_FRACTIONS=", v, ": want up to 8 fractions in (0, 1] such as 0.8,0.9,0.95; no dumps by cgroup usage");
        }
        for (int i = 1; i < n; i++) /* ascending */
            for (int j = i; j > 0 && cfg_fractions[j] < cfg_fractions[j - 1]; j--) {
                double t = cfg_fractions[j]; cfg_fractions[j] = cfg_fractions[j - 1]; cfg_fractions[j - 1] = t;
            }
        cfg_nfractions = n;
    }
    struct { const char *name; int64_t *out; int64_t lo, hi; const char *want; } d[3] = {
        {"HEAPLENS_DUMP_MIN_INTERVAL", &cfg_min_interval_ns, 0, 86400000000000ll, "a duration such as 1s or 500ms"},
        {"HEAPLENS_DUMP_POLL", &cfg_poll_ns, 1000000, 60000000000ll, "a duration from 1ms to 60s such as 100ms"},
        {"HEAPLENS_DUMP_PRESSURE_INTERVAL", &cfg_pressure_interval_ns, 0, 86400000000000ll, "a duration such as 30s (0: off)"},
    };
    for (int i = 0; i < 3; i++) {
        v = getenv(d[i].name);
        if (!v || !*v) continue;
        int64_t ns = parse_duration(v);
        if (ns >= d[i].lo && ns <= d[i].hi) *d[i].out = ns;
        else say("ignoring ", d[i].name, ": want a duration (e.g. 1s, 500ms); the default is kept");
    }
    cfg_psi_percent = env_int("HEAPLENS_DUMP_PSI_PERCENT", 10, 1, 100);
    cfg_keep = env_int("HEAPLENS_DUMP_KEEP", 0, 0, 100000);
    cfg_atomic = env_int("HEAPLENS_DUMP_ATOMIC", 1, 0, 1);
    if (cfg_keep > 0 && !cfg_atomic) {
        say("HEAPLENS_DUMP_KEEP needs HEAPLENS_DUMP_ATOMIC=1 (it manages the dumps it renames); keeping every dump", "", "");
        cfg_keep = 0;
    }
    if (cfg_keep > 0) {
        ring_names = mmap(NULL, (size_t)cfg_keep * CTX_PATH_MAX, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (ring_names == MAP_FAILED) { ring_names = NULL; say("mmap failed: HEAPLENS_DUMP_KEEP is off", "", ""); }
    }
}

__attribute__((constructor)) static void hl_init(void) {
    const char *t = getenv("HEAPLENS_CAPTURE_TABLE");
    cfg_verbose = env_int("HEAPLENS_CAPTURE_VERBOSE", 0, 0, 1);
    cfg_python = env_int("HEAPLENS_CAPTURE_PYTHON", 1, 0, 1);
    cfg_lines = env_int("HEAPLENS_CAPTURE_LINES", 1, 0, 1);
    cfg_max_py_frames = env_int("HEAPLENS_CAPTURE_MAX_PY_FRAMES", 96, 1, 120);
    cfg_max_py_walk = env_int("HEAPLENS_CAPTURE_MAX_PY_WALK", 1024, 1, 1000000);
    cfg_force_unmerged = env_int("HEAPLENS_CAPTURE_FORCE_UNMERGED", 0, 0, 1);
    cfg_timing = env_int("HEAPLENS_CAPTURE_TIMING", 0, 0, 1);
    if (t && *t) {
        if (!strcmp(t, "sidecar")) cfg_table = TABLE_SIDECAR;
        else if (!strcmp(t, "append")) cfg_table = TABLE_APPEND;
        else if (!strcmp(t, "both")) cfg_table = TABLE_BOTH;
        else if (!strcmp(t, "none")) cfg_table = TABLE_NONE;
        else say("ignoring invalid HEAPLENS_CAPTURE_TABLE=", t, " (sidecar|append|both|none)");
    }

    cfg_context = env_int("HEAPLENS_CAPTURE_CONTEXT", 1, 0, 2); /* 2: no context thread, no jemalloc stats */
    mallctl_fn mallctl = (mallctl_fn)dlsym(RTLD_DEFAULT, "mallctl");
    if (!mallctl) { say("mallctl not found: preload jemalloc before this library; inactive", "", ""); return; }
    bool prof = false;
    size_t sz = sizeof prof;
    if (mallctl("opt.prof", &prof, &sz, NULL, 0) != 0 || !prof) {
        if (cfg_verbose) say("jemalloc profiling is off (MALLOC_CONF=prof:true); inactive", "", "");
        return;
    }
    policy_config();
    int dump_side = policy_on() || cfg_keep > 0; /* the policy and the ring need the dump hook too */
    if (!cfg_python && !cfg_context && !dump_side) { if (cfg_verbose) say("HEAPLENS_CAPTURE_PYTHON=0 and HEAPLENS_CAPTURE_CONTEXT=0: inactive", "", ""); return; }
    je_mallctl = mallctl;
    long tck = sysconf(_SC_CLK_TCK);
    if (tck > 0) ctx_clk_tck = tck;
    long pgsz = sysconf(_SC_PAGESIZE);
    if (pgsz > 0) ctx_page_size = pgsz;

    Dl_info self;
    struct self_search ss;
    if (!dladdr((void *)hl_backtrace_hook, &self)) { say("cannot locate own text; inactive", "", ""); return; }
    ss.base = (uintptr_t)self.dli_fbase;
    /* dlpi_addr is the load bias; for a shared object that is also dli_fbase */
    dl_iterate_phdr(self_phdr_cb, &ss);
    if (!table_setup()) { say("mmap failed; inactive", "", ""); return; }
    py_ok = cfg_python ? setup_python() : 0;
    if (!py_ok && !cfg_context && !dump_side) return;

    prof_backtrace_hook_t ours = hl_backtrace_hook, old = NULL;
    if (py_ok) {
        sz = sizeof old;
        if (mallctl("experimental.hooks.prof_backtrace", &old, &sz, NULL, 0) != 0 || !old) {
            say("jemalloc has no experimental.hooks.prof_backtrace (needs 5.3); Python frames disabled", "", "");
            py_ok = 0;
            if (!cfg_context && !dump_side) return;
        } else {
            native_backtrace = old;
            unwind_setup();
        }
    }
    /* the dump hook writes the table: Python frames and/or the context (a process without a usable
     * Python, e.g. a subprocess inheriting LD_PRELOAD, still gets its context) */
    prof_dump_hook_t dump = hl_dump_hook;
    if (mallctl("experimental.hooks.prof_dump", NULL, NULL, &dump, sizeof dump) != 0) {
        say("jemalloc has no experimental.hooks.prof_dump (needs 5.3); inactive", "", "");
        py_ok = 0;
        return;
    }
    dump_hook_on = 1;
    token_setup();
    if (cfg_context == 1) pthread_atfork(ctx_atfork_prepare, NULL, ctx_atfork_child); /* the thread starts at the first dump */
    pthread_atfork(watch_atfork_prepare, watch_atfork_parent, policy_atfork_child);
    watch_start();
    if (cfg_verbose && policy_on()) say("memory-driven dumps on", cfg_rss_step ? " (RSS step)" : "", cfg_nfractions ? " (cgroup fractions)" : "");
    if (!py_ok) return;
    pthread_atfork(atfork_prepare, atfork_release, atfork_release);
    if (mallctl("experimental.hooks.prof_backtrace", NULL, NULL, &ours, sizeof ours) != 0) {
        say("could not install the backtrace hook; Python frames disabled", "", "");
        py_ok = 0;
        return;
    }
}

/* For tests and tools: the library's own view of what it is doing. */
HL_EXPORT int heaplens_capture_active(void) { return py_ok; }
