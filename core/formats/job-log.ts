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
//  - a shell's job status: `… line L: PID Killed   command` (bash, as SLURM batch output shows it).
// Known by content. Each event keeps its file line and text (bounded) as evidence.

export type JobLogSource = 'ray' | 'kubernetes' | 'slurm' | 'pytorch' | 'shell';

export interface JobLogEvent {
  source: JobLogSource;
  /** 1-based line (JSON: the line holding the terminated state's reason) */
  line: number;
  text: string;
  /** the process it names, when it names one */
  pids: number[];
  /** oom: says memory was the reason; signal: killed, the reason not given */
  kind: 'oom' | 'signal';
  /** a wall-clock time on the line or in the object (ISO or `YYYY-MM-DD HH:MM:SS`), ms since the epoch */
  atMs: number | null;
  /** the number of kills the line reports (SLURM's count, Ray's summary), when it reports one */
  count: number | null;
  /** Kubernetes: container name; Ray: task name */
  name: string | null;
}

export interface JobLog {
  events: JobLogEvent[];
  warnings: { line: number; message: string }[];
}

const MAX_TEXT = 300;
const MAX_LINE = 16384;

const RE_TIME = /(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(Z|[+-]\d\d:?\d\d)?/;

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

const PATTERNS: {
  source: JobLogSource;
  kind: 'oom' | 'signal';
  re: RegExp;
  pids?: (m: RegExpExecArray, line: string) => number[];
  count?: (m: RegExpExecArray) => number;
}[] = [
  {
    source: 'ray',
    kind: 'oom',
    re: /OutOfMemoryError: Task was killed due to the node running low on memory/,
    pids: (_m, l) => pidsIn(l, /\bpid=(\d{1,10})/g),
  },
  {
    source: 'ray',
    kind: 'oom',
    re: /Ray killed this worker \(ID: [0-9a-f]+\)/,
    pids: (_m, l) => pidsIn(l, /\bpid=(\d{1,10})/g),
  },
  {
    source: 'ray',
    kind: 'oom',
    re: /(\d{1,9}) Workers? \(tasks \/ actors\) killed due to memory pressure \(OOM\)/,
    count: (m) => Number(m[1]),
  },
  {
    source: 'slurm',
    kind: 'oom',
    re: /Detected (\d{1,9}) oom[-_]kill events?(?:\(s\))? in (?:StepId=|step )?\S+/,
    count: (m) => Number(m[1]),
  },
  { source: 'slurm', kind: 'oom', re: /srun: error: \S+: tasks? [\d,-]+: Out Of Memory/ },
  {
    source: 'pytorch',
    kind: 'signal',
    re: /DataLoader worker \(pid (\d{1,10})\) is killed by signal: (\w[\w ]{0,30})/,
    pids: (m) => [Number(m[1])],
  },
  {
    source: 'pytorch',
    kind: 'signal',
    re: /DataLoader worker \(pid\(s\) ([\d, ]{1,400})\) exited unexpectedly/,
    pids: (m) => m[1].split(/[, ]+/).filter(Boolean).map(Number),
  },
  { source: 'shell', kind: 'signal', re: /(?:^|: )(\d{1,10}) Killed\s+\S/, pids: (m) => [Number(m[1])] },
];

function pidsIn(line: string, re: RegExp): number[] {
  return [...line.matchAll(re)].map((m) => Number(m[1]));
}

/** True when the text holds a line this reader knows (by content). */
export function looksLikeJobLog(text: string): boolean {
  return (
    PATTERNS.some((p) => p.re.test(text.slice(0, 4 * 1024 * 1024))) ||
    /Reason:\s+OOMKilled|"reason"\s*:\s*"OOMKilled"/.test(text)
  );
}

/** Reads the kill lines of a text log; the Kubernetes forms too (describe text, pod JSON). */
export function parseJobLog(text: string): JobLog | null {
  if (!looksLikeJobLog(text)) return null;
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{')) {
    const j = parsePodJson(text);
    if (j) return j;
  }
  const events: JobLogEvent[] = [];
  const warnings: JobLog['warnings'] = [];
  const lines = text.split(/\r?\n/);
  let container: string | null = null;
  let k8sReason: { line: number; text: string } | null = null;
  for (let i = 0; i < lines.length; i++) {
    let l = lines[i];
    if (l.length > MAX_LINE) {
      warnings.push({ line: i + 1, message: `line of ${l.length} characters: only its first ${MAX_LINE} were read` });
      l = l.slice(0, MAX_LINE);
    }
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
    for (const p of PATTERNS) {
      const m = p.re.exec(l);
      if (!m) continue;
      events.push({
        source: p.source,
        kind: p.kind,
        line: i + 1,
        text: l.trim().slice(0, MAX_TEXT),
        pids: p.pids ? p.pids(m, l) : [],
        atMs: lineTime(l),
        count: p.count ? p.count(m) : null,
        name: p.source === 'ray' ? (/\bname=([^,)\s]{1,100})/.exec(l)?.[1] ?? null) : null,
      });
      break;
    }
  }
  return { events, warnings };
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
  return events.length > 0 ? { events, warnings: [] } : null;
}
