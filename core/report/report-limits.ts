// What a report may hold: the reader (job-unpack.ts) refuses more, and the writer (job-pack.ts) trims to it, so a
// report heaplens writes is always one heaplens reads. One table, so the two cannot disagree.

/**
 * The bounds. Frames and stacks are stored once per job (report version 3): a job of 1,000 processes that share one
 * code base keeps one table of them, so the job-wide counts leave room for tens of thousands of distinct stacks; what
 * the page builds per process (each process's own stack and address tables, `processStacks`, `processFrames`) is
 * bounded apart. The inflation ratio keeps the cost of any report proportional to its size (payloads measured inflate
 * 3–8×, see report.test.ts; deflate's ceiling is 1032×, reached only by runs such as zeros).
 */
export const REPORT_LIMITS = {
  inflateRatio: 32,
  /** inflated size always allowed, whatever the ratio */
  minInflatedBytes: 8 << 20,
  maxInflatedBytes: 1 << 30,
  /** the JSON header (snapshots, symbols, notes); the columns follow it */
  headerBytes: 256 << 20,
  processes: 10_000,
  /** the job's stack table: distinct stacks */
  stacks: 1_000_000,
  /** the job's stack table: frames of all its stacks */
  frames: 4_000_000,
  /** the job's frame table: distinct frames (an address with its symbols and Python frame) */
  addresses: 2_000_000,
  /** distinct symbol entries (a frame has a leaf and a caller entry) */
  symbols: 4_000_000,
  /** summed over the processes: their stacks (each a reference into the job's table) */
  processStacks: 2_000_000,
  /** summed over the processes: the frames of their stacks, which the page lays out per process */
  processFrames: 16_000_000,
  snapshots: 200_000,
  cells: 4_000_000,
  /** per process */
  maps: 100_000,
  /** per symbol entry: inlined frames */
  symbolFrames: 256,
  /** distinct Python frame entries of the job */
  pythonFrames: 1_000_000,
  warnings: 10_000,
  /** the longest text field (a path, a function name) */
  textChars: 16_384,
} as const;

/** Bounds of the same names (tests give smaller ones to both the writer and the reader). */
export type ReportLimits = { readonly [K in keyof typeof REPORT_LIMITS]: number };
