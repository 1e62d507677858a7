// A reader's stacks sent once: a process's stacks recur in each of its dumps, and every task copied each record's
// frame words into its result (~6 % of a reader's time on deep stacks) for the merge to find, by the words'
// backtrace-cache serial, a stack it had already interned. Now a reader sends a serial's words the first time
// only; the pool's thread keeps them, per reader, by serial (StackMirror), for a process that meets the serial
// for the first time. One message channel per reader delivers in order, so the words arrive before their use
// (frame-delta.ts does the same for sidecar frames).

/** The stack columns of a task's result (DumpTaskResult.parsed): what this module reads and marks. */
export interface TaskStacks {
  /** task stack k is stackWords[2·stackOffsets[k] .. 2·stackOffsets[k+1]) as (hi, lo) address words */
  stackOffsets: Uint32Array;
  stackWords: Uint32Array;
  /** task stack k's stackHash, computed by the reader so the merging thread does not hash every frame again */
  stackHashes: Int32Array;
  /**
   * task stack k's serial in its reader's backtrace cache (BacktraceCache.serial), -1 for a line not kept there:
   * the merge maps a serial it has interned once straight to its stack (absent: every stack is compared)
   */
  stackEntries?: Int32Array;
  /**
   * 1 where task stack k's words were left out (its range is empty): its reader posted them in an earlier result,
   * and the pool's thread keeps them under the stack's serial; absent when none was left out
   */
  stackLeftOut?: Uint8Array;
  /** the reader forgot which stacks it had sent: the pool's thread starts a new mirror for it */
  stacksReset?: boolean;
  /** the words of the stacks left out, by serial: set by the dump pool as the result arrives */
  mirror?: StackMirror;
}

/** Serials kept in a window at most this long (16 MB of Int32); others in a Map. */
const MAX_WINDOW = 1 << 22;

/**
 * Backtrace-cache serials → non-negative numbers. Serials come in runs (a process's lines are numbered as its first
 * dump is read), so most go in a window of the serials from the first one seen; the rest in a Map.
 */
export class SerialMap {
  private base = -1;
  /** value + 1 by serial − base; 0: absent */
  private window = new Int32Array(0);
  private readonly others = new Map<number, number>();

  get(serial: number): number {
    const i = serial - this.base;
    if (this.base >= 0 && i >= 0 && i < this.window.length) return this.window[i] - 1;
    return this.others.get(serial) ?? -1;
  }

  set(serial: number, value: number): void {
    if (this.base < 0) this.base = serial;
    const i = serial - this.base;
    if (i < 0 || i >= MAX_WINDOW) {
      this.others.set(serial, value);
      return;
    }
    if (i >= this.window.length) {
      const next = new Int32Array(Math.min(MAX_WINDOW, Math.max(1024, 2 * this.window.length, i + 1)));
      next.set(this.window);
      this.window = next;
    }
    this.window[i] = value + 1;
  }
}

/**
 * Words a reader sends before both sides start over (4 MiB on the pool's side). A process's dumps are merged one
 * after another and repeat its own stacks, so the mirror needs little more than one process's (a deep 5,000-stack
 * process: ~0.4 Mi words); a reset costs the next dump one copy of its words, as before. At 8 Mi words (a
 * mirror as large as the reader's own cache) the 16 × 100 job's peak RSS grew 82 MB for the same time.
 */
const MAX_SENT_WORDS = 1 << 20;
/** The merging thread's own mirror (LocalStacks) is never emptied: it keeps more, as the reader's cache does. */
const MAX_LOCAL_WORDS = 1 << 23;

/** What a task asks while it reads: were this serial's words sent (to where the merge will find them)? */
export interface SentSerials {
  has(serial: number): boolean;
}

/** What a posted result sent first: its serials and their words' count (read before the post detaches them). */
export interface SentStacks {
  serials: number[];
  words: number;
}

/** The reader's side: which serials' words it has posted. */
export class StackSender implements SentSerials {
  private sent = new SerialMap();
  private words = 0;
  private reset = false;

  constructor(private readonly maxWords: number = MAX_SENT_WORDS) {}

  /** Before a task: past the bound, forget what was sent (the next posted result tells the pool to forget too). */
  begin(): void {
    if (this.words < this.maxWords) return;
    this.sent = new SerialMap();
    this.words = 0;
    this.reset = true;
  }

  /** The serial's words were posted in an earlier result: a task may leave them out. */
  has(serial: number): boolean {
    return this.sent.get(serial) >= 0;
  }

  /** Marks the result for the pool (its `stacksReset`) and lists what it sends first; call before posting it. */
  prepare(result: { parsed: TaskStacks | null }): SentStacks | null {
    const p = result.parsed;
    if (!p?.stackEntries) return null;
    if (this.reset) p.stacksReset = true;
    const { stackEntries: entries, stackOffsets: off, stackLeftOut: out } = p;
    const serials: number[] = [];
    let words = 0;
    for (let k = 0; k < entries.length; k++) {
      if (entries[k] < 0 || (out && out[k] === 1)) continue;
      serials.push(entries[k]);
      words += 2 * (off[k + 1] - off[k]);
    }
    return { serials, words };
  }

  /** After the result was posted: its serials are the pool's now (a result that was not posted sent nothing). */
  commit(sent: SentStacks): void {
    this.reset = false;
    for (const s of sent.serials) this.sent.set(s, 1);
    this.words += sent.words;
  }
}

/**
 * One reader's sent stacks on the pool's side: words by serial, never changed once added. The words stay in the
 * results' own arrays (a reader posts each result's words apart, never reused: dump-pool.ts), kept here, not copied.
 */
export class StackMirror {
  /** the results' word arrays the slots point into */
  private readonly chunks: Uint32Array[] = [];
  /** words held */
  used = 0;
  private readonly at = new SerialMap();
  /** per slot: its chunk, its words' start and end there, and its stackHash */
  private chunkOf: number[] = [];
  private from: number[] = [];
  private to: number[] = [];
  private hashes: number[] = [];

  /** Keeps the serial's words: `words` from `from` to `to`, an array that no one changes after. */
  add(serial: number, words: Uint32Array, from: number, to: number, hash: number): void {
    if (this.at.get(serial) >= 0) return;
    if (this.chunks[this.chunks.length - 1] !== words) this.chunks.push(words);
    this.at.set(serial, this.from.length);
    this.chunkOf.push(this.chunks.length - 1);
    this.from.push(from);
    this.to.push(to);
    this.hashes.push(hash);
    this.used += to - from;
  }

  has(serial: number): boolean {
    return this.at.get(serial) >= 0;
  }

  /**
   * The serial's words as (array, from, to, hash), written into `out`; false when this reader never sent them
   * (a bug: the reader leaves out only what it posted before).
   */
  find(serial: number, out: { words: Uint32Array; from: number; to: number; hash: number }): boolean {
    const slot = this.at.get(serial);
    if (slot < 0) return false;
    out.words = this.chunks[this.chunkOf[slot]];
    out.from = this.from[slot];
    out.to = this.to[slot];
    out.hash = this.hashes[slot];
    return true;
  }
}

/** The pool thread's side, one per reader: keeps each result's first-sent words, and gives it the mirror. */
export class StackReceiver {
  private mirror = new StackMirror();

  /** Every result is given, in the order it arrives, even one no one waits for: later ones rely on its words. */
  give(result: { parsed: TaskStacks | null }): void {
    const p = result.parsed;
    if (!p?.stackEntries) return;
    // a fresh mirror, not a cleared one: results that arrived before still point at the old one until merged
    if (p.stacksReset) this.mirror = new StackMirror();
    keepSent(this.mirror, p, Infinity);
  }
}

/**
 * Adds the stacks a task sent with their words to `mirror`, while it holds fewer than `maxWords`, and gives the
 * task the mirror if it left any out.
 */
function keepSent(mirror: StackMirror, p: TaskStacks, maxWords: number): void {
  const { stackEntries: entries, stackOffsets: off, stackWords: words, stackHashes: hashes, stackLeftOut: out } = p;
  if (!entries) return;
  for (let k = 0; k < entries.length && mirror.used < maxWords; k++)
    if (entries[k] >= 0 && !(out && out[k] === 1)) mirror.add(entries[k], words, 2 * off[k], 2 * off[k + 1], hashes[k]);
  if (out) p.mirror = mirror;
}

/**
 * The same for the tasks the merging thread reads itself (reader 0: small inputs, no workers): one mirror, filled as
 * each task ends and never emptied (tasks read here overlap, so no point is safe to start over); once it holds
 * MAX_LOCAL_WORDS, a new serial's words are simply sent every time.
 */
export class LocalStacks implements SentSerials {
  private readonly mirror = new StackMirror();

  constructor(private readonly maxWords: number = MAX_LOCAL_WORDS) {}

  has(serial: number): boolean {
    return this.mirror.has(serial);
  }

  /** After a task ended: its first-sent stacks kept, and the mirror given to the result if it left any out. */
  keep(result: { parsed: TaskStacks | null }): void {
    const p = result.parsed;
    if (!p) return;
    keepSent(this.mirror, p, this.maxWords);
  }
}
