-- The engine leader of each market shard (DESIGN §12). The leader holds
-- an advisory lock; this row says where it listens, and its epoch fences
-- the commits of a leader that was replaced.
CREATE TABLE market_leader (
    shard INTEGER PRIMARY KEY,
    epoch BIGINT NOT NULL,
    leader_url TEXT NOT NULL,
    since TIMESTAMPTZ NOT NULL
);
