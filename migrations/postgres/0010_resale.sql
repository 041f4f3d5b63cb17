-- Resale listings (DESIGN §6): the tail of a reserved lease's window for
-- sale. An open listing's `engine_json` is what the engine restores; a sale
-- closes the listing, names the part sold and the buyer's lease, and lists
-- the parts either side again as listings of their own (`parent_id`).
CREATE TABLE resale_listings (
    id              UUID PRIMARY KEY,
    seller_id       UUID NOT NULL REFERENCES users(id),
    lease_id        UUID NOT NULL REFERENCES leases(id),
    parent_id       UUID,
    node_id         UUID NOT NULL REFERENCES nodes(id),
    gpu_model       TEXT NOT NULL,
    region          TEXT NOT NULL,
    from_ts         BIGINT NOT NULL,
    until_ts        BIGINT NOT NULL,
    ask_per_hour    NUMERIC NOT NULL,
    state           TEXT NOT NULL,
    sold_lease_id   UUID,
    sold_from       BIGINT,
    sold_until      BIGINT,
    sold_amount     NUMERIC,
    engine_json     TEXT NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX resale_listings_seller ON resale_listings(seller_id, created_at);
CREATE INDEX resale_listings_state ON resale_listings(state);
