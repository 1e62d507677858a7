-- heaplens job-wide growth: steady growers per (job, process, stack), ranked as `heaplens growth` ranks them.
-- Reads two tables, `cells` (job, process, snapshot, stack_id, bytes, rose) and `snapshots` (job, process, snapshot),
-- and uses only standard SQL (JOIN, CASE, SUM: no window), so it runs unchanged on DuckDB, Spark SQL and Trino.
-- slope: least squares of live bytes over snapshot index; growing_fraction: share of the n-1 intervals in
-- which the stack's bytes rose (`rose`, set at ingest: a stack absent from a snapshot has 0 bytes there); steadiness = slope ×
-- growing_fraction × r² for stacks that grew overall, else 0.
WITH series AS (
  SELECT job, process, CAST(COUNT(*) AS DOUBLE) AS n
  FROM snapshots
  GROUP BY job, process
),
sums AS (
  SELECT c.job, c.process, c.stack_id, MAX(s.n) AS n,
         SUM(c.bytes) AS sy,
         SUM(CAST(c.snapshot AS DOUBLE) * c.bytes) AS sxy,
         SUM(c.bytes * c.bytes) AS syy,
         SUM(CASE WHEN c.rose THEN 1 ELSE 0 END) AS grew,
         SUM(CASE WHEN c.snapshot = 0 THEN c.bytes ELSE 0 END) AS first_bytes,
         SUM(CASE WHEN c.snapshot = s.n - 1 THEN c.bytes ELSE 0 END) AS last_bytes
  FROM cells c
  JOIN series s ON c.job = s.job AND c.process = s.process
  GROUP BY c.job, c.process, c.stack_id
),
fit AS (
  SELECT job, process, stack_id, n, sy, sxy, syy, grew, first_bytes, last_bytes,
         n * (n - 1) / 2 AS sx,
         (n - 1) * n * (2 * n - 1) / 6 AS sxx
  FROM sums
  WHERE sy <> 0
),
stats AS (
  SELECT job, process, stack_id, first_bytes, last_bytes,
         last_bytes - first_bytes AS delta_bytes,
         CASE WHEN n * sxx - sx * sx > 0 THEN (n * sxy - sx * sy) / (n * sxx - sx * sx) ELSE 0 END AS slope,
         CASE WHEN n * sxx - sx * sx > 0 AND n * syy - sy * sy > 0
              THEN ((n * sxy - sx * sy) * (n * sxy - sx * sy)) / ((n * sxx - sx * sx) * (n * syy - sy * sy))
              ELSE 0 END AS r2,
         CASE WHEN n > 1 THEN grew / (n - 1) ELSE 0 END AS growing_fraction
  FROM fit
)
SELECT job, process, stack_id,
       slope AS slope_bytes_per_snapshot,
       growing_fraction,
       r2,
       first_bytes,
       last_bytes,
       delta_bytes,
       CASE WHEN slope > 0 AND last_bytes > first_bytes THEN slope * growing_fraction * r2 ELSE 0 END AS steadiness
FROM stats
ORDER BY job, process, steadiness DESC, delta_bytes DESC, stack_id
