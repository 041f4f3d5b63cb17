-- An order's checkpoints (DESIGN §21): what its leases' agents sent from
-- the checkpoint folder, numbered per order. Only the latest is kept; its
-- bytes are in the outputs store under `orders/<order_id>/checkpoints/<seq>.tar`.
CREATE TABLE order_checkpoints (
    order_id   UUID NOT NULL,
    seq        BIGINT NOT NULL,
    lease_id   UUID NOT NULL,
    size       BIGINT NOT NULL,
    sha256     TEXT NOT NULL,
    stored_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (order_id, seq)
);
CREATE INDEX order_checkpoints_stored_at ON order_checkpoints(stored_at);

-- Which checkpoint each resumed lease started from (its agent fetched it).
CREATE TABLE checkpoint_restores (
    lease_id    UUID PRIMARY KEY,
    order_id    UUID NOT NULL,
    seq         BIGINT NOT NULL,
    stored_at   TIMESTAMPTZ NOT NULL,
    restored_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX checkpoint_restores_order ON checkpoint_restores(order_id, restored_at);
