-- Resale listings (DESIGN §6): the tail of a reserved lease's window for
-- sale. An open listing's `engine_json` is what the engine restores; a sale
-- closes the listing, names the part sold and the buyer's lease, and lists
-- the parts either side again as listings of their own (`parent_id`).
CREATE TABLE resale_listings (
    id              BLOB PRIMARY KEY,
    seller_id       BLOB NOT NULL REFERENCES users(id),
    lease_id        BLOB NOT NULL REFERENCES leases(id),
    parent_id       BLOB,
    node_id         BLOB NOT NULL REFERENCES nodes(id),
    gpu_model       TEXT NOT NULL,
    region          TEXT NOT NULL,
    from_ts         INTEGER NOT NULL,
    until_ts        INTEGER NOT NULL,
    ask_per_hour    TEXT NOT NULL,
    state           TEXT NOT NULL,
    sold_lease_id   BLOB,
    sold_from       INTEGER,
    sold_until      INTEGER,
    sold_amount     TEXT,
    engine_json     TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX resale_listings_seller ON resale_listings(seller_id, created_at);
CREATE INDEX resale_listings_state ON resale_listings(state);
