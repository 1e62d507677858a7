// `heaplens capture [--out DIR] [options] -- <command…>`: runs a job under jemalloc's heap profiling with the capture
// library preloaded (as `memray run` or `py-spy record` start one), then says where the dumps went and how many
// there are. The settings are capture-plan.ts's; what is found on the machine, capture-files.ts's.

import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { basename, resolve } from 'node:path';
import { flag, optionName, UsageError, type ParsedArgs } from '../args.js';
import type { Output } from '../common.js';
import { captureEnv, DEFAULTS, parseSizeOption, planText, type CaptureSettings } from '../capture-plan.js';
import { captureLibrary, cgroupMemoryLimit, countDumps, findJemalloc, jemallocCandidates } from '../capture-files.js';

/** Signals a scheduler or a user sends to the wrapper, handed on to the job. */
const FORWARDED = ['SIGTERM', 'SIGHUP', 'SIGUSR1', 'SIGUSR2'] as const;
/**
 * Signals the terminal sends to the whole foreground process group (Ctrl-C, Ctrl-\): the job has its own copy
 * already, so the wrapper only stays alive to report, rather than sending the job a second one.
 */
const FROM_TERMINAL = ['SIGINT', 'SIGQUIT'] as const;

function settingsOf(args: ParsedArgs): CaptureSettings {
  const size = (name: string, fallback: number | null): number | null => {
    const v = flag(args, name);
    if (v === undefined) return fallback;
    const r = parseSizeOption(v);
    if (!r.ok) throw new UsageError(`${optionName(args, name)} ${JSON.stringify(v)}: ${r.message}`);
    return r.bytes;
  };
  const keep = flag(args, 'keep');
  if (keep !== undefined && !/^\d+$/.test(keep))
    throw new UsageError(`--keep takes a whole number (0: keep every dump), got ${JSON.stringify(keep)}`);
  return {
    ...DEFAULTS,
    every: size('every', DEFAULTS.every),
    rssStep: size('rss-step', DEFAULTS.rssStep),
    keep: keep === undefined ? DEFAULTS.keep : Number(keep),
  };
}

/** A folder name of its own for each run (two runs in one folder would read as one job). */
function defaultFolder(command: string, now = new Date()): string {
  const t = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `heaplens-${basename(command).replace(/[^\w.-]/g, '_')}-${t}`;
}

export async function captureCommand(args: ParsedArgs, io: Output): Promise<number> {
  const command = args.positional;
  if (command.length === 0) throw new UsageError('"capture" needs the command to run after --');
  const settings = settingsOf(args);

  const jemalloc = flag(args, 'jemalloc') ?? findJemalloc();
  if (jemalloc === null) {
    io.err(
      `heaplens: jemalloc not found (looked in ${jemallocCandidates().join(', ')} and ldconfig's cache): install it ` +
        '(Debian/Ubuntu: apt-get install libjemalloc2; Fedora/RHEL: dnf install jemalloc; conda: conda install ' +
        'jemalloc) or name it with --jemalloc PATH',
    );
    return 1;
  }
  if (!existsSync(jemalloc)) {
    io.err(`heaplens: --jemalloc ${jemalloc}: no such file`);
    return 1;
  }
  const lib = captureLibrary();
  if (!lib.built) {
    io.err(
      `heaplens: the capture library is not built (${lib.path}): run \`npm run build:capture\`` +
        (lib.root ? ` in ${lib.root}` : '') +
        ' (gcc only), or set HEAPLENS_CAPTURE_LIBRARY to a built libheaplens_capture.so',
    );
    return 1;
  }

  const dir = resolve(flag(args, 'out') ?? defaultFolder(command[0]));
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
  } catch (e) {
    io.err(`heaplens: cannot write the dumps' folder ${dir}: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  if (!statSync(dir).isDirectory()) {
    io.err(`heaplens: --out ${dir} is a file, not a folder`);
    return 1;
  }
  const before = countDumps(dir);
  if (before.dumps > 0)
    throw new UsageError(
      `${dir} already holds ${before.dumps} dump${before.dumps === 1 ? '' : 's'} of an earlier run (heaplens would ` +
        'read both runs as one job): name another folder with --out, or empty this one',
    );

  const limit = cgroupMemoryLimit();
  const env = captureEnv({ settings, dir, jemalloc, library: lib.path, cgroupLimit: limit, env: process.env });
  io.err(`heaplens: capturing ${command.join(' ')}`);
  io.err(`heaplens: dumps go to ${dir}: ${planText(settings, limit)}`);
  // what the user's environment already set wins (capture-plan.ts captureEnv): say so, the line above may not hold
  const own = Object.keys(process.env).filter((k) => k === 'MALLOC_CONF' || k.startsWith('HEAPLENS_DUMP_'));
  if (own.length > 0)
    io.err(
      `heaplens: your ${own.map((k) => `${k}=${process.env[k]}`).join(' ')} appl${own.length === 1 ? 'ies' : 'y'} over these`,
    );

  const status = await runJob(command, env, io);

  const after = countDumps(dir);
  const pids = [...after.byPid.values()];
  const ended = status.signal ? `was killed by ${status.signal}` : `exited with ${status.code}`;
  if (after.dumps === 0) {
    const why =
      status.code === 127 && !status.signal
        ? ''
        : status.signal
          ? ' It was killed before its first dump (a kill leaves no dump at exit).'
          : ' jemalloc writes one at exit: if it printed "<jemalloc>: Invalid conf pair: prof:true", this jemalloc' +
            " has no profiling (Debian's libjemalloc2 has it; name another with --jemalloc); a program that brings" +
            ' its own allocator or is linked statically never calls it.';
    io.err(`heaplens: the job ${ended} and wrote no dumps in ${dir}.${why}`);
  } else {
    const per = pids.length === 1 ? '' : ` (${pids.join(', ')} per process)`;
    const final =
      after.final === 0
        ? 'none at exit: the job was killed, the newest dump is the last one written'
        : `${after.final} at exit`;
    io.err(
      `heaplens: the job ${ended}; ${after.dumps} dump${after.dumps === 1 ? '' : 's'} of ${pids.length} ` +
        `process${pids.length === 1 ? '' : 'es'}${per} in ${dir}, ${final}`,
    );
    if (after.withoutTable > 0)
      io.err(`heaplens: ${after.withoutTable} of them have no .pyframes table (no Python frames or context for those)`);
    if (after.cut > 0)
      io.err(
        `heaplens: ${after.cut} dump${after.cut === 1 ? ' was' : 's were'} cut by the end (*.heap.tmp: skipped by readers)`,
      );
    io.err(`heaplens: next: heaplens growth ${dir}   (or open the folder in the app)`);
  }
  return status.signal ? 128 + (osConstants.signals[status.signal] ?? 0) : status.code;
}

interface JobStatus {
  code: number;
  signal: NodeJS.Signals | null;
}

/** Runs the job with the terminal's stdio, hands it the signals the wrapper gets, and waits for it to end. */
function runJob(command: readonly string[], env: NodeJS.ProcessEnv, io: Output): Promise<JobStatus> {
  return new Promise((done) => {
    const child = spawn(command[0], command.slice(1), { stdio: 'inherit', env });
    const handlers = new Map<NodeJS.Signals, () => void>();
    for (const sig of FORWARDED) handlers.set(sig, () => child.kill(sig));
    for (const sig of FROM_TERMINAL) handlers.set(sig, () => {});
    for (const [sig, h] of handlers) process.on(sig, h);
    let ended = false;
    const finish = (s: JobStatus) => {
      if (ended) return;
      ended = true;
      for (const [sig, h] of handlers) process.off(sig, h);
      done(s);
    };
    child.on('error', (e: NodeJS.ErrnoException) => {
      io.err(`heaplens: cannot run ${command[0]}: ${e.code === 'ENOENT' ? 'command not found' : e.message}`);
      finish({ code: e.code === 'ENOENT' ? 127 : 126, signal: null });
    });
    child.on('exit', (code, signal) => finish({ code: code ?? 0, signal }));
  });
}
