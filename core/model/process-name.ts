// The one name of a process, used by the process table, banners, charts, report titles and the CLI: what ran,
// not the dump prefix (every process of a job shares "jeprof" or "job"). First the role a job log gives its pid
// (`[rollout-1 pid=N]`: core/load/evidence-load.ts), then in order of what the dumps tell:
//   0. a name the process gave itself: a comm that is not its executable's (prctl PR_SET_NAME, setproctitle —
//      how Ray workers, DataLoader workers and launchers name their roles);
//   1. the command line from the capture context: the executable's base name and, for a Python interpreter,
//      its script (`python3.12 job.py`) or module (`python3.12 -m trainer`);
//   2. without a command line, the executable (the context's comm, else the maps' main executable) and the
//      script from the Python frames: the file of the outermost `<module>` frame of most stacks.
// Null when nothing names it (jemalloc dumps without maps or Python frames): callers fall back to the prefix.

import { decodePseudoAddress, PY_KIND_FRAME, type PyFrameTable } from '../formats/pyframes.js';
import type { MapsEntry } from '../formats/proc-maps.js';
import { revealControls } from './display-text.js';
import { processIdentity } from './memory-context.js';
import { pidText } from './process-host.js';
import type { ProcessSeries } from './model.js';

const base = (p: string): string => p.slice(p.lastIndexOf('/') + 1);
const isPython = (exe: string): boolean => /^python(\d+(\.\d+)?)?[dmu]*$/.test(exe) || exe === 'pypy3';
// CPython options that take a value as the next argument (python3 --help)
const OPTION_WITH_VALUE = new Set(['-W', '-X', '--check-hash-based-pycs']);

/** `python3.12 job.py`, `python3.12 -m trainer`, `python3.12 -c`, `torchrun`: a command line as a name. */
export function commandName(argv: readonly string[]): string | null {
  if (argv.length === 0 || argv[0] === '') return null;
  const exe = base(argv[0]);
  if (!isPython(exe)) return exe;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-m' || a === '-c') return a === '-m' && i + 1 < argv.length ? `${exe} -m ${argv[i + 1]}` : `${exe} ${a}`;
    if (OPTION_WITH_VALUE.has(a)) {
      i++;
      continue;
    }
    if (a.startsWith('-')) continue;
    return `${exe} ${base(a)}`;
  }
  return exe;
}

/** The main executable: the lowest-addressed file mapping at offset 0 (the kernel maps the program first). */
export function mainExecutable(maps: readonly MapsEntry[] | null): string | null {
  if (!maps) return null;
  let best: MapsEntry | null = null;
  for (const e of maps)
    if (e.path.startsWith('/') && e.offset === 0n && (best === null || e.start < best.start)) best = e;
  return best ? base(best.path) : null;
}

/** The script: the file of the outermost `<module>` frame in the most stacks (imports sit leafward of it). */
export function scriptFromFrames(
  p: Pick<ProcessSeries, 'stacks' | 'addresses'> & { pythonFrames?: PyFrameTable | null },
): string | null {
  const table = p.pythonFrames ?? null;
  if (!table) return null;
  const layout = { tagHex: table.tagHex, kindShift: table.kindShift, idShift: table.idShift };
  const votes = new Map<string, number>();
  const { offsets, frames, count } = p.stacks;
  for (let s = 0; s < count; s++) {
    // outermost first: the first Python frame from the root end is the stack's outermost
    for (let f = offsets[s + 1] - 1; f >= offsets[s]; f--) {
      const pa = decodePseudoAddress(p.addresses.hex[frames[f]], layout);
      if (!pa || pa.kind !== PY_KIND_FRAME) continue;
      const e = table.frames.get(pa.addr);
      // a native frame a capture named (PyTorch's `_start`, memleak's) is not the outermost Python frame
      if (e?.native) continue;
      if (e && e.function === '<module>' && e.file && !e.file.startsWith('<'))
        votes.set(e.file, (votes.get(e.file) ?? 0) + 1);
      break;
    }
  }
  let best: string | null = null;
  let n = 0;
  for (const [file, v] of votes) if (v > n) [best, n] = [file, v];
  return best ? base(best) : null;
}

/** The process's name (see the top of this file), null when nothing names it. */
export function processName(
  p: Pick<ProcessSeries, 'snapshots' | 'maps' | 'stacks' | 'addresses' | 'role'> & {
    pythonFrames?: PyFrameTable | null;
  },
): string | null {
  // a name comes from files (logs, maps, command lines, frames): marked once here, for every view and the CLI
  const name = p.role?.name ?? rawProcessName(p);
  return name === null ? null : revealControls(name);
}

function rawProcessName(
  p: Pick<ProcessSeries, 'snapshots' | 'maps' | 'stacks' | 'addresses'> & { pythonFrames?: PyFrameTable | null },
): string | null {
  const id = processIdentity(p);
  const argv0 = id?.cmdline?.[0] ? base(id.cmdline[0]) : null;
  // the kernel keeps 15 bytes of comm: a prefix of the executable's name is the default, anything else a role
  if (id?.comm && argv0 && !argv0.startsWith(id.comm)) return id.comm;
  const fromCmd = id?.cmdline ? commandName(id.cmdline) : null;
  if (fromCmd) return fromCmd;
  // valgrind massif's `cmd:` line: the command it ran (split on blanks: massif joins argv with spaces)
  const massifCmd = p.snapshots.find((s) => s.massif?.cmd)?.massif?.cmd;
  const fromMassif = massifCmd ? commandName(massifCmd.trim().split(/\s+/)) : null;
  if (fromMassif) return fromMassif;
  const exe = id?.comm ?? mainExecutable(p.maps);
  const script = scriptFromFrames(p);
  if (exe && script) return `${exe} ${script}`;
  return exe ?? (script ? `python ${script}` : null);
}

/**
 * How a process reads in banners and titles: `7905 python3.12 job.py`, else `7905 job` (the prefix); given its
 * host (where pids repeat in the job: core/model/process-host.ts labelHost), `node-a:7905 python3.12 job.py`.
 */
export function processLabel(
  p: Pick<ProcessSeries, 'pid' | 'prefix' | 'key'>,
  name: string | null,
  host: string | null = null,
): string {
  const who = p.pid !== null ? pidText(p.pid, host) : p.key;
  const what = name ?? p.prefix;
  return what ? `${who} ${what}` : who;
}
