// heaplens command line: the command table (name, options, usage lines, handler) and the dispatch. Each command's
// code lives in commands/<name>.ts and loads only when it runs, so `top` never loads the report or DuckDB. Exit
// codes: 0 success, 1 nothing could be read, 2 usage error.

import { escapeControlsInJson, revealControls } from '../../core/model/display-text.js';
import { checkFlags, has, parseArgs, UsageError, type ParsedArgs } from './args.js';
import { wrapLines } from './format.js';
import { SYMBOL_FLAGS, SYMBOL_USAGE } from './symbols.js';
import type { Output } from './common.js';
import type { JobCommand } from './input.js';
import { wrapUsage } from './text/usage.js';
import { SnapshotChoiceError } from '../../core/query/snapshot-choice.js';
export type { Output } from './common.js';

interface Command {
  name: string;
  /** usage lines: the synopsis at two spaces, what it does from column 50 */
  usage: string;
  /** the options it takes (node/cli/args.ts), every value checked before anything is read */
  flags: readonly string[];
  run: (args: ParsedArgs, io: Output) => Promise<number>;
}

const COMMON = ['json', 'show-allocator', 'pid', 'help', 'stacks', 'fold-imports', 'sample'];
/** what the stack-listing commands add: pprof's slicing options */
const SLICING = ['focus', 'ignore', 'hide', 'show', 'granularity'];

/** Loads the job (node/cli/input.ts) and runs a command on it. */
async function onJob(args: ParsedArgs, io: Output, cmd: JobCommand, opts?: { jobSample?: boolean }): Promise<number> {
  const { withJob } = await import('./input.js');
  return withJob(args, io, cmd, opts);
}

const COMMANDS: readonly Command[] = [
  {
    name: 'summary',
    usage: `  heaplens summary <paths…>                       processes, their snapshots, warnings`,
    flags: COMMON,
    run: async (a, io) => onJob(a, io, (await import('./commands/summary.js')).summary),
  },
  {
    name: 'top',
    usage: `  heaplens top <paths…> [--snapshot last|first|peak|<seq>] [-n 20]
                                                  stacks by live bytes in one snapshot`,
    flags: [...COMMON, ...SLICING, ...SYMBOL_FLAGS, 'snapshot', 'top'],
    run: async (a, io) => onJob(a, io, (await import('./commands/top.js')).top),
  },
  {
    name: 'diff',
    usage: `  heaplens diff <base> <target> [-n 20]           stacks by growth between two dumps
  heaplens diff <paths…> [--base <seq> --target <seq>] [-n 20]
                                                  …or within each process (default first → last)`,
    flags: [...COMMON, ...SLICING, ...SYMBOL_FLAGS, 'base', 'target', 'top'],
    run: async (a, io) => onJob(a, io, (await import('./commands/diff.js')).diff),
  },
  {
    name: 'growth',
    usage: `  heaplens growth <paths…> [-n 20] [--all]        job-wide suspects (patterns, σ, groups), then the processes
                                                  that matter and the rest by group (--all: each process)`,
    flags: [...COMMON, ...SYMBOL_FLAGS, 'top', 'all'],
    run: async (a, io) => (await import('./commands/growth.js')).growthCommand(a, io),
  },
  {
    name: 'postmortem',
    usage: `  heaplens postmortem <paths…> [--limit <bytes|file>] [--limit-scope job|process] [-n 10] [--all]
                                                  why it died: the kill, the fates, what filled the memory
                                                  (many processes: those that matter, the rest by group)`,
    flags: [...COMMON, ...SYMBOL_FLAGS, 'top', 'limit', 'limit-scope', 'all'],
    run: async (a, io) => {
      const pm = await import('./commands/postmortem.js');
      const limit = await pm.readLimit(a);
      // why the memory ran out: live bytes at the end unless --sample says (as growth; a Go allocs profile's
      // default, alloc_space, counts every byte ever allocated)
      return onJob(a, io, (job, a2, o) => pm.postmortemCommand(job, a2, o, limit), { jobSample: false });
    },
  },
  {
    name: 'binaries',
    usage: `  heaplens binaries <paths…> [--snapshot last]    modules whose frames stay unresolved, the bytes
                                                  through them, and what to hand over (--symbols)`,
    flags: [...COMMON, ...SYMBOL_FLAGS, 'snapshot'],
    run: async (a, io) => {
      if (has(a, 'no-symbols'))
        throw new UsageError('"binaries" symbolizes to find what is missing: drop --no-symbols');
      return onJob(a, io, (await import('./commands/binaries.js')).binaries);
    },
  },
  {
    name: 'report',
    usage: `  heaplens report <paths…> -o report.html [--base <seq> --target <seq>] [--session file]
                 [--sanitize] [--title text] [-n 50]
                                                  a single-file HTML report to share (docs/report.md)`,
    flags: [
      ...COMMON.filter((f) => f !== 'json'),
      ...SYMBOL_FLAGS,
      'output',
      'base',
      'target',
      'session',
      'sanitize',
      'title',
      'top',
    ],
    run: async (a, io) => (await import('./commands/report.js')).reportCommand(a, io),
  },
  {
    name: 'export',
    usage: `  heaplens export --format pprof|folded|speedscope [--snapshot last|first|peak|<seq>] -o out <paths…>
                                                  one snapshot per process, for other profilers' tools`,
    flags: [
      ...COMMON.filter((f) => f !== 'json'),
      ...SYMBOL_FLAGS,
      'focus',
      'ignore',
      'hide',
      'show',
      'format',
      'output',
      'snapshot',
      'measure',
    ],
    run: async (a, io) => (await import('./commands/export.js')).exportCommand(a, io),
  },
  {
    name: 'open',
    usage: `  heaplens open <paths…> [--port N] [--no-browser]
                                                  the app on this job, served from this process (its engine
                                                  reads the dumps here; the page gets answers); Ctrl-C stops`,
    flags: ['help', 'port', 'no-browser', ...SYMBOL_FLAGS],
    run: async (a, io) => (await import('./commands/open.js')).openCommand(a, io),
  },
  {
    name: 'ingest',
    usage: `  heaplens ingest <paths…> -o <dir> [--host NAME] [--symbols <dir>] [--sysroot <dir>] [--no-symbols]
                                                  the job as a Parquet dataset (docs/dataset.md); a re-run
                                                  adds only new dumps; every command reads <dir>, and
                                                  several (one per node) together as one job; --host names
                                                  the node of dumps whose contexts name none`,
    flags: ['output', 'host', 'help', 'json', ...SYMBOL_FLAGS],
    run: async (a, io) => (await import('./commands/ingest.js')).ingestCommand(a, io),
  },
  {
    name: 'capture',
    usage: `  heaplens capture [--out DIR] [--every 1G] [--rss-step 64M] [--keep 64] [--jemalloc PATH] -- <command…>
                                                  run a job with heap profiling and the capture library: a
                                                  series of dumps in DIR (a new folder by default)`,
    flags: ['help', 'out', 'jemalloc', 'every', 'rss-step', 'keep'],
    run: async (a, io) => (await import('./commands/capture.js')).captureCommand(a, io),
  },
  {
    name: 'collect',
    usage: `  heaplens collect [--out DIR|FILE.tar.gz] [--since TIME] [--dumps DIR] [--log FILE…]
                                                  on the node after the job died: the dumps, the kernel's log
                                                  since the start, the job's cgroup files and the logs named,
                                                  in one folder or tarball to copy off`,
    flags: ['help', 'out', 'since', 'dumps', 'log'],
    run: async (a, io) => (await import('./commands/collect.js')).collectCommand(a, io),
  },
];

/** The whole usage text (`heaplens --help`). */
export function usage(): string {
  return `heaplens — offline analyzer for jemalloc heap profiles

usage:
${COMMANDS.map((c) => c.usage).join('\n')}

options:
  --json             one JSON document on stdout (shape: README.md, "CLI JSON")
  --show-allocator   keep the allocator's own frames at the top of stacks
  --pid <pid>        only this process
  --stacks python-first|merged|python|native
                     python-first (default): Python frames and the native frames that are not the
                     interpreter's own, which fold into "[+N interpreter frames]"; merged: Python
                     frames in place of the eval loop's, every other frame kept; Python frames
                     only; native frames only
  --fold-imports     fold import-machinery frames (<frozen importlib._bootstrap…>) too
  --sample inuse_space|inuse_objects|alloc_space|alloc_objects
                     what to count (pprof's names; space/objects = inuse_*): live bytes (default),
                     live objects, or bytes/objects allocated since start (needs prof_accum:true)
  --focus RE         only stacks with a frame whose function, file or module path matches (pprof -focus)
  --ignore RE        drop stacks with a matching frame (pprof -ignore)
  --hide RE          remove matching frames from stacks (pprof -hide)
  --show RE          keep only matching frames in stacks (pprof -show)
  --granularity lines|functions|files
                     what a frame is when stacks are grouped and shown (default lines)
${SYMBOL_USAGE}
Paths may be dump files (.heap, .heap.gz), maps files, or folders (read recursively), or one dataset
folder written by ingest (every command reads it as it would read the dumps).`;
}

/** A usage error: the message, the usage lines of the command it is about, and where the rest is. */
export function usageErrorText(message: string, command: string | undefined): string {
  const c = COMMANDS.find((x) => x.name === command);
  const lines = c ? `usage:\n${c.usage}` : `commands: ${COMMANDS.map((x) => x.name).join(', ')}`;
  return `heaplens: ${message}\n${lines}\n(heaplens --help for every command and option)`;
}

export async function run(argv: readonly string[], rawIo: Output): Promise<number> {
  const safe: Output = {
    ...terminalSafe(
      rawIo,
      argv.includes('--json') || argv.includes('speedscope') || argv.includes('--format=speedscope'),
    ),
    columns: rawIo.columns,
  };
  let io = safe;
  const command = argv[0];
  try {
    const args = parseArgs(argv);
    const columns = rawIo.columns;
    if (args.command === 'help' || args.command === '--help' || args.command === '-h' || has(args, 'help')) {
      io.out(columns !== undefined ? wrapUsage(usage(), columns) : usage());
      return 0;
    }
    // Text output fits the terminal (tables cut their stack column; longer lines wrap); JSON is left whole, and
    // so is the list of binaries to hand over (paths to copy).
    if (columns !== undefined && !has(args, 'json') && args.command !== 'binaries')
      io = { ...safe, out: (s) => safe.out(wrapLines(s, columns)) };
    const c = COMMANDS.find((x) => x.name === args.command);
    if (!c) throw new UsageError(`unknown command "${args.command}"`);
    checkFlags(args, c.flags);
    return await c.run(args, io);
  } catch (e) {
    // A dataset with a missing or damaged file (node/dataset/read-dataset.ts): the message names the file.
    if (e instanceof Error && e.name === 'DatasetError') {
      io.err(`heaplens: ${e.message}`);
      return 1;
    }
    if (e instanceof UsageError || e instanceof SnapshotChoiceError) {
      io.err(usageErrorText(e.message, command));
      return 2;
    }
    throw e;
  }
}

/** Every line the CLI prints passes here: controls and bidi characters from files become visible text. */
function terminalSafe(io: Output, json: boolean): Output {
  return {
    out: (s) => io.out(json ? escapeControlsInJson(s) : revealControls(s)),
    err: (s) => io.err(revealControls(s)),
  };
}
