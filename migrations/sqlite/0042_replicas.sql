-- Every replica's standing (DESIGN §20), written by the replica itself
-- every two seconds, for the admin's list: where it listens, its part in
-- the election, how far its engine has applied the journal.
CREATE TABLE replicas (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    role TEXT NOT NULL,
    epoch BIGINT NOT NULL,
    applied_seq BIGINT NOT NULL,
    lag_ms BIGINT NOT NULL,
    started_at TEXT NOT NULL,
    seen_at TEXT NOT NULL
);
