-- The journal (DESIGN §20): every command the engine applied, batch by
-- batch, appended by the leader in the transaction that commits the batch's
-- rows. Followers apply it in `seq` order to engines of their own instead of
-- rebuilding them from the rows. `epoch` is the leader's term (a replaced
-- leader's batch is refused by the fence before it gets here); `version`
-- the encoding of `commands`; `digest` the leader's state digest after the
-- batch, on every few batches, for followers to compare theirs with.
CREATE TABLE journal (
    seq BIGINT PRIMARY KEY,
    epoch BIGINT NOT NULL,
    at_ms BIGINT NOT NULL,
    version INTEGER NOT NULL,
    commands TEXT NOT NULL,
    digest TEXT
);

-- The engine's state at a journal sequence: a replica starts from the
-- latest and applies the journal after it. The first start on a database
-- from before the journal snapshots the rows at the journal's sequence 0.
CREATE TABLE journal_snapshots (
    seq BIGINT PRIMARY KEY,
    version INTEGER NOT NULL,
    at_ms BIGINT NOT NULL,
    state TEXT NOT NULL
);
