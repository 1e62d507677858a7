-- heaplens job-wide suspects: every (job, process, stack) series with its growth pattern and score, ranked across
-- the job as `heaplens growth` ranks them (core/stats/suspects.ts rankJob over core/stats/patterns.ts classifySeries),
-- and the job-wide group of the same stack (stack_key) across processes.
-- Reads `snapshots` (job, process, snapshot, complete, has_accum_cells, trigger, live_bytes), `cells` (job, process,
-- snapshot, stack_id, bytes, var_bytes, accum_bytes), `stacks` (job, process, stack_id, stack_key) and `processes`
-- (job, process, key, python_frames_json).
-- Standard SQL only (CTEs, window functions, joins, CASE, aggregates; every fractional constant a DOUBLE literal
-- with an exponent, every division guarded): it runs unchanged on DuckDB, Spark SQL and Trino.
-- A series is read over its points (point j = 0..n-1: pts below), 0 bytes where the stack is
-- absent. z and late_z are NULL where rankJob gives +/-Infinity (an exact, non-zero change). Per-second slopes
-- are left out (they need the times in snapshots.context_json).
WITH
-- the complete snapshots of each process, with the one before each and the process's last snapshot
cpts AS (
  SELECT s.job, s.process, s.snapshot, s.has_accum_cells, s.trigger, s.live_bytes,
         LAG(s.live_bytes) OVER (PARTITION BY s.job, s.process ORDER BY s.snapshot) AS prev_bytes,
         l.last_snapshot, pr.python_frames_json
  FROM snapshots s
  JOIN (SELECT job, process, MAX(snapshot) AS last_snapshot FROM snapshots GROUP BY job, process) l
    ON l.job = s.job AND l.process = s.process
  LEFT JOIN processes pr ON pr.job = s.job AND pr.process = s.process
  WHERE s.complete
),
-- the series' points, numbered 0..n-1: the complete snapshots (a cut dump's records are partial) less an exit dump
-- written after Python's teardown (core/model/series-end.ts: the process's last dump, a final one, of a process with
-- Python frames, below a quarter of the complete dump before it and at least 4 MiB lower)
pts AS (
  SELECT job, process, snapshot,
         ROW_NUMBER() OVER (PARTITION BY job, process ORDER BY snapshot) - 1 AS j,
         COUNT(*) OVER (PARTITION BY job, process) AS n,
         CASE WHEN has_accum_cells THEN 1 ELSE 0 END AS has_acc
  FROM cpts
  WHERE NOT (snapshot = last_snapshot AND trigger = 'final' AND python_frames_json IS NOT NULL
             AND prev_bytes IS NOT NULL AND live_bytes < 2.5e-1 * prev_bytes
             AND prev_bytes - live_bytes >= 4194304e0)
),
-- one row per process: pk numbers the processes (a series is sid = pk * 2^32 + stack_id); accumulated bytes count
-- only when every complete snapshot of the process has them (prof_accum on throughout)
procs AS (
  SELECT job, process, all_acc, ROW_NUMBER() OVER (ORDER BY job, process) AS pk
  FROM (SELECT job, process, MIN(has_acc) AS all_acc FROM pts GROUP BY job, process) u
),
ppts AS (
  SELECT p.job, p.process, p.snapshot, p.j, p.n, r.pk
  FROM pts p
  JOIN procs r ON r.job = p.job AND r.process = p.process
),
pcells AS (
  SELECT p.pk * 4294967296 + c.stack_id AS sid, p.pk, p.j, c.bytes AS y, c.var_bytes AS v, c.accum_bytes AS a
  FROM cells c
  JOIN ppts p ON p.job = c.job AND p.process = c.process AND p.snapshot = c.snapshot
),
-- every stack present in a complete snapshot is a series
series AS (
  SELECT u.sid, u.sid - r.pk * 4294967296 AS stack_id, r.pk, r.job, r.process, r.all_acc
  FROM (SELECT DISTINCT sid, pk FROM pcells) u
  JOIN procs r ON r.pk = u.pk
),
-- every series at every point: a stack absent from a snapshot has 0 bytes and 0 variance there
grid AS (
  SELECT s.sid, p.j, p.n,
         COALESCE(c.y, 0e0) AS y, COALESCE(c.v, 0e0) AS v, COALESCE(c.a, 0e0) AS a
  FROM series s
  JOIN ppts p ON p.pk = s.pk
  LEFT JOIN pcells c ON c.sid = s.sid AND c.j = p.j
),
-- the change from the previous point
gd AS (
  SELECT sid, j, n, y, v, a, y - LAG(y, 1) OVER (PARTITION BY sid ORDER BY j) AS d
  FROM grid
),
-- zForPairs(m): the Bonferroni z over the m(m-1)/2 pairs of m points, max(2, Phi^-1(1 - 0.05/(m(m-1)))), Phi^-1 by
-- Acklam's approximation exactly as core/stats/patterns.ts normalQuantile computes it (1 - p > 1 - 0.02425 for
-- every m >= 3: the lower-tail branch, negated); 2 for m <= 2
zq AS (
  SELECT m,
         CASE WHEN m <= 2 THEN 2e0
              ELSE GREATEST(2e0, -((((((-7.784894002430293e-3 * q - 3.223964580411365e-1) * q - 2.400758277161838e0) * q
                                      - 2.549732539343734e0) * q + 4.374664141464968e0) * q + 2.938163982698783e0)
                                   / ((((7.784695709041462e-3 * q + 3.224671290700398e-1) * q + 2.445134137142996e0) * q
                                      + 3.754408661907416e0) * q + 1e0)))
         END AS z
  FROM (SELECT m, SQRT(-2e0 * LN(1e0 - (1e0 - 5e-2 / (mm * (mm - 1))))) AS q
        FROM (SELECT DISTINCT j + 1 AS m, GREATEST(j + 1, 3) AS mm FROM pts) u) w
),
-- Theil-Sen over m points (m <= 24, THEIL_SEN_MAX_POINTS): np = m(m-1)/2 pairwise slopes, the median's ranks
-- (0-based, of the slopes sorted ascending) and Sen's 95 % bounds' ranks floor((np - C)/2), ceil((np + C)/2),
-- C = 1.959964 sqrt(m(m-1)(2m+5)/18)
mtab AS (
  SELECT m, np,
         CASE WHEN np = 2 * half THEN half - 1 ELSE half END AS k_med_lo,
         half AS k_med_hi,
         GREATEST(0, CAST(FLOOR((np - c) / 2) AS INTEGER)) AS k_lo,
         LEAST(np - 1, CAST(CEIL((np + c) / 2) AS INTEGER)) AS k_hi
  FROM (SELECT m, np, CAST(FLOOR(np / 2e0) AS INTEGER) AS half,
               1.959964e0 * SQRT(m * (m - 1) * (2 * m + 5) / 18e0) AS c
        FROM (SELECT DISTINCT j + 1 AS m, CAST((j + 1) * j / 2 AS INTEGER) AS np FROM pts WHERE j >= 1 AND j < 24) u) w
),
sb AS (
  SELECT sid, MAX(n) AS n,
         MAX(CASE WHEN j = 0 THEN y END) AS y0,
         MAX(CASE WHEN j = 0 THEN v END) AS v0,
         MAX(CASE WHEN j = n - 1 THEN y END) AS yl,
         MAX(CASE WHEN j = n - 1 THEN v END) AS vl,
         MAX(CASE WHEN j = n - 1 THEN a END) AS al,
         MIN(y) AS ymin,
         MAX(y) AS ymax
  FROM gd
  GROUP BY sid
),
base AS (
  SELECT sid, n, y0, v0, yl, vl, al, ymin, ymax,
         yl - y0 AS delta,
         SQRT(vl) AS sigma,
         SQRT(v0 + vl) AS sigma_delta,
         CASE WHEN ymax > 0 THEN ymax ELSE 0e0 END AS peak,
         2e-2 * (CASE WHEN ymax > 0 THEN ymax ELSE 0e0 END) AS fl,
         -- a shape to tell: 3 points or more, not flat by range (the whole range within the 2 % floor of the peak)
         CASE WHEN n >= 3 AND ymax > 0 AND ymax - ymin > 2e-2 * ymax THEN 1 ELSE 0 END AS shaped
  FROM sb
),
-- first index of the range's ends (rangeOf); whether the series ever falls / rises between neighbours by more
-- than the floor (monotone)
sc AS (
  SELECT g.sid,
         MIN(CASE WHEN g.y = b.ymin THEN g.j END) AS lo_j,
         MIN(CASE WHEN g.y = b.ymax THEN g.j END) AS hi_j,
         MAX(CASE WHEN g.d < -b.fl THEN 1 ELSE 0 END) AS falls,
         MAX(CASE WHEN g.d > b.fl THEN 1 ELSE 0 END) AS rises
  FROM gd g
  JOIN base b ON b.sid = g.sid
  WHERE b.shaped = 1
  GROUP BY g.sid
),
-- the whole range within noise (thrZ of its ends at the Bonferroni z of the n points)
wm AS (
  SELECT b.sid, b.n, c.falls, c.rises,
         CASE WHEN b.ymax - b.ymin <= GREATEST(zn.z * SQRT(2 * GREATEST(e.v_hi, e.v_lo)), b.fl) THEN 1 ELSE 0 END AS within_model
  FROM base b
  JOIN sc c ON c.sid = b.sid
  JOIN (SELECT g.sid, MAX(CASE WHEN g.j = c.lo_j THEN g.v END) AS v_lo, MAX(CASE WHEN g.j = c.hi_j THEN g.v END) AS v_hi
        FROM gd g JOIN sc c ON c.sid = g.sid
        GROUP BY g.sid) e ON e.sid = b.sid
  JOIN zq zn ON zn.m = b.n
),
-- Theil-Sen over the whole series where it can matter: beyond noise (its slope is the series' slope), or within
-- noise and never moving against the trend by more than the floor (Sen's interval then tells a consistent trend
-- from flat). Thinned to 24 evenly spaced points: index round(k(n-1)/23), k = 0..23 (a point
-- t is one of them when rounding back from k = round(t*23/(n-1)) gives t)
tp0 AS (
  SELECT g.sid, g.j AS x, g.y
  FROM gd g
  JOIN wm b ON b.sid = g.sid
  WHERE (b.within_model = 0 OR b.falls = 0 OR b.rises = 0)
    AND (b.n <= 24 OR FLOOR(FLOOR(g.j * 23e0 / (b.n - 1) + 5e-1) * (b.n - 1) / 23e0 + 5e-1) = g.j)
),
rk0 AS (
  SELECT p.sid, (q.y - p.y) / (q.x - p.x) AS s,
         ROW_NUMBER() OVER (PARTITION BY p.sid ORDER BY (q.y - p.y) / (q.x - p.x)) - 1 AS r
  FROM tp0 p
  JOIN tp0 q ON q.sid = p.sid AND q.x > p.x
),
ts0 AS (
  SELECT k.sid,
         CASE WHEN MAX(t.k_med_lo) = MAX(t.k_med_hi) THEN MAX(CASE WHEN k.r = t.k_med_hi THEN k.s END)
              ELSE (MAX(CASE WHEN k.r = t.k_med_lo THEN k.s END) + MAX(CASE WHEN k.r = t.k_med_hi THEN k.s END)) / 2
         END AS slope,
         MAX(CASE WHEN k.r = t.k_lo THEN k.s END) AS lo,
         MAX(CASE WHEN k.r = t.k_hi THEN k.s END) AS hi
  FROM rk0 k
  JOIN wm b ON b.sid = k.sid
  JOIN mtab t ON t.m = LEAST(b.n, 24)
  GROUP BY k.sid
),
-- flat: the whole range within noise and no consistent trend (Sen's interval excluding 0, never moving against it
-- by more than the floor); only the other series go on
moving AS (
  SELECT w.sid, t.slope AS ts_slope,
         CASE WHEN w.within_model = 1 AND t.lo > 0 AND w.falls = 0 THEN 1 ELSE 0 END AS trend_up,
         CASE WHEN w.within_model = 1 AND t.hi < 0 AND w.rises = 0 THEN 1 ELSE 0 END AS trend_down,
         w.within_model
  FROM wm w
  JOIN ts0 t ON t.sid = w.sid
  WHERE w.within_model = 0 OR (t.lo > 0 AND w.falls = 0) OR (t.hi < 0 AND w.rises = 0)
),
-- per point of a moving series: the running minimum and maximum (up to and including j) and the jumps over one and
-- two intervals starting at j
ga AS (
  SELECT g.sid, g.j, g.n, g.y, g.v, g.a, g.d,
         MIN(g.y) OVER (PARTITION BY g.sid ORDER BY g.j ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS pmin,
         MAX(g.y) OVER (PARTITION BY g.sid ORDER BY g.j ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS pmax,
         LEAD(g.y, 1) OVER (PARTITION BY g.sid ORDER BY g.j) - g.y AS jump1,
         LEAD(g.y, 2) OVER (PARTITION BY g.sid ORDER BY g.j) - g.y AS jump2
  FROM gd g
  JOIN moving m ON m.sid = g.sid
),
-- the largest rise (y_j minus the minimum before j; y - pmin is 0 where y is a new minimum, so including j changes
-- nothing), the largest fall, the largest jump over 1 or 2 intervals
sm AS (
  SELECT sid,
         CASE WHEN MAX(y - pmin) > 0 THEN MAX(y - pmin) ELSE 0e0 END AS up,
         CASE WHEN MAX(pmax - y) > 0 THEN MAX(pmax - y) ELSE 0e0 END AS down,
         CASE WHEN MAX(jump1) >= MAX(jump2) THEN MAX(jump1) ELSE MAX(jump2) END AS jump
  FROM ga
  GROUP BY sid
),
-- their ends: the first j where each is reached (a jump over 1 interval before one over 2, as the loop meets them)
sn AS (
  SELECT g.sid, m.up, m.down, m.jump,
         COALESCE(MIN(CASE WHEN m.up > 0 AND g.y - g.pmin = m.up THEN g.j END), 0) AS up_j,
         COALESCE(MIN(CASE WHEN m.down > 0 AND g.pmax - g.y = m.down THEN g.j END), 0) AS down_j,
         MIN(CASE WHEN g.jump1 = m.jump THEN g.j END) AS a1,
         MIN(CASE WHEN g.jump2 = m.jump THEN g.j END) AS a2
  FROM ga g
  JOIN sm m ON m.sid = g.sid
  GROUP BY g.sid, m.up, m.down, m.jump
),
sc2 AS (
  SELECT sid, up, down, jump, up_j, down_j,
         CASE WHEN a1 IS NOT NULL THEN a1 ELSE a2 END AS ja,
         CASE WHEN a1 IS NOT NULL THEN a1 + 1 ELSE a2 + 2 END AS jb
  FROM sn
),
-- values at those indexes; the start of the largest rise (fall) is the first minimum (maximum) before its end;
-- the step's flat sides are [0, ja] and [jb, n-1] (the jump runs from ja to jb)
sd AS (
  SELECT g.sid,
         MIN(CASE WHEN g.j < c.up_j THEN g.y END) AS up_from,
         MAX(CASE WHEN g.j = c.up_j THEN g.v END) AS v_up_j,
         MAX(CASE WHEN g.j < c.down_j THEN g.y END) AS down_from,
         MAX(CASE WHEN g.j = c.down_j THEN g.v END) AS v_down_j,
         MAX(CASE WHEN g.j = c.ja THEN g.v END) AS v_ja,
         MAX(CASE WHEN g.j = c.jb THEN g.v END) AS v_jb,
         MAX(CASE WHEN g.j = c.jb THEN g.a END) AS a_jb,
         MIN(CASE WHEN g.j <= c.ja THEN g.y END) AS before_min,
         MAX(CASE WHEN g.j <= c.ja THEN g.y END) AS before_max,
         MIN(CASE WHEN g.j >= c.jb THEN g.y END) AS after_min,
         MAX(CASE WHEN g.j >= c.jb THEN g.y END) AS after_max
  FROM ga g
  JOIN sc2 c ON c.sid = g.sid
  GROUP BY g.sid
),
se AS (
  SELECT g.sid,
         MIN(CASE WHEN g.j < c.up_j AND g.y = d.up_from THEN g.j END) AS up_i,
         MIN(CASE WHEN g.j < c.down_j AND g.y = d.down_from THEN g.j END) AS down_i,
         MIN(CASE WHEN g.j <= c.ja AND g.y = d.before_min THEN g.j END) AS before_lo,
         MIN(CASE WHEN g.j <= c.ja AND g.y = d.before_max THEN g.j END) AS before_hi,
         MIN(CASE WHEN g.j >= c.jb AND g.y = d.after_min THEN g.j END) AS after_lo,
         MIN(CASE WHEN g.j >= c.jb AND g.y = d.after_max THEN g.j END) AS after_hi
  FROM ga g
  JOIN sc2 c ON c.sid = g.sid
  JOIN sd d ON d.sid = g.sid
  GROUP BY g.sid
),
sf AS (
  SELECT g.sid,
         MAX(CASE WHEN g.j = COALESCE(e.up_i, 0) THEN g.v END) AS v_up_i,
         MAX(CASE WHEN g.j = COALESCE(e.down_i, 0) THEN g.v END) AS v_down_i,
         MAX(CASE WHEN g.j = e.before_lo THEN g.v END) AS v_before_lo,
         MAX(CASE WHEN g.j = e.before_hi THEN g.v END) AS v_before_hi,
         MAX(CASE WHEN g.j = e.after_lo THEN g.v END) AS v_after_lo,
         MAX(CASE WHEN g.j = e.after_hi THEN g.v END) AS v_after_hi
  FROM ga g
  JOIN se e ON e.sid = g.sid
  GROUP BY g.sid
),
-- the rules of core/stats/patterns.ts classifySeries (docs/analysis.md, "Growth patterns"): fluctuating, declining,
-- step, else plateau (steady when the late window still grows, below)
p3 AS (
  SELECT m.sid, b.n, b.fl, m.ts_slope, c.jb,
         CASE WHEN (up_beyond OR m.trend_up = 1) AND (down_beyond OR m.trend_down = 1)
                   AND LEAST(c.up, c.down) >= 3e-1 * GREATEST(c.up, c.down) THEN 'fluctuating'
              WHEN (down_beyond OR m.trend_down = 1) AND (NOT (up_beyond OR m.trend_up = 1) OR c.down > c.up) THEN 'declining'
              WHEN is_step = 1 THEN 'step'
              ELSE 'plateau'
         END AS pattern0
  FROM (
    SELECT c.sid,
           c.up > GREATEST(zn.z * SQRT(2 * GREATEST(f.v_up_i, d.v_up_j)), b.fl) AS up_beyond,
           c.down > GREATEST(zn.z * SQRT(2 * GREATEST(f.v_down_i, d.v_down_j)), b.fl) AS down_beyond,
           -- a step: flat (within noise) before the jump and for at least two points after it, the jump beyond
           -- noise, and (with accumulated bytes) not a buffer that went on allocating what it holds after the jump
           CASE WHEN d.before_max - d.before_min <= GREATEST(zb.z * SQRT(2 * GREATEST(f.v_before_hi, f.v_before_lo)), b.fl)
                     AND b.n - c.jb >= 2
                     AND d.after_max - d.after_min <= GREATEST(za.z * SQRT(2 * GREATEST(f.v_after_hi, f.v_after_lo)), b.fl)
                     AND c.jump > GREATEST(zn.z * SQRT(2 * GREATEST(d.v_ja, d.v_jb)), b.fl)
                     AND NOT (s.all_acc = 1 AND b.al - d.a_jb >= b.yl)
                THEN 1 ELSE 0 END AS is_step
    FROM sc2 c
    JOIN base b ON b.sid = c.sid
    JOIN series s ON s.sid = c.sid
    JOIN sd d ON d.sid = c.sid
    JOIN sf f ON f.sid = c.sid
    JOIN zq zn ON zn.m = b.n
    JOIN zq zb ON zb.m = c.ja + 1
    JOIN zq za ON za.m = b.n - c.jb
  ) x
  JOIN moving m ON m.sid = x.sid
  JOIN sc2 c ON c.sid = x.sid
  JOIN base b ON b.sid = x.sid
),
-- the late window: the last third, at least 3 points (after the jump for a step)
p4 AS (
  SELECT sid, n, fl, ts_slope, pattern0,
         CASE WHEN pattern0 = 'step' AND jb > n - lw THEN jb ELSE n - lw END AS ls
  FROM (SELECT p3.*, LEAST(n, GREATEST(3, CAST(CEIL(n / 3e0) AS INTEGER))) AS lw FROM p3) u
),
sg AS (
  SELECT g.sid,
         MAX(CASE WHEN g.j = p.ls THEN g.y END) AS y_ls,
         MAX(CASE WHEN g.j = p.ls THEN g.v END) AS v_ls,
         MAX(CASE WHEN g.j > p.ls AND g.d < -p.fl THEN 1 ELSE 0 END) AS late_falls
  FROM gd g
  JOIN p4 p ON p.sid = g.sid
  GROUP BY g.sid
),
tp1 AS (
  SELECT g.sid, g.j AS x, g.y
  FROM gd g
  JOIN p4 p ON p.sid = g.sid
  WHERE g.j >= p.ls
    AND (p.n - p.ls <= 24
         OR FLOOR(FLOOR((g.j - p.ls) * 23e0 / (p.n - p.ls - 1) + 5e-1) * (p.n - p.ls - 1) / 23e0 + 5e-1) = g.j - p.ls)
),
rk1 AS (
  SELECT p.sid, (q.y - p.y) / (q.x - p.x) AS s,
         ROW_NUMBER() OVER (PARTITION BY p.sid ORDER BY (q.y - p.y) / (q.x - p.x)) - 1 AS r
  FROM tp1 p
  JOIN tp1 q ON q.sid = p.sid AND q.x > p.x
),
ts1 AS (
  SELECT k.sid,
         CASE WHEN MAX(t.k_med_lo) = MAX(t.k_med_hi) THEN MAX(CASE WHEN k.r = t.k_med_hi THEN k.s END)
              ELSE (MAX(CASE WHEN k.r = t.k_med_lo THEN k.s END) + MAX(CASE WHEN k.r = t.k_med_hi THEN k.s END)) / 2
         END AS slope,
         CASE WHEN MAX(t.m) >= 3 THEN MAX(CASE WHEN k.r = t.k_lo THEN k.s END) END AS lo3
  FROM rk1 k
  JOIN p4 p ON p.sid = k.sid
  JOIN mtab t ON t.m = LEAST(p.n - p.ls, 24)
  GROUP BY k.sid
),
late AS (
  SELECT p.sid, p.pattern0, t.slope AS late_slope,
         p.n - 1 - p.ls AS span,
         b.yl - g.y_ls AS late_end,
         SQRT(2 * GREATEST(g.v_ls, b.vl)) AS late_sigma,
         CASE WHEN p.n - 1 - p.ls > 0
                   AND ((b.yl - g.y_ls > GREATEST(2 * SQRT(2 * GREATEST(g.v_ls, b.vl)), p.fl) AND t.slope > 0)
                        OR (COALESCE(t.lo3, t.slope) > 0 AND t.slope * (p.n - 1 - p.ls) > p.fl AND g.late_falls = 0))
              THEN 1 ELSE 0 END AS late_grows,
         COALESCE(t.lo3, t.slope) AS late_lo
  FROM p4 p
  JOIN base b ON b.sid = p.sid
  JOIN sg g ON g.sid = p.sid
  JOIN ts1 t ON t.sid = p.sid
),
verdicts AS (
  SELECT s.job, s.process, s.stack_id, b.n AS points,
         b.y0 AS first_bytes, b.yl AS last_bytes, b.peak AS peak_bytes, b.delta AS delta_bytes,
         b.sigma AS sigma_bytes, b.sigma_delta AS sigma_delta_bytes,
         CASE WHEN b.sigma_delta > 0 THEN b.delta / b.sigma_delta WHEN b.delta = 0 THEN 0e0 END AS z,
         CASE WHEN b.n < 3 THEN 'unknown' WHEN b.shaped = 0 THEN 'flat'
              WHEN l.sid IS NULL THEN 'flat'
              WHEN l.pattern0 = 'plateau' AND l.late_grows = 1 THEN 'steady'
              ELSE l.pattern0 END AS pattern,
         CASE WHEN b.n = 2 THEN 0e0 WHEN l.sid IS NULL THEN 0e0 ELSE p.ts_slope END AS slope_bytes_per_snapshot,
         CASE WHEN b.n = 2 THEN 0e0 WHEN l.sid IS NULL THEN 0e0 ELSE l.late_slope END AS late_slope_bytes_per_snapshot,
         CASE WHEN l.sid IS NULL THEN 0e0
              WHEN l.late_sigma > 0 THEN l.late_end / l.late_sigma
              WHEN l.late_end = 0 THEN 0e0 END AS late_z,
         CASE WHEN b.n = 2 THEN GREATEST(0e0, b.delta - 2 * b.sigma_delta)
              WHEN l.sid IS NULL OR l.pattern0 IN ('declining', 'step') OR l.late_grows = 0 THEN 0e0
              ELSE LEAST(GREATEST(0e0, b.delta - 2 * b.sigma_delta),
                         GREATEST(l.late_slope * l.span - 2 * l.late_sigma, l.late_lo * l.span, 0e0) * (b.n - 1) / l.span)
         END AS score
  FROM base b
  JOIN series s ON s.sid = b.sid
  LEFT JOIN late l ON l.sid = b.sid
  LEFT JOIN p4 p ON p.sid = b.sid
),
-- rankJob's order: score, then delta, then last bytes (descending), then process (by key) and stack id
ranked AS (
  SELECT v.*, st.stack_key, pi.key AS process_key, pi.process_index,
         ROW_NUMBER() OVER (PARTITION BY v.job
                            ORDER BY v.score DESC, v.delta_bytes DESC, v.last_bytes DESC, pi.process_index, v.stack_id) AS rank
  FROM verdicts v
  JOIN stacks st ON st.job = v.job AND st.process = v.process AND st.stack_id = v.stack_id
  JOIN (SELECT job, process, key, ROW_NUMBER() OVER (PARTITION BY job ORDER BY key) - 1 AS process_index
        FROM processes) pi ON pi.job = v.job AND pi.process = v.process
),
-- groups: the same stack_key across the job's processes; score, delta and last bytes are the members' sums, the
-- pattern the top member's; ties keep the order in which rankJob meets the groups (process, then stack id)
grp AS (
  SELECT job, stack_key,
         SUM(score) AS group_score, SUM(delta_bytes) AS group_delta_bytes, SUM(last_bytes) AS group_last_bytes,
         COUNT(DISTINCT process) AS group_processes, MIN(rank) AS top_rank,
         MIN(CAST(process_index AS BIGINT) * 4294967296 + stack_id) AS first_seen
  FROM ranked
  GROUP BY job, stack_key
),
grp_ranked AS (
  SELECT g.*, t.pattern AS group_pattern,
         ROW_NUMBER() OVER (PARTITION BY g.job
                            ORDER BY g.group_score DESC, g.group_delta_bytes DESC, g.group_last_bytes DESC, g.first_seen) AS group_rank
  FROM grp g
  JOIN ranked t ON t.job = g.job AND t.rank = g.top_rank
)
SELECT r.job, r.process, r.process_key, r.stack_id, r.points, r.first_bytes, r.last_bytes, r.peak_bytes, r.delta_bytes,
       r.sigma_bytes, r.sigma_delta_bytes, r.z, r.pattern, r.slope_bytes_per_snapshot, r.late_slope_bytes_per_snapshot,
       r.late_z, r.score, r.rank, r.stack_key, g.group_rank, g.group_score, g.group_processes, g.group_pattern
FROM ranked r
JOIN grp_ranked g ON g.job = r.job AND g.stack_key = r.stack_key
ORDER BY r.job, r.rank
