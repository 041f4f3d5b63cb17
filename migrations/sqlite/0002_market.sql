-- Capacity, orders, leases, fills, charges, usage and the engine's own state.
-- `*_json` columns hold the engine's serde rows; the other columns are what
-- the API filters and shows.

CREATE TABLE nodes (
    id                BLOB PRIMARY KEY,
    provider_id       BLOB NOT NULL REFERENCES users(id),
    name              TEXT NOT NULL,
    region            TEXT NOT NULL REFERENCES regions(name),
    token_hash        TEXT NOT NULL UNIQUE,
    cordoned          BOOLEAN NOT NULL DEFAULT 0,
    quarantined       BOOLEAN NOT NULL DEFAULT 0,
    status            TEXT NOT NULL,
    spec_json         TEXT NOT NULL,
    inventory_json    TEXT,
    metrics_json      TEXT,
    last_heartbeat_at TEXT,
    registered_at     TEXT,
    created_at        TEXT NOT NULL
);
CREATE INDEX nodes_provider ON nodes(provider_id);

CREATE TABLE orders (
    id              BLOB PRIMARY KEY,
    buyer_id        BLOB NOT NULL REFERENCES users(id),
    client_order_id TEXT,
    mode            TEXT NOT NULL,
    state           TEXT NOT NULL,
    region          TEXT NOT NULL,
    reject_reason   TEXT,
    reject_message  TEXT,
    request_json    TEXT NOT NULL,
    engine_json     TEXT,
    tags_json       TEXT NOT NULL,
    lease_id        BLOB,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX orders_buyer ON orders(buyer_id, created_at);
CREATE UNIQUE INDEX orders_client_id ON orders(buyer_id, client_order_id);

CREATE TABLE leases (
    id              BLOB PRIMARY KEY,
    order_id        BLOB NOT NULL REFERENCES orders(id),
    buyer_id        BLOB NOT NULL REFERENCES users(id),
    node_id         BLOB NOT NULL REFERENCES nodes(id),
    mode            TEXT NOT NULL,
    state           TEXT NOT NULL,
    gpu_model       TEXT NOT NULL,
    region          TEXT NOT NULL,
    price_per_hour  TEXT NOT NULL,
    hold_id         BLOB,
    device          TEXT,
    end_reason      TEXT,
    exit_code       INTEGER,
    billed_until    INTEGER,
    starts_at       INTEGER NOT NULL,
    ends_at         INTEGER,
    running_at      INTEGER,
    ended_at        INTEGER,
    engine_json     TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX leases_buyer ON leases(buyer_id, created_at);
CREATE INDEX leases_node ON leases(node_id, state);
CREATE INDEX leases_state ON leases(state);

CREATE TABLE fills (
    order_id    BLOB NOT NULL REFERENCES orders(id),
    lease_id    BLOB NOT NULL,
    report_json TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (order_id, lease_id)
);

CREATE TABLE charges (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    lease_id       BLOB NOT NULL REFERENCES leases(id),
    buyer_id       BLOB NOT NULL,
    provider_id    BLOB NOT NULL,
    period_start   INTEGER NOT NULL,
    period_end     INTEGER NOT NULL,
    tflops_units   TEXT NOT NULL,
    vram_units     TEXT NOT NULL,
    amount         TEXT NOT NULL,
    fee            TEXT NOT NULL,
    entry_id       BLOB NOT NULL,
    created_at     TEXT NOT NULL
);
CREATE INDEX charges_lease ON charges(lease_id, period_start);
CREATE INDEX charges_buyer ON charges(buyer_id, period_start);

CREATE TABLE usage_batches (
    agent_id   BLOB NOT NULL,
    seq        INTEGER NOT NULL,
    records    INTEGER NOT NULL,
    applied_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, seq)
);

CREATE TABLE usage_records (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id         BLOB NOT NULL,
    seq              INTEGER NOT NULL,
    lease_id         BLOB NOT NULL,
    interval_start   TEXT NOT NULL,
    interval_end     TEXT NOT NULL,
    tflops_s         TEXT NOT NULL,
    vram_gb_s        TEXT NOT NULL,
    mean_utilization TEXT
);
CREATE INDEX usage_records_lease ON usage_records(lease_id, interval_start);

CREATE TABLE lease_logs (
    lease_id    BLOB PRIMARY KEY,
    tail        TEXT NOT NULL,
    total_bytes INTEGER NOT NULL,
    complete    BOOLEAN NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE TABLE spot_clearing (
    gpu_model      TEXT NOT NULL,
    region         TEXT NOT NULL,
    clearing_index TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    PRIMARY KEY (gpu_model, region)
);

CREATE TABLE engine_meta (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    state_json TEXT NOT NULL
);
