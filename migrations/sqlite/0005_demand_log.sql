-- The engine's recent demand mix, one row per granted request, appended per
-- batch and pruned to the window (engine_meta used to rewrite the whole
-- window as JSON on every commit).
CREATE TABLE demand_log (
    seq       INTEGER PRIMARY KEY,
    milli     INTEGER NOT NULL,
    memory_mb INTEGER NOT NULL,
    gpus      INTEGER NOT NULL,
    cpu_milli INTEGER NOT NULL
);
