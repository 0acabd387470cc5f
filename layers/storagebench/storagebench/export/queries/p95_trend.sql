-- The nightly p95 trend per storage option: each night's mean and worst repetition of 4k random
-- reads over the last 30 days of the nightly suite, in ms.
SELECT
  "date",
  storage_option,
  COUNT(*) AS repetitions,
  ROUND(AVG(p95_us) / 1000, 3) AS mean_p95_ms,
  ROUND(MAX(p95_us) / 1000, 3) AS worst_p95_ms
FROM storagebench.results
WHERE suite = 'nightly'
  AND "date" >= CAST(CAST(current_date - INTERVAL '30' DAY AS DATE) AS VARCHAR)
  AND workload = 'std-randread-4k' AND phase = 'run' AND direction = 'read' AND variant = ''
GROUP BY "date", storage_option
ORDER BY storage_option, "date"
