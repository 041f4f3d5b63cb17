-- Capacity, orders, leases, fills, charges, usage and the engine's own state.
-- `*_json` columns hold the engine's serde rows; the other columns are what
-- the API filters and shows.

CREATE TABLE nodes (
    id                UUID PRIMARY KEY,
    provider_id       UUID NOT NULL REFERENCES users(id),
    name              TEXT NOT NULL,
    region            TEXT NOT NULL REFERENCES regions(name),
    token_hash        TEXT NOT NULL UNIQUE,
    cordoned          BOOLEAN NOT NULL DEFAULT FALSE,
    quarantined       BOOLEAN NOT NULL DEFAULT FALSE,
    status            TEXT NOT NULL,
    spec_json         TEXT NOT NULL,
    inventory_json    TEXT,
    metrics_json      TEXT,
    last_heartbeat_at TIMESTAMPTZ,
    registered_at     TIMESTAMPTZ,
    created_at        TIMESTAMPTZ NOT NULL
);
CREATE INDEX nodes_provider ON nodes(provider_id);

CREATE TABLE orders (
    id              UUID PRIMARY KEY,
    buyer_id        UUID NOT NULL REFERENCES users(id),
    client_order_id TEXT,
    mode            TEXT NOT NULL,
    state           TEXT NOT NULL,
    region          TEXT NOT NULL,
    reject_reason   TEXT,
    reject_message  TEXT,
    request_json    TEXT NOT NULL,
    engine_json     TEXT,
    tags_json       TEXT NOT NULL,
    lease_id        UUID,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX orders_buyer ON orders(buyer_id, created_at);
CREATE UNIQUE INDEX orders_client_id ON orders(buyer_id, client_order_id);

CREATE TABLE leases (
    id              UUID PRIMARY KEY,
    order_id        UUID NOT NULL REFERENCES orders(id),
    buyer_id        UUID NOT NULL REFERENCES users(id),
    node_id         UUID NOT NULL REFERENCES nodes(id),
    mode            TEXT NOT NULL,
    state           TEXT NOT NULL,
    gpu_model       TEXT NOT NULL,
    region          TEXT NOT NULL,
    price_per_hour  NUMERIC NOT NULL,
    hold_id         UUID,
    device          TEXT,
    end_reason      TEXT,
    exit_code       INTEGER,
    billed_until    BIGINT,
    starts_at       BIGINT NOT NULL,
    ends_at         BIGINT,
    running_at      BIGINT,
    ended_at        BIGINT,
    engine_json     TEXT NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX leases_buyer ON leases(buyer_id, created_at);
CREATE INDEX leases_node ON leases(node_id, state);
CREATE INDEX leases_state ON leases(state);

CREATE TABLE fills (
    order_id    UUID NOT NULL REFERENCES orders(id),
    lease_id    UUID NOT NULL,
    report_json TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (order_id, lease_id)
);

CREATE TABLE charges (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    lease_id       UUID NOT NULL REFERENCES leases(id),
    buyer_id       UUID NOT NULL,
    provider_id    UUID NOT NULL,
    period_start   BIGINT NOT NULL,
    period_end     BIGINT NOT NULL,
    tflops_units   NUMERIC NOT NULL,
    vram_units     NUMERIC NOT NULL,
    amount         NUMERIC NOT NULL,
    fee            NUMERIC NOT NULL,
    entry_id       UUID NOT NULL,
    created_at     TIMESTAMPTZ NOT NULL
);
CREATE INDEX charges_lease ON charges(lease_id, period_start);
CREATE INDEX charges_buyer ON charges(buyer_id, period_start);

CREATE TABLE usage_batches (
    agent_id   UUID NOT NULL,
    seq        BIGINT NOT NULL,
    records    BIGINT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (agent_id, seq)
);

CREATE TABLE usage_records (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    agent_id         UUID NOT NULL,
    seq              BIGINT NOT NULL,
    lease_id         UUID NOT NULL,
    interval_start   TIMESTAMPTZ NOT NULL,
    interval_end     TIMESTAMPTZ NOT NULL,
    tflops_s         NUMERIC NOT NULL,
    vram_gb_s        NUMERIC NOT NULL,
    mean_utilization NUMERIC
);
CREATE INDEX usage_records_lease ON usage_records(lease_id, interval_start);

CREATE TABLE lease_logs (
    lease_id    UUID PRIMARY KEY,
    tail        TEXT NOT NULL,
    total_bytes BIGINT NOT NULL,
    complete    BOOLEAN NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);

CREATE TABLE spot_clearing (
    gpu_model      TEXT NOT NULL,
    region         TEXT NOT NULL,
    clearing_index NUMERIC NOT NULL,
    updated_at     TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (gpu_model, region)
);

CREATE TABLE engine_meta (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    state_json TEXT NOT NULL
);
