-- The most memory a lease's workload held in a usage record's interval, MB
-- (10⁶ bytes), as its agent saw it (issue 40 §2: a trial reports each
-- shape's peak GPU memory). NULL for records of agents that predate it, or
-- that could not see it.
ALTER TABLE usage_records ADD COLUMN peak_memory_mb BIGINT;
