-- The cheapest storage option whose every repetition of 4k random reads in the last 7 days of the
-- nightly suite kept p95 under 2 ms at 10,000 IOPS or more (measured volumes, not emulated ones).
SELECT
  storage_option,
  MAX(monthly_usd) AS monthly_usd,
  COUNT(*) AS repetitions,
  ROUND(MIN(iops), 1) AS worst_iops,
  ROUND(MAX(p95_us) / 1000, 3) AS worst_p95_ms
FROM storagebench.results
WHERE suite = 'nightly'
  AND "date" >= CAST(CAST(current_date - INTERVAL '7' DAY AS DATE) AS VARCHAR)
  AND workload = 'std-randread-4k' AND phase = 'run' AND direction = 'read' AND variant = ''
  AND NOT emulated
GROUP BY storage_option
HAVING MAX(p95_us) < 2000 AND MIN(iops) >= 10000
ORDER BY monthly_usd, storage_option
LIMIT 1
