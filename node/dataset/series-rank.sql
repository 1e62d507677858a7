-- heaplens job-wide ranking over many datasets: every stack of every process of every node's dataset, grouped by
-- the stack's job-wide identity (stack_key: normalized frames, never a dataset's local ids), ranked by the growth
-- that sampling cannot explain. Reads two tables, each with columns `job` and `dataset` (one dataset per node):
-- `series` (the per-(process, stack) statistics ingest stores) and `processes` (key and host). Plain SQL (CTEs,
-- CASE, SUM, SQRT, ROW_NUMBER; DOUBLE literals with an exponent; every division guarded): it runs unchanged on
-- DuckDB, Spark SQL and Trino.
-- Per series, over its n points t = 0…n−1: Δ = last − first, σ_Δ = √(var_first + var_last), the score's bound
-- max(0, Δ − 2σ_Δ) (no pattern can score more, docs/analysis.md), the least-squares slope of bytes over t and its r²
-- from Σt, Σt², Σy, Σty, Σy², and the share of intervals in which it grew. Per stack_key: the members' sums, how many
-- processes hold it and how many grow beyond noise, and the member that grows most (its process key and host).
WITH per AS (
  SELECT job, dataset, process, stack_id, stack_key, n, first_y, last_y, max_y,
         last_y - first_y AS delta_bytes,
         SQRT(first_var + last_var) AS sigma_delta_bytes,
         n * sum_tt - sum_t * sum_t AS dt,
         n * sum_ty - sum_t * sum_y AS dty,
         n * sum_yy - sum_y * sum_y AS dy,
         CASE WHEN n > 1 THEN grew / (n - 1e0) ELSE 0e0 END AS growing_fraction
  FROM series
),
-- only the columns read after it: DuckDB materializes this step (read twice), a row of 13 columns, not 18
fit AS (
  SELECT job, dataset, process, stack_id, stack_key, n, last_y, delta_bytes, sigma_delta_bytes, growing_fraction,
         CASE WHEN delta_bytes - 2 * sigma_delta_bytes > 0 THEN delta_bytes - 2 * sigma_delta_bytes ELSE 0e0 END AS bound,
         CASE WHEN dt > 0 THEN dty / dt ELSE 0e0 END AS slope_bytes_per_snapshot,
         CASE WHEN dt > 0 AND dy > 0 THEN (dty * dty) / (dt * dy) ELSE 0e0 END AS r2
  FROM per
),
stack_groups AS (
  SELECT job, stack_key,
         SUM(bound) AS bound_bytes,
         SUM(delta_bytes) AS delta_bytes,
         SUM(last_y) AS last_bytes,
         SQRT(SUM(sigma_delta_bytes * sigma_delta_bytes)) AS sigma_delta_bytes,
         COUNT(*) AS processes,
         SUM(CASE WHEN bound > 0 THEN 1 ELSE 0 END) AS growing_processes
  FROM fit
  GROUP BY job, stack_key
),
ranked AS (
  SELECT g.*,
         ROW_NUMBER() OVER (PARTITION BY g.job
                            ORDER BY g.bound_bytes DESC, g.delta_bytes DESC, g.last_bytes DESC, g.stack_key) AS group_rank
  FROM stack_groups g
),
-- the first 100 stacks of each job, and only their members ordered (not every series of the job)
top_groups AS (
  SELECT * FROM ranked WHERE group_rank <= 100
),
members AS (
  SELECT f.*,
         ROW_NUMBER() OVER (PARTITION BY f.job, f.stack_key
                            ORDER BY f.bound DESC, f.delta_bytes DESC, f.last_y DESC, f.dataset, f.process, f.stack_id) AS member_rank
  FROM fit f
  JOIN top_groups t ON t.job = f.job AND t.stack_key = f.stack_key
)
SELECT r.job, r.group_rank, r.stack_key, r.bound_bytes, r.delta_bytes, r.sigma_delta_bytes, r.last_bytes,
       r.processes, r.growing_processes,
       m.dataset AS top_dataset, p.key AS top_process_key, p.host AS top_host, m.stack_id AS top_stack_id,
       m.bound AS top_bound_bytes, m.delta_bytes AS top_delta_bytes, m.slope_bytes_per_snapshot AS top_slope_bytes_per_snapshot,
       m.r2 AS top_r2, m.growing_fraction AS top_growing_fraction, m.n AS top_points
FROM top_groups r
JOIN members m ON m.job = r.job AND m.stack_key = r.stack_key AND m.member_rank = 1
JOIN processes p ON p.job = m.job AND p.dataset = m.dataset AND p.process = m.process
ORDER BY r.job, r.group_rank
