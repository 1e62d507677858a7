// A restricted reader of Python pickles (protocols 2–5) that runs nothing from the file: only the opcodes of
// plain dicts, lists, tuples, strings, numbers, booleans and None are accepted (what PyTorch's memory snapshots
// hold: torch/cuda/memory.py `_dump_snapshot` is `pickle.dump(_snapshot(), f)`, and the C++ writer
// torch/csrc/cuda/memory_snapshot.cpp writes the same dict at protocol 2 with aggregate tagging off). Every other
// opcode — GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ*, PERSID*, EXT*, bytes, buffers — is refused
// with its name and byte offset. Opcodes and their encodings: CPython Lib/pickletools.py.
//
// Bounds, each named in its message with the byte offset: lengths are checked against the bytes left; the memory
// the values take (estimated per value as V8 lays them out), the stack, the memo (2^24 entries) and the nesting
// depth are capped; a result that refers back to a container holding it (a cycle, which only a crafted file makes)
// is refused; and so is a result that expands past a bound once every reference to a shared container is followed
// (the memo lets 15 KB name a segment a thousand times whose blocks name one block a thousand times, …: a reader
// walking the result would visit 10^9 frames), naming the shared container's offset.

export type PickleKey = string | number | bigint | boolean | null;
export type PickleValue = PickleKey | PickleValue[] | PickleDict;
/** Dicts keep their keys' types and order; a Map so a key such as `__proto__` is only a key. */
export type PickleDict = Map<PickleKey, PickleValue>;

export class PickleError extends Error {
  constructor(
    message: string,
    readonly byteOffset: number,
  ) {
    super(`${message} (at byte ${byteOffset})`);
    this.name = 'PickleError';
  }
}

export interface PickleLimits {
  /** the memory the values read take, estimated (VALUE_BYTES): what bounds a flood of empty dicts */
  maxBytes: number;
  /** depth of the stack plus marks */
  maxStack: number;
  /** memo entries */
  maxMemo: number;
  /** lists, tuples and dicts made (each needs an entry in the shape walk's map: V8 holds 2^24 at most) */
  maxContainers: number;
  /** containers inside containers, from the result down */
  maxDepth: number;
  /** slots (list items, dict keys and values) the result holds once every shared container is counted in full */
  maxExpanded: number;
  /** longest integer accepted (LONG1/LONG4 byte count); snapshots hold 64-bit addresses and streams */
  maxLongBytes: number;
}

/**
 * Far above a real snapshot and below a runaway: a 1,000,000-entry trace with 30 frames an entry is ~0.6 GiB of
 * values and ~2.2·10^8 slots expanded (its frame dicts are shared, each counted at every reference; stacks="all"
 * has ~100 frames: ~7·10^8), under 2^30; the 15 KB bomb of issue 46 expands to 7·10^9. The reader worker's heap is
 * 2 GiB (node/io/dump-pool.ts WORKER_HEAP_MB). Snapshots nest 7 deep.
 */
export const DEFAULT_PICKLE_LIMITS: PickleLimits = {
  maxBytes: 1024 * 1024 * 1024,
  maxStack: 100_000,
  maxMemo: 1 << 24,
  maxContainers: 1 << 24,
  maxDepth: 1000,
  maxExpanded: 2 ** 30,
  maxLongBytes: 64,
};

/**
 * Bytes a value takes in V8 (measured on Node 20: an empty Map 196 B, an empty array 44 B, a stack or list slot
 * 8 B, a heap number 16 B), for the maxBytes estimate.
 */
const VALUE_BYTES = { slot: 8, dict: 200, list: 48, dictEntry: 24, number: 16, bigint: 32, string: 16, memo: 32 };

/** Names of the opcodes refused on purpose, for the message (pickletools' names). */
const REFUSED: Record<number, string> = {
  0x63: 'GLOBAL',
  0x93: 'STACK_GLOBAL',
  0x52: 'REDUCE',
  0x62: 'BUILD',
  0x69: 'INST',
  0x6f: 'OBJ',
  0x81: 'NEWOBJ',
  0x92: 'NEWOBJ_EX',
  0x50: 'PERSID',
  0x51: 'BINPERSID',
  0x82: 'EXT1',
  0x83: 'EXT2',
  0x84: 'EXT4',
  0x42: 'BINBYTES',
  0x43: 'SHORT_BINBYTES',
  0x8e: 'BINBYTES8',
  0x96: 'BYTEARRAY8',
  0x97: 'NEXT_BUFFER',
  0x98: 'READONLY_BUFFER',
  0x8f: 'EMPTY_SET',
  0x90: 'ADDITEMS',
  0x91: 'FROZENSET',
};

const MARK = Symbol('mark');
type Slot = PickleValue | typeof MARK;

/** True when the bytes start like a protocol 2–5 pickle (PROTO n). */
export function looksLikePickle(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x80 && bytes[1] >= 2 && bytes[1] <= 5;
}

/** Reads one pickle; throws PickleError naming the opcode and byte offset for anything outside plain data. */
export function readPickle(bytes: Uint8Array, bounds: Partial<PickleLimits> = {}): PickleValue {
  const limits: PickleLimits = { ...DEFAULT_PICKLE_LIMITS, ...bounds };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const dec = new TextDecoder('utf-8', { fatal: true });
  const stack: Slot[] = [];
  const marks: number[] = [];
  const memo = new Map<number, PickleValue>();
  // where each memoized or duplicated container was made: a container can be shared only through the memo or DUP
  const madeAt = new Map<object, number>();
  let lastMade: object | null = null;
  let lastMadeAt = 0;
  let used = 0;
  let containers = 0;
  let pos = 0;
  let at = 0;

  const fail = (m: string): never => {
    throw new PickleError(m, at);
  };
  const need = (n: number): void => {
    if (n > bytes.length - pos) fail(`the file ends inside an opcode (needs ${n} bytes, ${bytes.length - pos} left)`);
  };
  const spend = (n: number): void => {
    used += n;
    if (used > limits.maxBytes)
      fail(`the values read so far take more than ${limits.maxBytes} bytes of memory (a flood of values); refused`);
  };
  /** pushes a value just made (a reference to one made before is `pushRef`: a slot, nothing new) */
  const push = (v: PickleValue): void => {
    if (stack.length >= limits.maxStack) fail(`stack deeper than ${limits.maxStack}`);
    let cost = VALUE_BYTES.slot;
    if (typeof v === 'string') cost += VALUE_BYTES.string + v.length;
    else if (typeof v === 'bigint') cost += VALUE_BYTES.bigint;
    else if (typeof v === 'number' && !(Number.isInteger(v) && Math.abs(v) < 2 ** 30)) cost += VALUE_BYTES.number;
    else if (v instanceof Map) cost += VALUE_BYTES.dict;
    else if (Array.isArray(v)) cost += VALUE_BYTES.list;
    if (typeof v === 'object' && v !== null) {
      if (++containers > limits.maxContainers) fail(`more than ${limits.maxContainers} lists and dicts; refused`);
      lastMade = v;
      lastMadeAt = at;
    }
    spend(cost);
    stack.push(v);
  };
  const pushRef = (v: PickleValue): void => {
    if (stack.length >= limits.maxStack) fail(`stack deeper than ${limits.maxStack}`);
    spend(VALUE_BYTES.slot);
    stack.push(v);
  };
  const pop = (): PickleValue => {
    // a MARK is never a value: the values above the innermost one are all an opcode may take (CPython's fence)
    if (stack.length === 0 || (marks.length > 0 && stack.length <= marks[marks.length - 1] + 1))
      fail('an opcode takes a value from an empty stack (or the MARK)');
    return stack.pop() as PickleValue;
  };
  const top = (): PickleValue => {
    const v = stack[stack.length - 1];
    if (v === undefined || v === MARK) fail('an opcode needs a value on the stack');
    return v as PickleValue;
  };
  const popMark = (): PickleValue[] => {
    const m = marks.pop();
    if (m === undefined) fail('an opcode needs a MARK and there is none');
    return stack.splice(m as number) as PickleValue[];
  };
  const u8 = (): number => {
    need(1);
    return bytes[pos++];
  };
  const u16 = (): number => {
    need(2);
    const v = view.getUint16(pos, true);
    pos += 2;
    return v;
  };
  const u32 = (): number => {
    need(4);
    const v = view.getUint32(pos, true);
    pos += 4;
    return v;
  };
  const u64 = (): number => {
    need(8);
    const v = view.getBigUint64(pos, true);
    pos += 8;
    // a length: anything beyond the file is refused by the caller's need()
    return v > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(v);
  };
  const text = (n: number): string => {
    need(n);
    let s: string;
    try {
      s = dec.decode(bytes.subarray(pos, pos + n));
    } catch {
      return fail('a string is not valid UTF-8');
    }
    pos += n;
    return s;
  };
  const long = (n: number): number | bigint => {
    if (n > limits.maxLongBytes) fail(`an integer of ${n} bytes (at most ${limits.maxLongBytes} accepted)`);
    need(n);
    // two's complement, little-endian (pickletools decode_long)
    let v = 0n;
    for (let i = n - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[pos + i]);
    if (n > 0 && bytes[pos + n - 1] & 0x80) v -= 1n << BigInt(8 * n);
    pos += n;
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  };
  const container = (v: PickleValue, what: string): PickleValue[] | PickleDict => {
    if (Array.isArray(v) || v instanceof Map) return v;
    return fail(`${what} on something that is not a list or dict`);
  };
  const key = (k: PickleValue): PickleKey => {
    if (Array.isArray(k) || k instanceof Map) fail('a dict key that is a list, tuple or dict');
    return k as PickleKey;
  };
  const setItems = (d: PickleValue, items: PickleValue[]): void => {
    if (!(d instanceof Map)) fail('SETITEM(S) on something that is not a dict');
    if (items.length % 2 !== 0) fail('SETITEMS with an odd number of values');
    spend((VALUE_BYTES.dictEntry * items.length) / 2);
    for (let i = 0; i < items.length; i += 2) (d as PickleDict).set(key(items[i]), items[i + 1]);
  };
  const made = (v: PickleValue): void => {
    if (typeof v === 'object' && v !== null && !madeAt.has(v)) madeAt.set(v, v === lastMade ? lastMadeAt : at);
  };
  const memoPut = (i: number): void => {
    if (memo.size >= limits.maxMemo && !memo.has(i)) fail(`more than ${limits.maxMemo} memo entries`);
    const v = top();
    spend(VALUE_BYTES.memo);
    made(v);
    memo.set(i, v);
  };
  const memoGet = (i: number): void => {
    const v = memo.get(i);
    if (v === undefined) fail(`memo entry ${i} is read before it is written`);
    pushRef(v as PickleValue);
  };

  if (!looksLikePickle(bytes)) {
    const p = bytes.length >= 2 && bytes[0] === 0x80 ? ` (protocol ${bytes[1]})` : '';
    throw new PickleError(`not a pickle of protocol 2–5${p}`, 0);
  }
  for (;;) {
    at = pos;
    if (pos >= bytes.length) fail('the file ends before STOP (cut short?)');
    const op = bytes[pos++];
    switch (op) {
      case 0x80: // PROTO
        if (u8() > 5) fail('protocol above 5');
        break;
      case 0x95: // FRAME: a length hint for buffered readers; the data follows inline
        u64();
        break;
      case 0x2e: {
        // STOP
        const v = pop();
        if (stack.length > 0 || marks.length > 0) fail('STOP with values left on the stack');
        checkShape(v, at, limits, madeAt);
        return v;
      }
      case 0x28: // MARK
        if (marks.length >= limits.maxStack) fail(`marks nested deeper than ${limits.maxStack}`);
        marks.push(stack.length);
        stack.push(MARK);
        break;
      case 0x7d: // EMPTY_DICT
        push(new Map());
        break;
      case 0x5d: // EMPTY_LIST
        push([]);
        break;
      case 0x29: // EMPTY_TUPLE
        push([]);
        break;
      case 0x73: {
        // SETITEM
        const v = pop();
        const k = pop();
        setItems(top(), [k, v]);
        break;
      }
      case 0x75: {
        // SETITEMS
        const items = popMark().slice(1);
        setItems(top(), items);
        break;
      }
      case 0x61: {
        // APPEND
        const v = pop();
        const l = container(top(), 'APPEND');
        if (!Array.isArray(l)) fail('APPEND on a dict');
        (l as PickleValue[]).push(v);
        break;
      }
      case 0x65: {
        // APPENDS
        const items = popMark().slice(1);
        const l = container(top(), 'APPENDS');
        if (!Array.isArray(l)) fail('APPENDS on a dict');
        for (const v of items) (l as PickleValue[]).push(v);
        break;
      }
      case 0x74: // TUPLE
        push(popMark().slice(1));
        break;
      case 0x85: // TUPLE1
        push([pop()]);
        break;
      case 0x86: {
        // TUPLE2
        const b = pop();
        push([pop(), b]);
        break;
      }
      case 0x87: {
        // TUPLE3
        const c = pop();
        const b = pop();
        push([pop(), b, c]);
        break;
      }
      case 0x8c: // SHORT_BINUNICODE
        push(text(u8()));
        break;
      case 0x58: // BINUNICODE
        push(text(u32()));
        break;
      case 0x8d: // BINUNICODE8
        push(text(u64()));
        break;
      case 0x4b: // BININT1
        push(u8());
        break;
      case 0x4d: // BININT2
        push(u16());
        break;
      case 0x4a: // BININT (signed)
        need(4);
        push(view.getInt32(pos, true));
        pos += 4;
        break;
      case 0x8a: // LONG1
        push(long(u8()));
        break;
      case 0x8b: {
        // LONG4 (signed length)
        need(4);
        const n = view.getInt32(pos, true);
        pos += 4;
        if (n < 0) fail('LONG4 with a negative length');
        push(long(n));
        break;
      }
      case 0x47: // BINFLOAT: big-endian double
        need(8);
        push(view.getFloat64(pos, false));
        pos += 8;
        break;
      case 0x88: // NEWTRUE
        push(true);
        break;
      case 0x89: // NEWFALSE
        push(false);
        break;
      case 0x4e: // NONE
        push(null);
        break;
      case 0x94: // MEMOIZE
        memoPut(memo.size);
        break;
      case 0x71: // BINPUT
        memoPut(u8());
        break;
      case 0x72: // LONG_BINPUT
        memoPut(u32());
        break;
      case 0x68: // BINGET
        memoGet(u8());
        break;
      case 0x6a: // LONG_BINGET
        memoGet(u32());
        break;
      case 0x30: // POP
        if (stack[stack.length - 1] === MARK) {
          marks.pop();
          stack.pop();
        } else pop();
        break;
      case 0x31: // POP_MARK
        popMark();
        break;
      case 0x32: // DUP
        made(top());
        pushRef(top());
        break;
      default: {
        const name = REFUSED[op];
        if (name)
          fail(
            `opcode ${name} (0x${op.toString(16)}) refers to code or objects beyond plain data; refused, nothing in the file is run`,
          );
        fail(`opcode 0x${op.toString(16)} is not one of the plain-data opcodes accepted (protocols 2–5)`);
      }
    }
  }
}

const kindOf = (v: object): string => (v instanceof Map ? 'dict' : 'list or tuple');

/**
 * Walks the result once per distinct container (a DAG walk), refusing what a reader following every reference
 * could not hold: a container reachable from itself (only the memo makes one: a reference back to an open list or
 * dict), nesting deeper than maxDepth, and more than maxExpanded slots once each reference to a shared container
 * counts its whole contents — named by the shared container the expansion went through, at its offset.
 */
function checkShape(root: PickleValue, at: number, limits: PickleLimits, madeAt: Map<object, number>): void {
  type Container = PickleValue[] | PickleDict;
  const isContainer = (v: PickleValue): v is Container => Array.isArray(v) || v instanceof Map;
  if (!isContainer(root)) return;
  /** the slots each finished container expands to */
  const expanded = new Map<object, number>();
  const open = new Set<object>();
  type Frame = { v: Container; it: Iterator<PickleValue>; slots: number };
  const children = (v: Container): Iterator<PickleValue> => (Array.isArray(v) ? v[Symbol.iterator]() : flatEntries(v));
  const over = (f: Frame, via: object, each: number): never => {
    const where = madeAt.get(via) ?? at;
    throw new PickleError(
      `the result expands to more than ${limits.maxExpanded} values once its shared references are followed: the ${kindOf(via)} made here (${each} values) is referenced again and again from a ${kindOf(f.v)} (a memo-reference bomb); refused`,
      where,
    );
  };
  const path: Frame[] = [{ v: root, it: children(root), slots: 0 }];
  open.add(root);
  while (path.length > 0) {
    const f = path[path.length - 1];
    const n = f.it.next();
    if (n.done) {
      path.pop();
      open.delete(f.v);
      expanded.set(f.v, f.slots);
      const parent = path[path.length - 1];
      if (parent) {
        parent.slots += f.slots;
        if (parent.slots > limits.maxExpanded) over(parent, f.v, f.slots);
      }
      continue;
    }
    const c = n.value;
    f.slots++;
    if (!isContainer(c)) continue;
    const known = expanded.get(c);
    if (known !== undefined) {
      f.slots += known;
      if (f.slots > limits.maxExpanded) over(f, c, known);
      continue;
    }
    if (open.has(c)) throw new PickleError('a list or dict contains itself (a cycle); refused', madeAt.get(c) ?? at);
    if (path.length >= limits.maxDepth)
      throw new PickleError(`containers nested deeper than ${limits.maxDepth}; refused`, madeAt.get(c) ?? at);
    open.add(c);
    path.push({ v: c, it: children(c), slots: 0 });
  }
}

/** A dict's keys and values in turn (keys are never containers, but they are slots). */
function* flatEntries(d: PickleDict): Iterator<PickleValue> {
  for (const [k, v] of d) {
    yield k;
    yield v;
  }
}

/** The value under `key` of a dict (undefined when absent or when `d` is not a dict). */
export function field(d: PickleValue | undefined, key: string): PickleValue | undefined {
  return d instanceof Map ? d.get(key) : undefined;
}
