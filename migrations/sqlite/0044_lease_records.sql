-- The rows are no longer the engine's storage (DESIGN §20): the journal and
-- its snapshots are. A lease row keeps a record of its own type, what the
-- views, billing and the agents read; rows written before hold the engine's
-- whole lease, which reads as that record too.
ALTER TABLE leases RENAME COLUMN engine_json TO record_json;
-- Orders and listings no longer keep the engine's copy. The columns stay for
-- one purpose: the first start of a database from before the journal reads
-- its engine from them, once, to keep the first snapshot. A later release,
-- which no longer starts such a database, drops them. SQLite cannot drop a
-- NOT NULL, so the listings' table is made again (nothing refers to it).
CREATE TABLE resale_listings_new (
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
    engine_json     TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
INSERT INTO resale_listings_new (id, seller_id, lease_id, parent_id, node_id, gpu_model, region,
    from_ts, until_ts, ask_per_hour, state, sold_lease_id, sold_from, sold_until, sold_amount,
    engine_json, created_at, updated_at)
SELECT id, seller_id, lease_id, parent_id, node_id, gpu_model, region,
    from_ts, until_ts, ask_per_hour, state, sold_lease_id, sold_from, sold_until, sold_amount,
    engine_json, created_at, updated_at FROM resale_listings;
DROP TABLE resale_listings;
ALTER TABLE resale_listings_new RENAME TO resale_listings;
CREATE INDEX resale_listings_seller ON resale_listings(seller_id, created_at);
CREATE INDEX resale_listings_state ON resale_listings(state);
