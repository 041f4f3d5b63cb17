-- The engine's recent demand mix, one row per granted request, appended per
-- batch and pruned to the window (engine_meta used to rewrite the whole
-- window as JSON on every commit).
CREATE TABLE demand_log (
    seq       BIGINT PRIMARY KEY,
    milli     BIGINT NOT NULL,
    memory_mb BIGINT NOT NULL,
    gpus      BIGINT NOT NULL,
    cpu_milli BIGINT NOT NULL
);
