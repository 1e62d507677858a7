// Reader of the lines in a job's own logs that say a process was killed, and by whom:
//  - Ray: the memory monitor's `ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on
//    memory.` with `(… pid=N …)` and "Ray killed this worker", and the raylet's "N Workers (tasks / actors)
//    killed due to memory pressure (OOM)" summary (python/ray/exceptions.py, src/ray/raylet/node_manager.cc);
//  - Kubernetes: `kubectl describe pod` text (`Reason: OOMKilled`, `Exit Code: 137`) and the pod's JSON
//    (status.containerStatuses[].state/lastState.terminated.reason "OOMKilled", exitCode 137: core/v1
//    ContainerStateTerminated);
//  - SLURM: slurmstepd's `Detected N oom_kill event(s) in StepId=…` / `Detected N oom-kill event(s) in step
//    … cgroup` (src/plugins/task/cgroup/task_cgroup_memory.c);
//  - PyTorch: `DataLoader worker (pid N) is killed by signal: Killed.` and `DataLoader worker (pid(s) N, M)
//    exited unexpectedly` (torch/csrc/DataLoader.cpp, torch/utils/data/dataloader.py);
//  - a shell's job status: `… line L: PID Killed   command` (bash, as SLURM batch output shows it);
//  - a job's memory watchdog: `oom-kill: killed pid N (role) vmrss=NkB` (job= and limit= when it gives them);
//  - launchers' exit codes: Python multiprocessing's `exitcode` (`… (pid N) exited with exitcode -9`, the Process
//    repr `pid=N … exitcode=-SIGKILL`), torchrun/elastic's `failed (exitcode: -9) … (pid: N)`, `exitcode : -9
//    (pid: N)`, `Signal 9 (SIGKILL) received by PID N` and `Sending process N closing signal SIGTERM`
//    (torch/distributed/elastic/multiprocessing/api.py, errors/__init__.py), Ray's `Worker PID: N … killed by
//    SIGKILL … OOM`;
//  - any other line with kill, OOM or signal words and numbers: kept as "a format not known" (the numbers that
//    are pids of the job make it evidence, core/stats/kill-evidence.ts);
//  - roles: `[rollout-1 pid=N]`, `started loader-1 pid=N`, `worker rollout-1 (pid N)`, `name='rollout-1' pid=N`,
//    a watchdog's `killed pid N (rollout-1)`, a syslog-style `trainer[N]` tag;
//  - dump times: a line naming a `.heap` file with a time (a listing made on the node, a job's own "wrote …" line).
// Known by content, behind any prefix. Each event keeps its file line and text (bounded) as evidence.

export type JobLogSource =
  'ray' | 'kubernetes' | 'slurm' | 'pytorch' | 'shell' | 'watchdog' | 'launcher' | 'torchrun' | 'unknown';

/**
 * oom: memory was the reason; signal: killed by a signal, the reason not given; teardown: stopped by its job
 * (SIGTERM, SIGINT, SIGHUP: a launcher ending the rest after a failure); exit: ended by itself with an exit code;
 * unknown: a line of a format not known with kill, OOM or signal words (the pids are every number on it: only
 * one that is a pid of the job makes it evidence).
 */
export type JobLogKind = 'oom' | 'signal' | 'teardown' | 'exit' | 'unknown';

export interface JobLogEvent {
  source: JobLogSource;
  /** 1-based line (JSON: the line holding the terminated state's reason) */
  line: number;
  text: string;
  /** the process it names, when it names one (unknown: every number that could be a pid) */
  pids: number[];
  kind: JobLogKind;
  /** a wall-clock time on the line or in the object (ISO or `YYYY-MM-DD HH:MM:SS`), ms since the epoch */
  atMs: number | null;
  /** the number of kills the line reports (SLURM's count, Ray's summary), when it reports one */
  count: number | null;
  /** Kubernetes: container name; Ray: task name; watchdog, launcher: the role it names */
  name: string | null;
  /** a launcher's exit code as written (multiprocessing and torchrun: −N for signal N; a shell: 128 + N) */
  exitCode?: number | null;
  /** the signal that ended the process, when the line says one */
  signal?: number | null;
  /** a watchdog's figures: the process's resident memory, the job's, and the limit it enforces */
  rssBytes?: number | null;
  jobBytes?: number | null;
  limitBytes?: number | null;
}

/** A role a job log gives a pid: `[rollout-1 pid=N]`, `started loader-1 pid=N`, `worker rollout-1 (pid N)`. */
export interface JobLogRole {
  pid: number;
  role: string;
  /** the first line that gives it */
  line: number;
  /** how many lines give it (a log names a worker on every line it writes) */
  count: number;
}

/** A line that names a heap dump's file with a time (a listing made on the node, a job's "wrote …heap" line). */
export interface JobLogDumpTime {
  /** the dump's file name, without folders or a compression suffix */
  name: string;
  atMs: number;
  line: number;
}

export interface JobLog {
  events: JobLogEvent[];
  roles: JobLogRole[];
  dumpTimes: JobLogDumpTime[];
  warnings: { line: number; message: string }[];
}

const MAX_TEXT = 300;
const MAX_LINE = 16384;
/** Lines of a format not known kept per log: a log that says "killed" on every line is not evidence a line at a time. */
const MAX_UNKNOWN = 10000;
/** Distinct (pid, role) pairs kept per log: beyond, a log that names a new pid on every line is no roster. */
const MAX_ROLES = 100000;

const RE_TIME = /(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,12}))?(Z|[+-]\d\d:?\d\d)?/;

/** A time written on a line; without a zone it is read as UTC. */
export function lineTime(s: string): number | null {
  const m = RE_TIME.exec(s);
  if (!m) return null;
  let ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  if (m[7]) ms += Number(`0.${m[7]}`) * 1000;
  if (m[8] && m[8] !== 'Z') {
    const z = /([+-])(\d\d):?(\d\d)/.exec(m[8])!;
    ms -= (z[1] === '-' ? -1 : 1) * (Number(z[2]) * 60 + Number(z[3])) * 60000;
  }
  return Number.isFinite(ms) ? ms : null;
}

// signal numbers of x86-64 Linux (signal(7)): the names launchers print (multiprocessing's -SIGKILL)
const SIGNALS: Record<string, number> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGILL: 4,
  SIGTRAP: 5,
  SIGABRT: 6,
  SIGBUS: 7,
  SIGFPE: 8,
  SIGKILL: 9,
  SIGUSR1: 10,
  SIGSEGV: 11,
  SIGUSR2: 12,
  SIGPIPE: 13,
  SIGALRM: 14,
  SIGTERM: 15,
};
/** Signals a job sends to stop its processes (the rest of a job after a failure): teardown, not a kill. */
const TEARDOWN_SIGNALS = new Set([1, 2, 15]);

export function signalName(n: number): string {
  return Object.entries(SIGNALS).find(([, v]) => v === n)?.[0] ?? `signal ${n}`;
}

/** An exit code as a launcher writes it: `-9`, `-SIGKILL` (multiprocessing), `137` (a shell's 128 + 9). */
function exitOf(code: string): { exitCode: number | null; signal: number | null } {
  if (/^-SIG[A-Z0-9]+$/.test(code)) {
    const n = SIGNALS[code.slice(1)] ?? null;
    return { exitCode: n !== null ? -n : null, signal: n };
  }
  const c = Number(code);
  if (!Number.isInteger(c)) return { exitCode: null, signal: null };
  return { exitCode: c, signal: c < 0 && c >= -64 ? -c : c > 128 && c <= 128 + 64 ? c - 128 : null };
}

function kindOfSignal(signal: number | null): JobLogKind {
  return signal === null ? 'exit' : TEARDOWN_SIGNALS.has(signal) ? 'teardown' : 'signal';
}

interface Hit {
  pids: number[];
  kind?: JobLogKind;
  count?: number | null;
  name?: string | null;
  exitCode?: number | null;
  signal?: number | null;
  rssBytes?: number | null;
  jobBytes?: number | null;
  limitBytes?: number | null;
}

const kB = (line: string, key: string): number | null => {
  const m = new RegExp(`\\b${key}[=:]\\s?(\\d{1,15})\\s?kB\\b`, 'i').exec(line);
  return m ? Number(m[1]) * 1024 : null;
};

// a pid in the forms launchers write it: `pid 5`, `pid=5`, `pid: 5`, `PID 5`
const RE_PID = /\bpid[=:]?\s?(\d{1,10})\b/i;
const RE_EXIT = /\bexit(?:ed with)?[ _]?(?:code|status)\b\s*[=:]?\s*(-SIG[A-Z0-9]+|-?\d{1,3})\b/i;

const PATTERNS: {
  source: JobLogSource;
  kind: JobLogKind;
  re: RegExp;
  /** what the line says beyond its kind (its pids first); none: the pids of `pid=N` on the line */
  hit?: (m: RegExpExecArray, line: string) => Hit | null;
}[] = [
  {
    source: 'ray',
    kind: 'oom',
    re: /OutOfMemoryError: Task was killed due to the node running low on memory/,
  },
  { source: 'ray', kind: 'oom', re: /Ray killed this worker \(ID: [0-9a-f]+\)/ },
  {
    source: 'ray',
    kind: 'oom',
    re: /(\d{1,9}) Workers? \(tasks \/ actors\) killed due to memory pressure \(OOM\)/,
    hit: (m) => ({ pids: [], count: Number(m[1]) }),
  },
  {
    // a worker's death as the raylet reports it: "Worker PID: N … killed by SIGKILL by OOM killer"
    source: 'ray',
    kind: 'oom',
    re: /\bWorker PID: (\d{1,10})\b.*\b(?:killed|SIGKILL)\b.*\b(?:OOM|out of memory|memory pressure)/i,
    hit: (m) => ({ pids: [Number(m[1])] }),
  },
  {
    source: 'slurm',
    kind: 'oom',
    re: /Detected (\d{1,9}) oom[-_]kill events?(?:\(s\))? in (?:StepId=|step )?\S+/,
    hit: (m) => ({ pids: [], count: Number(m[1]) }),
  },
  { source: 'slurm', kind: 'oom', re: /srun: error: \S+: tasks? [\d,-]+: Out Of Memory/, hit: () => ({ pids: [] }) },
  {
    source: 'pytorch',
    kind: 'signal',
    re: /DataLoader worker \(pid (\d{1,10})\) is killed by signal: (\w[\w ]{0,30})/,
    hit: (m) => ({ pids: [Number(m[1])] }),
  },
  {
    source: 'pytorch',
    kind: 'signal',
    re: /DataLoader worker \(pid\(s\) ([\d, ]{1,400})\) exited unexpectedly/,
    hit: (m) => ({ pids: m[1].split(/[, ]+/).filter(Boolean).map(Number) }),
  },
  {
    // a job's own memory watchdog: "oom-kill: killed pid N (role) vmrss=NkB [job=NkB limit=NkB]" (the kernel's
    // own "oom-kill:constraint=" line is the kernel reader's)
    source: 'watchdog',
    kind: 'oom',
    re: /\boom[-_ ]?kill(?:er)?:? (?:killed|killing|kill) (?:pid |process )?(\d{1,10})(?: \(([^()\s]{1,64})\))?/i,
    hit: (m, l) => ({
      pids: [Number(m[1])],
      name: m[2] ?? null,
      rssBytes: kB(l, 'vmrss') ?? kB(l, 'rss'),
      jobBytes: kB(l, 'job'),
      limitBytes: kB(l, 'limit'),
    }),
  },
  {
    // torchrun's failure summary: "traceback : Signal 9 (SIGKILL) received by PID 12345"
    source: 'torchrun',
    kind: 'signal',
    re: /\bSignal (\d{1,2}) \((SIG[A-Z0-9]+)\) received by PID (\d{1,10})/,
    hit: (m) => ({ pids: [Number(m[3])], signal: Number(m[1]), kind: kindOfSignal(Number(m[1])) }),
  },
  {
    // torchrun stopping the other workers: "Sending process 12346 closing signal SIGTERM"
    source: 'torchrun',
    kind: 'teardown',
    re: /\bSending process (\d{1,10}) closing signal (SIG[A-Z0-9]+)/,
    hit: (m) => {
      const sig = SIGNALS[m[2]] ?? null;
      return { pids: [Number(m[1])], signal: sig, kind: kindOfSignal(sig) };
    },
  },
  {
    // a launcher's exit code of a worker: multiprocessing's `exitcode` ("worker rollout-1 (pid 5) exited with
    // exitcode -9", the Process repr "pid=5 … exitcode=-SIGKILL"), torchrun's "failed (exitcode: -9) local_rank:
    // 0 (pid: 5)" and "exitcode  : -9 (pid: 5)"
    source: 'launcher',
    kind: 'exit',
    re: RE_EXIT,
    hit: (m, l) => {
      const pid = RE_PID.exec(l);
      if (!pid) return null;
      const e = exitOf(m[1].toUpperCase().startsWith('-SIG') ? m[1].toUpperCase() : m[1]);
      return {
        pids: [Number(pid[1])],
        ...e,
        kind: kindOfSignal(e.signal),
        name: roleOn(l)?.role ?? null,
      };
    },
  },
  {
    source: 'shell',
    kind: 'signal',
    re: /(?:^|: )(\d{1,10}) Killed\s+\S/,
    hit: (m) => ({ pids: [Number(m[1])], signal: 9 }),
  },
];

const torchrunLine = (l: string): boolean => /\blocal_rank\b|torch\.distributed|^\s*exitcode\s+:/.test(l);

/** The kernel's own report lines (kernel-oom.ts reads them): not a line "of a format not known". */
const RE_KERNEL =
  /invoked oom-killer: |Killed process \d|oom-kill:constraint=|oom_reaper: reaped process|Memory cgroup stats for |memory: usage \d/;
/** Words of a kill, an OOM or a signal: a line holding one and a pid of the job is evidence, its format known or not. */
// (a word, not part of a name or a path: "heaplens-oom-job" and "/usr/bin/kill" are no evidence)
const RE_KILL_WORDS =
  /(?<![\w/.-])(?:kill(?:s|ed|ing)?|oom(?:[-_ ]?kill(?:er|ed)?)?|out of memory|sig(?:kill|term|int|abrt|segv|bus)|signal \d{1,2}|terminated by signal)(?![\w/.-])/i;

function pidsIn(line: string, re: RegExp): number[] {
  return [...line.matchAll(re)].map((m) => Number(m[1]));
}

/** Every number on a line that could be a pid (not part of a time, a date, a decimal or a size). */
function numbersOn(line: string): number[] {
  const out: number[] = [];
  for (const m of line.matchAll(/(?<![\d.:\-/])(\d{1,7})(?![\d.:\-/]|\s?(?:kB|KiB|MiB|GiB|MB|GB|B|%|ms|s)\b)/g)) {
    const n = Number(m[1]);
    if (n > 1 && !out.includes(n)) out.push(n);
    if (out.length >= 16) break;
  }
  return out;
}

const NOT_ROLES = new Set(['worker', 'process', 'child', 'task', 'the', 'with', 'pid', 'kernel', 'and', 'started']);

/** A role named on a line, with its pid. */
function roleOn(l: string): { role: string; pid: number } | null {
  const ok = (role: string, pid: string): { role: string; pid: number } | null =>
    /[A-Za-z]/.test(role) && !NOT_ROLES.has(role.toLowerCase()) && !/^python[\d.]*$/.test(role)
      ? { role, pid: Number(pid) }
      : null;
  let m = /\[([A-Za-z][\w.:-]{0,63})[ ,]+pid[=: ]\s?(\d{1,10})\]/.exec(l); // [rollout-1 pid=5]
  if (m) return ok(m[1], m[2]);
  m = /\bstarted\b.{0,80}?\b([A-Za-z][\w.-]{0,63}),? \(?pid[=: ]\s?(\d{1,10})\b/.exec(l); // started loader-1 pid=5
  if (m) return ok(m[1], m[2]);
  m = /\bworker ([A-Za-z][\w.-]{0,63}) \(pid[=: ]\s?(\d{1,10})\)/.exec(l); // worker rollout-1 (pid 5)
  if (m) return ok(m[1], m[2]);
  m = /\bname=['"]([^'"\s]{1,64})['"] pid=(\d{1,10})\b/.exec(l); // <Process name='rollout-1' pid=5 …>
  if (m) return ok(m[1], m[2]);
  m = /\bkilled (?:pid |process )(\d{1,10}) \(([A-Za-z][\w.-]{0,63})\)/.exec(l); // a watchdog's kill line
  if (m) return ok(m[2], m[1]);
  // a syslog-style tag at the start (after a time): "trainer[28464] …"
  m = /^(?:\S*\d\S*\s+)?([A-Za-z][\w.-]{0,63})\[(\d{1,10})\][: ]/.exec(l);
  if (m) return ok(m[1], m[2]);
  return null;
}

// a heap dump's file name on a line (jemalloc's `<prefix>.<pid>.<seq>.<i|m|u|f>….heap`, any `.heap`), compressed or not
const RE_DUMP_NAME = /(?:^|[\s/'"=(])([\w+-][\w.+-]{0,200}\.heap)(?:\.(?:gz|zst|bz2|xz))?(?=$|[\s'"),:;])/g;
/** Dump times kept per log. */
const MAX_DUMP_TIMES = 1_000_000;

/** The dump files a line names, when the line has a time. */
function dumpTimesOn(l: string, line: number): JobLogDumpTime[] {
  if (!l.includes('.heap')) return [];
  const at = lineTime(l);
  if (at === null) return [];
  return [...l.matchAll(RE_DUMP_NAME)].map((m) => ({ name: m[1], atMs: at, line }));
}

/** True when the text holds a line this reader knows (by content). */
export function looksLikeJobLog(text: string): boolean {
  const head = text.slice(0, 4 * 1024 * 1024);
  const first = head.split('\n', 2000);
  return (
    PATTERNS.some((p) => p.re.test(head)) ||
    /Reason:\s+OOMKilled|"reason"\s*:\s*"OOMKilled"/.test(text) ||
    RE_KILL_WORDS.test(head) ||
    first.some((l) => roleOn(l) !== null) ||
    first.some((l, i) => dumpTimesOn(l, i + 1).length > 0)
  );
}

/** Reads the kill lines and roles of a text log; the Kubernetes forms too (describe text, pod JSON). */
export function parseJobLog(text: string): JobLog | null {
  if (!looksLikeJobLog(text)) return null;
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{')) {
    const j = parsePodJson(text);
    if (j) return j;
  }
  const events: JobLogEvent[] = [];
  const roles: JobLogRole[] = [];
  const roleAt = new Map<string, JobLogRole>();
  const dumpTimes: JobLogDumpTime[] = [];
  const warnings: JobLog['warnings'] = [];
  const lines = text.split(/\r?\n/);
  let container: string | null = null;
  let k8sReason: { line: number; text: string } | null = null;
  let unknown = 0;
  for (let i = 0; i < lines.length; i++) {
    let l = lines[i];
    if (l.length > MAX_LINE) {
      warnings.push({ line: i + 1, message: `line of ${l.length} characters: only its first ${MAX_LINE} were read` });
      l = l.slice(0, MAX_LINE);
    }
    const r = roleOn(l);
    if (r) {
      const key = `${r.pid} ${r.role}`;
      const seen = roleAt.get(key);
      if (seen) seen.count++;
      else if (roles.length < MAX_ROLES) {
        const x = { pid: r.pid, role: r.role, line: i + 1, count: 1 };
        roles.push(x);
        roleAt.set(key, x);
      }
    }
    if (dumpTimes.length < MAX_DUMP_TIMES) dumpTimes.push(...dumpTimesOn(l, i + 1));
    // kubectl describe pod: "  <name>:" opens a container; its "Reason: OOMKilled" and "Exit Code: 137" follow
    const c = /^ {2}([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?):\s*$/.exec(l);
    if (c) container = c[1];
    if (/^\s+Reason:\s+OOMKilled\s*$/.test(l)) {
      k8sReason = { line: i + 1, text: l.trim() };
      events.push({
        source: 'kubernetes',
        kind: 'oom',
        line: i + 1,
        text: l.trim(),
        pids: [],
        atMs: null,
        count: null,
        name: container,
      });
      continue;
    }
    if (k8sReason && /^\s+Finished:\s+(.*)$/.test(l)) {
      const ev = events[events.length - 1];
      if (ev.source === 'kubernetes' && ev.atMs === null) ev.atMs = kubeTime(l.replace(/^\s+Finished:\s+/, ''));
      continue;
    }
    let known = false;
    for (const p of PATTERNS) {
      const m = p.re.exec(l);
      if (!m) continue;
      const h = p.hit ? p.hit(m, l) : { pids: pidsIn(l, /\bpid=(\d{1,10})/g) };
      if (!h) continue;
      known = true;
      events.push({
        source: p.source === 'launcher' && torchrunLine(l) ? 'torchrun' : p.source,
        kind: h.kind ?? p.kind,
        line: i + 1,
        text: l.trim().slice(0, MAX_TEXT),
        pids: h.pids,
        atMs: lineTime(l),
        count: h.count ?? null,
        name:
          h.name !== undefined ? h.name : p.source === 'ray' ? (/\bname=([^,)\s]{1,100})/.exec(l)?.[1] ?? null) : null,
        ...(h.exitCode !== undefined ? { exitCode: h.exitCode } : {}),
        ...(h.signal !== undefined ? { signal: h.signal } : {}),
        ...(h.rssBytes !== undefined ? { rssBytes: h.rssBytes, jobBytes: h.jobBytes, limitBytes: h.limitBytes } : {}),
      });
      break;
    }
    if (known || RE_KERNEL.test(l) || !RE_KILL_WORDS.test(l)) continue;
    const pids = numbersOn(l);
    if (pids.length === 0) continue;
    if (++unknown > MAX_UNKNOWN) {
      if (unknown === MAX_UNKNOWN + 1)
        warnings.push({
          line: i + 1,
          message: `more than ${MAX_UNKNOWN} lines with kill or signal words in a format not known: the rest are not read as evidence`,
        });
      continue;
    }
    events.push({
      source: 'unknown',
      kind: 'unknown',
      line: i + 1,
      text: l.trim().slice(0, MAX_TEXT),
      pids,
      atMs: lineTime(l),
      count: null,
      name: null,
    });
  }
  if (events.length === 0 && roles.length === 0 && dumpTimes.length === 0) return null;
  return { events, roles, dumpTimes, warnings };
}

/** kubectl prints "Mon, 01 Dec 2026 20:37:30 +0000". */
function kubeTime(s: string): number | null {
  const m = /(\d{1,2}) (\w{3}) (\d{4}) (\d\d):(\d\d):(\d\d) ([+-]\d{4})/.exec(s);
  if (!m) return lineTime(s);
  const mon = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'].indexOf(m[2]);
  if (mon < 0) return null;
  const z = m[7];
  const off = (z[0] === '-' ? -1 : 1) * (Number(z.slice(1, 3)) * 60 + Number(z.slice(3))) * 60000;
  return Date.UTC(Number(m[3]), mon, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6])) - off;
}

function obj(v: unknown): Record<string, unknown> | null {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

/** A pod (kubectl get pod -o json) or a List of pods: each container terminated by OOMKilled or exit 137. */
function parsePodJson(text: string): JobLog | null {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return {
      events: [],
      roles: [],
      dumpTimes: [],
      warnings: [{ line: 1, message: `not valid JSON (${e instanceof Error ? e.message : String(e)}): no pod read` }],
    };
  }
  const root = obj(doc);
  if (!root) return null;
  const pods = Array.isArray(root.items) ? root.items.map(obj).filter((x) => x !== null) : [root];
  const lines = text.split('\n');
  const events: JobLogEvent[] = [];
  for (const pod of pods) {
    const status = obj(pod.status);
    const statuses = Array.isArray(status?.containerStatuses) ? status.containerStatuses : [];
    for (const cs of statuses.map(obj)) {
      if (!cs) continue;
      for (const which of ['state', 'lastState'] as const) {
        const t = obj(obj(cs[which])?.terminated);
        if (!t) continue;
        const reason = typeof t.reason === 'string' ? t.reason : null;
        const code = typeof t.exitCode === 'number' ? t.exitCode : null;
        if (reason !== 'OOMKilled' && code !== 137) continue;
        const name = typeof cs.name === 'string' ? cs.name.slice(0, 253) : null;
        const at = lines.findIndex((l) => l.includes(reason === 'OOMKilled' ? '"OOMKilled"' : '137'));
        events.push({
          source: 'kubernetes',
          kind: reason === 'OOMKilled' ? 'oom' : 'signal',
          line: at + 1,
          text: `container ${name ?? '?'} ${which}.terminated: reason ${reason ?? '?'}, exitCode ${code ?? '?'}`,
          pids: [],
          atMs: typeof t.finishedAt === 'string' ? lineTime(t.finishedAt) : null,
          count: null,
          name,
        });
      }
    }
  }
  return events.length > 0 ? { events, roles: [], dumpTimes: [], warnings: [] } : null;
}
