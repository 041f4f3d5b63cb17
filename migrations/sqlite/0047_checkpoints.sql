-- An order's checkpoints (DESIGN §21): what its leases' agents sent from
-- the checkpoint folder, numbered per order. Only the latest is kept; its
-- bytes are in the outputs store under `orders/<order_id>/checkpoints/<seq>.tar`.
CREATE TABLE order_checkpoints (
    order_id   BLOB NOT NULL,
    seq        INTEGER NOT NULL,
    lease_id   BLOB NOT NULL,
    size       INTEGER NOT NULL,
    sha256     TEXT NOT NULL,
    stored_at  TEXT NOT NULL,
    PRIMARY KEY (order_id, seq)
);
CREATE INDEX order_checkpoints_stored_at ON order_checkpoints(stored_at);

-- Which checkpoint each resumed lease started from (its agent fetched it).
CREATE TABLE checkpoint_restores (
    lease_id    BLOB PRIMARY KEY,
    order_id    BLOB NOT NULL,
    seq         INTEGER NOT NULL,
    stored_at   TEXT NOT NULL,
    restored_at TEXT NOT NULL
);
CREATE INDEX checkpoint_restores_order ON checkpoint_restores(order_id, restored_at);
