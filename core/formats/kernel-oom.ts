// Reader of the kernel's OOM-killer report in a kernel log, in the forms users copy: `dmesg` (seconds since
// boot), `dmesg -T` (wall clock, the machine's local time), `journalctl -k` (short / short-precise / short-iso)
// and syslog's `kern.log` (which may keep the `[seconds]` prefix). Detected by content, not by name.
// The lines come from the kernel's mm/oom_kill.c (dump_header: "<comm> invoked oom-killer: gfp_mask=…,
// order=…, oom_score_adj=…", dump_tasks' table, dump_oom_victim's "oom-kill:constraint=…,oom_memcg=…,
// task_memcg=…,task=…,pid=…,uid=…", __oom_kill_process's "<message>: Killed process P (comm) total-vm:…kB,
// anon-rss:…kB, file-rss:…kB, shmem-rss:…kB, UID:… pgtables:…kB oom_score_adj:…", with message "Memory cgroup
// out of memory" or "Out of memory") and mm/memcontrol.c (mem_cgroup_print_oom_meminfo: "memory: usage …kB,
// limit …kB, failcnt …" and the "Memory cgroup stats for <path>:" block). Older kernels print fewer fields;
// every field is optional except the pid of the kill.

/**
 * How a line's time is known: seconds since boot (`dmesg`), or a wall clock (`dmesg -T`, journal, syslog);
 * `prefixed`: the kernel's message behind a prefix of no known form (its time from an ISO time in the prefix).
 */
export type KernelLogForm = 'dmesg' | 'dmesg-T' | 'journal' | 'journal-iso' | 'syslog' | 'prefixed';

export interface KernelLineTime {
  /** seconds since boot (the kernel's printk clock), when the line has a `[ s.us ]` prefix */
  bootS: number | null;
  /** wall clock, ms since the epoch (a local time without a zone is read as UTC: see `LocalTimeNote`) */
  wallMs: number | null;
}

export interface OomTask {
  pid: number;
  name: string;
  rssPages: number | null;
  oomScoreAdj: number | null;
}

export interface OomKill extends KernelLineTime {
  /** 1-based line of the "Killed process" line */
  line: number;
  text: string;
  /** memcg: "Memory cgroup out of memory"; global: "Out of memory" (the whole machine) */
  scope: 'memcg' | 'global';
  pid: number;
  comm: string;
  totalVmBytes: number | null;
  anonRssBytes: number | null;
  fileRssBytes: number | null;
  shmemRssBytes: number | null;
  oomScoreAdj: number | null;
  /** the process whose allocation invoked the killer (dump_header), when the report's start was read */
  invokedBy: {
    comm: string;
    pid: number | null;
    gfpMask: string | null;
    oomScoreAdj: number | null;
    line: number;
  } | null;
  /** the cgroup's usage and limit at the kill (mem_cgroup_print_oom_meminfo) */
  memcg: { usageBytes: number; limitBytes: number; failcnt: number | null; line: number } | null;
  constraint: string | null;
  oomMemcg: string | null;
  taskMemcg: string | null;
  /** the "Memory cgroup stats" block, bytes (keys as printed) */
  stats: Record<string, number>;
  tasks: OomTask[];
}

export interface KernelLogWarning {
  line: number;
  message: string;
}

export interface KernelOomLog {
  form: KernelLogForm;
  kills: OomKill[];
  /** "oom_reaper: reaped process P" lines: the kill's memory was given back */
  reaped: { pid: number; line: number }[];
  warnings: KernelLogWarning[];
}

export const LocalTimeNote =
  'dmesg -T, journal and syslog times are the local time of the machine that wrote them; read as UTC';

/** Longer lines are not the kernel's (printk lines are at most 1 KiB): cut and named in a warning. */
const MAX_LINE = 4096;
const MAX_COMM = 64;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const RE_DMESG = /^\[\s*(\d{1,10}\.\d{1,9})\]\s?(.*)$/;
const RE_DMESG_T = /^\[(?:\w{3} )?(\w{3}) +(\d{1,2}) (\d\d):(\d\d):(\d\d) (\d{4})\]\s?(.*)$/;
const RE_JOURNAL = /^(\w{3}) +(\d{1,2}) (\d\d):(\d\d):(\d\d)(\.\d+)? \S+ kernel: (.*)$/;
const RE_ISO = /^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(\.\d+)?(Z|[+-]\d\d:?\d\d)? \S+ kernel: (.*)$/;

interface Parsed extends KernelLineTime {
  form: KernelLogForm;
  msg: string;
}

function utc(
  year: number,
  month: number,
  day: number,
  h: string,
  m: string,
  s: string,
  frac: string | undefined,
): number {
  return Date.UTC(year, month, day, Number(h), Number(m), Number(s)) + (frac ? Number(frac) * 1000 : 0);
}

/** Splits a line into its time and the kernel's message; null for a line of no known form. */
function splitLine(raw: string, year: number): Parsed | null {
  let m = RE_DMESG.exec(raw);
  if (m) return { form: 'dmesg', bootS: Number(m[1]), wallMs: null, msg: m[2] };
  m = RE_DMESG_T.exec(raw);
  if (m) {
    const mon = MONTHS.indexOf(m[1]);
    if (mon < 0) return null;
    return {
      form: 'dmesg-T',
      bootS: null,
      wallMs: utc(Number(m[6]), mon, Number(m[2]), m[3], m[4], m[5], undefined),
      msg: m[7],
    };
  }
  m = RE_ISO.exec(raw);
  if (m) {
    let ms = utc(Number(m[1]), Number(m[2]) - 1, Number(m[3]), m[4], m[5], m[6], m[7]);
    if (m[8] && m[8] !== 'Z') {
      const z = /([+-])(\d\d):?(\d\d)/.exec(m[8])!;
      ms -= (z[1] === '-' ? -1 : 1) * (Number(z[2]) * 60 + Number(z[3])) * 60000;
    }
    return withBoot({ form: 'journal-iso', bootS: null, wallMs: ms, msg: m[9] });
  }
  m = RE_JOURNAL.exec(raw);
  if (m) {
    const mon = MONTHS.indexOf(m[1]);
    if (mon < 0) return null;
    return withBoot({
      form: 'journal',
      bootS: null,
      wallMs: utc(year, mon, Number(m[2]), m[3], m[4], m[5], m[6]),
      msg: m[7],
    });
  }
  return prefixed(raw);
}

// The kernel's messages an OOM report is made of (mm/oom_kill.c, mm/memcontrol.c), found anywhere on a line
const RE_MESSAGE =
  /(?:\S{1,64} invoked oom-killer: |CPU: \d+ (?:UID: \d+ )?PID: \d|memory: usage \d|Memory cgroup stats for |Tasks state \(memory values in pages\):|oom-kill:constraint=|(?:Memory cgroup out of memory|Out of memory(?: \([a-z_]+\))?): Kill(?:ed)? process \d|Killed process \d|oom_reaper: reaped process \d)/;

/**
 * A kernel line behind a prefix of no known form (a node's name `[node-b] `, a log shipper's fields, a container
 * runtime's time): the dmesg `[seconds]` anywhere on the line, else syslog's `kernel: `, else the start of a
 * report message; the prefix's own time, when it has one, is the wall clock.
 */
function prefixed(raw: string): Parsed | null {
  const boot = /\[\s*(\d{1,10}\.\d{1,9})\]\s?(.*)$/.exec(raw);
  if (boot) {
    return { form: 'dmesg', bootS: Number(boot[1]), wallMs: prefixTime(raw.slice(0, boot.index)), msg: boot[2] };
  }
  const k = / kernel: (.*)$/.exec(raw);
  if (k) return { form: 'syslog', bootS: null, wallMs: prefixTime(raw.slice(0, k.index)), msg: k[1] };
  const m = RE_MESSAGE.exec(raw);
  if (m) return { form: 'prefixed', bootS: null, wallMs: prefixTime(raw.slice(0, m.index)), msg: raw.slice(m.index) };
  return null;
}

/** An ISO time in a line's prefix (UTC without a zone). */
function prefixTime(pre: string): number | null {
  const m = /(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(\.\d+)?(Z|[+-]\d\d:?\d\d)?/.exec(pre);
  if (!m) return null;
  let ms = utc(Number(m[1]), Number(m[2]) - 1, Number(m[3]), m[4], m[5], m[6], m[7]);
  if (m[8] && m[8] !== 'Z') {
    const z = /([+-])(\d\d):?(\d\d)/.exec(m[8])!;
    ms -= (z[1] === '-' ? -1 : 1) * (Number(z[2]) * 60 + Number(z[3])) * 60000;
  }
  return Number.isFinite(ms) ? ms : null;
}

/** kern.log keeps the kernel's `[seconds]` after syslog's prefix: both clocks then. */
function withBoot(p: Parsed): Parsed {
  const m = RE_DMESG.exec(p.msg);
  return m ? { ...p, form: p.form === 'journal' ? 'syslog' : p.form, bootS: Number(m[1]), msg: m[2] } : p;
}

/** True when the text holds a kernel OOM report line (by content). */
export function looksLikeKernelOomLog(text: string): boolean {
  return /invoked oom-killer: |Killed process \d{1,10} \(|oom-kill:constraint=/.test(text);
}

function kb(fields: Map<string, string>, key: string): number | null {
  const v = fields.get(key);
  if (v === undefined) return null;
  const m = /^(\d{1,15})kB$/.exec(v);
  return m ? Number(m[1]) * 1024 : null;
}

function int(v: string | undefined): number | null {
  if (v === undefined || !/^-?\d{1,15}$/.test(v)) return null;
  return Number(v);
}

interface Pending {
  invokedBy: OomKill['invokedBy'];
  memcg: OomKill['memcg'];
  oomKill: Map<string, string> | null;
  stats: Record<string, number>;
  inStats: boolean;
  taskCols: string[] | null;
  tasks: OomTask[];
}

function fresh(): Pending {
  return { invokedBy: null, memcg: null, oomKill: null, stats: {}, inStats: false, taskCols: null, tasks: [] };
}

/**
 * Reads every OOM report in a kernel log. `year` places syslog/journal lines, which carry none (the dumps'
 * year). Lines of other forms or other messages are skipped; a cut or malformed report line is a warning.
 */
export function parseKernelOomLog(text: string, year: number = new Date().getUTCFullYear()): KernelOomLog | null {
  if (!looksLikeKernelOomLog(text)) return null;
  const warnings: KernelLogWarning[] = [];
  const kills: OomKill[] = [];
  const reaped: KernelOomLog['reaped'] = [];
  const forms = new Map<KernelLogForm, number>();
  let cur = fresh();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const ln = i + 1;
    let raw = lines[i];
    if (raw.length > MAX_LINE) {
      warnings.push({
        line: ln,
        message: `line of ${raw.length} characters (longer than any kernel line): cut at ${MAX_LINE}`,
      });
      raw = raw.slice(0, MAX_LINE);
    }
    const p = splitLine(raw, year);
    if (!p) continue;
    forms.set(p.form, (forms.get(p.form) ?? 0) + 1);
    const msg = p.msg;
    let m = /^(.{1,64}?) invoked oom-killer: (.*)$/.exec(msg);
    if (m) {
      if (cur.invokedBy)
        warnings.push({
          line: cur.invokedBy.line,
          message: 'an OOM report without its "Killed process" line (cut log?): no kill read from it',
        });
      cur = fresh();
      const g = /gfp_mask=(0x[0-9a-f]+)/.exec(m[2]);
      // the kernel bounds it to -1000..1000 (OOM_SCORE_ADJ_MIN/MAX); more digits are damage, not a figure
      const adj = /oom_score_adj=(-?\d{1,4})(?!\d)/.exec(m[2]);
      cur.invokedBy = {
        comm: m[1].slice(0, MAX_COMM),
        pid: null,
        gfpMask: g ? g[1] : null,
        oomScoreAdj: adj && Math.abs(Number(adj[1])) <= 1000 ? Number(adj[1]) : null,
        line: ln,
      };
      continue;
    }
    m = /^CPU: \d+ (?:UID: \d+ )?PID: (\d{1,10}) Comm: /.exec(msg);
    if (m && cur.invokedBy && cur.invokedBy.pid === null) {
      cur.invokedBy.pid = Number(m[1]);
      continue;
    }
    m = /^memory: usage (\d{1,15})kB, limit (\d{1,15})kB, failcnt (\d{1,15})/.exec(msg);
    if (m) {
      cur.memcg = { usageBytes: Number(m[1]) * 1024, limitBytes: Number(m[2]) * 1024, failcnt: Number(m[3]), line: ln };
      continue;
    }
    if (/^Memory cgroup stats for /.test(msg)) {
      cur.inStats = true;
      continue;
    }
    if (/^Tasks state \(memory values in pages\):/.test(msg)) {
      cur.inStats = false;
      continue;
    }
    if (cur.inStats) {
      m = /^([a-z_]{1,40}) (\d{1,19})$/.exec(msg);
      if (m) {
        cur.stats[m[1]] = Number(m[2]);
        continue;
      }
      cur.inStats = false;
    }
    if (/^\[\s*pid\s*\]/.test(msg)) {
      cur.taskCols = msg
        .replace(/^\[\s*pid\s*\]/, 'pid')
        .trim()
        .split(/\s+/);
      continue;
    }
    m = /^\[\s*(\d{1,10})\]\s+(.*)$/.exec(msg);
    if (m && cur.taskCols) {
      const vals = m[2].trim().split(/\s+/);
      const cols = cur.taskCols.slice(1);
      // name is the last column and may hold spaces; the rest are numbers
      if (vals.length >= cols.length) {
        const at = (c: string): number | null => {
          const k = cols.indexOf(c);
          return k >= 0 && k < cols.length - 1 ? int(vals[k]) : null;
        };
        cur.tasks.push({
          pid: Number(m[1]),
          name: vals
            .slice(cols.length - 1)
            .join(' ')
            .slice(0, MAX_COMM),
          rssPages: at('rss'),
          oomScoreAdj: at('oom_score_adj'),
        });
      } else warnings.push({ line: ln, message: 'a task-table row with fewer columns than its header: skipped' });
      continue;
    }
    if (msg.startsWith('oom-kill:')) {
      cur.oomKill = new Map(
        msg
          .slice('oom-kill:'.length)
          .split(',')
          .map((kv) => {
            const e = kv.indexOf('=');
            return [kv.slice(0, e), kv.slice(e + 1)] as [string, string];
          }),
      );
      continue;
    }
    // older kernels (4.x) print "Killed process" on a line of its own, after "…: Kill process N (comm) score …"
    m = /^(?:(Memory cgroup out of memory|Out of memory(?: \([a-z_]+\))?): )?Killed process (\d{1,10}) \((.*)$/.exec(
      msg,
    );
    if (m) {
      // comm is at most 15 bytes but may hold ") " itself: the fields start at the last ") total-vm:"
      const rest = m[3];
      const close = rest.lastIndexOf(') total-vm:') >= 0 ? rest.lastIndexOf(') total-vm:') : rest.indexOf(')');
      if (close < 0) {
        warnings.push({
          line: ln,
          message: `"Killed process ${m[2]}" line cut before the process name ended: the kill is kept, without sizes`,
        });
      }
      const comm = (close >= 0 ? rest.slice(0, close) : rest).slice(0, MAX_COMM);
      const fields = new Map<string, string>();
      const tail = close >= 0 ? rest.slice(close + 1) : '';
      for (const f of tail.matchAll(/([a-z_-]+):(\S+?)(?:,|\s|$)/gi)) fields.set(f[1], f[2]);
      if (close >= 0 && !fields.has('oom_score_adj'))
        warnings.push({
          line: ln,
          message: `"Killed process ${m[2]}" line without its oom_score_adj (cut, or an older kernel)`,
        });
      const ok = cur.oomKill;
      const okPid = ok ? int(ok.get('pid')) : null;
      if (ok && okPid !== null && okPid !== Number(m[2]))
        warnings.push({
          line: ln,
          message: `the oom-kill line names pid ${okPid} but the kill names ${m[2]}: its cgroup fields are not used`,
        });
      const useOk = ok && okPid === Number(m[2]) ? ok : null;
      if (!cur.invokedBy)
        warnings.push({
          line: ln,
          message: `the kill of pid ${m[2]} without the start of its report (cut log): no invoking process, usage or limit`,
        });
      kills.push({
        line: ln,
        text: msg.slice(0, 512),
        bootS: p.bootS,
        wallMs: p.wallMs,
        scope: m[1]
          ? m[1].startsWith('Memory cgroup')
            ? 'memcg'
            : 'global'
          : cur.memcg || cur.oomKill?.get('constraint') === 'CONSTRAINT_MEMCG'
            ? 'memcg'
            : 'global',
        pid: Number(m[2]),
        comm,
        totalVmBytes: kb(fields, 'total-vm'),
        anonRssBytes: kb(fields, 'anon-rss'),
        fileRssBytes: kb(fields, 'file-rss'),
        shmemRssBytes: kb(fields, 'shmem-rss'),
        oomScoreAdj: int(fields.get('oom_score_adj')),
        invokedBy: cur.invokedBy,
        memcg: cur.memcg,
        constraint: useOk?.get('constraint') ?? null,
        oomMemcg: useOk?.get('oom_memcg') ?? null,
        taskMemcg: useOk?.get('task_memcg') ?? null,
        stats: cur.stats,
        tasks: cur.tasks,
      });
      cur = fresh();
      continue;
    }
    m = /^oom_reaper: reaped process (\d{1,10}) /.exec(msg);
    if (m) reaped.push({ pid: Number(m[1]), line: ln });
  }
  if (cur.invokedBy)
    warnings.push({
      line: cur.invokedBy.line,
      message: 'the log ends inside an OOM report (cut?): no kill read from it',
    });
  const form = [...forms.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'dmesg';
  return { form, kills, reaped, warnings };
}
