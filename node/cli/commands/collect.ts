// `heaplens collect [--out DIR|FILE.tar.gz] [--since TIME] [--dumps DIR…] [--log FILE…]`, run on the node after the
// job died: the dumps with their side files, the kernel's log since the job started, the job's memory cgroup files and
// the logs the user names, in one folder or tarball to copy off, with a MANIFEST.txt of what came from where and
// what could not be read. The readers of the node's state are collect-files.ts's.

import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { formatBytes } from '../../../core/model/units.js';
import { flag, flags, UsageError, type ParsedArgs } from '../args.js';
import type { Output } from '../common.js';
import {
  cgroupFilesIn,
  dumpFolderFacts,
  jobCgroupDirs,
  parseSince,
  readKernelLog,
  type DumpFolderFacts,
} from '../collect-files.js';

const TARBALL = /\.(tar\.gz|tgz)$/;

function stamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}

/** The dump folders: --dumps and the paths given, else the newest `heaplens-*` folder `capture` made here. */
function dumpFolders(args: ParsedArgs): string[] {
  const given = [...flags(args, 'dumps'), ...args.positional];
  if (given.length > 0) return given.map((d) => resolve(d));
  const made = readdirSync('.', { withFileTypes: true })
    .filter((e) => e.isDirectory() && /^heaplens-.+-\d{8}-\d{6}$/.test(e.name))
    .map((e) => e.name)
    .sort((a, b) => a.slice(-15).localeCompare(b.slice(-15)));
  if (made.length === 0)
    throw new UsageError(
      "name the dumps' folder with --dumps DIR (no heaplens-<command>-<time> folder of `capture` here)",
    );
  return [resolve(made[made.length - 1])];
}

export async function collectCommand(args: ParsedArgs, io: Output): Promise<number> {
  const folders = dumpFolders(args);
  const logs = flags(args, 'log').map((l) => resolve(l));
  const sinceArg = flag(args, 'since');
  const now = Date.now();
  const out = resolve(flag(args, 'out') ?? `heaplens-${hostname().replace(/[^\w.-]/g, '_')}-${stamp(now)}.tar.gz`);
  const tarball = TARBALL.test(out);
  // every argument checked before anything is made or copied
  let given: number | null = null;
  if (sinceArg !== undefined) {
    const r = parseSince(sinceArg, now);
    if (!r.ok) throw new UsageError(`--since ${JSON.stringify(sinceArg)}: ${r.message}`);
    given = r.ms;
  }
  if (existsSync(out) && (tarball || readdirSync(out).length > 0))
    throw new UsageError(`--out ${out} already exists: name a new folder or tarball`);

  const problems: string[] = [];
  const manifest: string[] = [];
  // where the collection is put together: the folder itself, or a staging folder the tarball is made of
  const staging = tarball ? mkdtempSync(join(tmpdir(), 'heaplens-collect-')) : null;
  const top = staging ? join(staging, basename(out).replace(TARBALL, '')) : out;
  mkdirSync(top, { recursive: true });
  try {
    // the dumps, with every file beside them (tables, maps, cut *.tmp files: the readers know what each is)
    const facts: DumpFolderFacts[] = [];
    const names = new Set<string>();
    for (const dir of folders) {
      if (!existsSync(dir) || !statSync(dir).isDirectory()) {
        problems.push(`${dir}: no such folder`);
        continue;
      }
      const f = dumpFolderFacts(dir);
      facts.push(f);
      let name = basename(dir);
      while (names.has(name)) name += '_';
      names.add(name);
      let copied = 0;
      for (const rel of f.files) if (copy(join(dir, rel), join(top, 'dumps', name, rel), problems)) copied++;
      manifest.push(
        `dumps/${name}/: ${plural(f.dumps.length, 'dump')} of ${plural(f.pids.size, 'process', 'processes')} and ${plural(copied - f.dumps.length, 'other file')} from ${dir}`,
      );
      // CPython's `-X perf` maps are written to /tmp, not beside the dumps
      for (const pid of f.pids) {
        const map = `/tmp/perf-${pid}.map`;
        if (
          existsSync(map) &&
          !f.files.includes(basename(map)) &&
          copy(map, join(top, 'dumps', name, basename(map)), problems)
        )
          manifest.push(`dumps/${name}/${basename(map)}: from ${map}`);
      }
    }
    const dumps = facts.reduce((n, f) => n + f.dumps.length, 0);

    // since when: --since, else the earliest process start the dumps recorded, else the oldest dump's time
    let sinceMs: number;
    let sinceFrom: string;
    if (given !== null) {
      sinceMs = given;
      sinceFrom = '--since';
    } else {
      const starts = facts.map((f) => f.startMs).filter((s): s is number => s !== null);
      const mtimes = facts.map((f) => f.oldestMtimeMs).filter((s): s is number => s !== null);
      if (starts.length > 0) [sinceMs, sinceFrom] = [Math.min(...starts), "the job's start recorded with the dumps"];
      else if (mtimes.length > 0) [sinceMs, sinceFrom] = [Math.min(...mtimes), 'the oldest dump (no start recorded)'];
      else [sinceMs, sinceFrom] = [now - 86_400_000, 'no dumps and no --since: the last 24 hours'];
    }
    const since = new Date(sinceMs).toISOString();

    const kernel = readKernelLog(sinceMs);
    if (kernel.source) {
      writeFileSync(join(top, 'kernel.log'), kernel.text);
      manifest.push(`kernel.log: ${kernel.lines} lines of ${kernel.source} since ${since} (${sinceFrom})`);
    }
    for (const p of kernel.problems) problems.push(`kernel log: ${p}`);

    const recorded = new Set(facts.flatMap((f) => [...f.cgroupPaths]));
    let self: string | null = null;
    try {
      self = readFileSync('/proc/self/cgroup', 'utf8');
    } catch {
      // no /proc: no cgroup of our own either
    }
    const cgroups = jobCgroupDirs(recorded, self);
    if (cgroups.length === 0) problems.push('cgroup: the dumps recorded none and this shell runs in the root cgroup');
    cgroups.forEach((dir, i) => {
      const files = cgroupFilesIn(dir);
      if (files.length === 0) {
        problems.push(
          `cgroup ${dir}: ${existsSync(dir) ? 'no memory files' : "gone (schedulers remove a job's cgroup when it ends: run collect inside the allocation, e.g. last in the batch script)"}`,
        );
        return;
      }
      const to = join(top, cgroups.length === 1 ? 'cgroup' : `cgroup-${i + 1}`);
      const got = files.filter((f) => copy(join(dir, f), join(to, f), problems, true));
      manifest.push(`${basename(to)}/: ${got.length} memory files of ${dir}`);
    });

    for (const log of logs) {
      let name = basename(log);
      while (existsSync(join(top, 'logs', name))) name = `_${name}`;
      if (copy(log, join(top, 'logs', name), problems)) manifest.push(`logs/${name}: from ${log}`);
    }

    const header = [
      `heaplens collect on ${hostname()} at ${new Date(now).toISOString()}`,
      `dump folders: ${folders.join(', ')}`,
      '',
      ...manifest,
      ...(problems.length > 0 ? ['', 'could not read:', ...problems.map((p) => `  ${p}`)] : []),
    ];
    writeFileSync(join(top, 'MANIFEST.txt'), header.join('\n') + '\n');

    if (staging) {
      mkdirSync(dirname(out), { recursive: true });
      const t = spawnSync('tar', ['-czf', out, '-C', staging, basename(top)], { encoding: 'utf8' });
      if (t.status !== 0) {
        io.err(`heaplens: tar -czf ${out} failed: ${(t.stderr || t.error?.message || '').trim()}`);
        return 1;
      }
    }
    const size = staging ? statSync(out).size : null;
    io.out(`heaplens: collected into ${out}${size !== null ? ` (${formatBytes(size)})` : ''}:`);
    for (const m of manifest) io.out(`  ${m}`);
    if (problems.length > 0) {
      io.out('could not read:');
      for (const p of problems) io.out(`  ${p}`);
    }
    io.out(
      `next, where you analyse it: ${staging ? `tar -xzf ${basename(out)} && ` : ''}heaplens postmortem ${basename(top)}`,
    );
    return dumps > 0 ? 0 : 1;
  } finally {
    if (staging) rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Copies one file (its folder made), or notes why not. Kernel files (cgroup, /proc) say a size they do not have:
 * those are read whole and written, not copied by size.
 */
function copy(from: string, to: string, problems: string[], pseudo = false): boolean {
  try {
    mkdirSync(dirname(to), { recursive: true });
    if (pseudo) writeFileSync(to, readFileSync(from));
    else copyFileSync(from, to);
    return true;
  } catch (e) {
    problems.push(`${from}: ${e instanceof Error ? e.message : String(e)}`);
    return false;
  }
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
