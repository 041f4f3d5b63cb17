-- Foundation: accounts, the double-entry ledger, catalog prices.
-- Money is NUMERIC (exact); times are TIMESTAMPTZ in UTC.

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE users (
    id            UUID PRIMARY KEY,
    email         TEXT NOT NULL UNIQUE,
    name          TEXT NOT NULL,
    role          TEXT NOT NULL CHECK (role IN ('buyer', 'provider', 'admin')),
    password_hash TEXT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL
);

CREATE TABLE api_keys (
    id           UUID PRIMARY KEY,
    user_id      UUID NOT NULL REFERENCES users(id),
    name         TEXT NOT NULL,
    prefix       TEXT NOT NULL,
    key_hash     TEXT NOT NULL UNIQUE,
    created_at   TIMESTAMPTZ NOT NULL,
    last_used_at TIMESTAMPTZ
);
CREATE INDEX api_keys_user ON api_keys(user_id);

CREATE TABLE accounts (
    code       TEXT PRIMARY KEY,
    owner_id   UUID REFERENCES users(id),
    kind       TEXT NOT NULL,
    currency   TEXT NOT NULL,
    balance    NUMERIC NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX accounts_owner ON accounts(owner_id);

CREATE TABLE journal_entries (
    id         UUID PRIMARY KEY,
    kind       TEXT NOT NULL,
    memo       TEXT NOT NULL,
    actor_id   UUID,
    reference  TEXT,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE postings (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    entry_id   UUID NOT NULL REFERENCES journal_entries(id),
    account    TEXT NOT NULL REFERENCES accounts(code),
    amount     NUMERIC NOT NULL,
    balance_after NUMERIC NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX postings_account ON postings(account, id);

CREATE TABLE holds (
    id         UUID PRIMARY KEY,
    user_id    UUID NOT NULL REFERENCES users(id),
    remaining  NUMERIC NOT NULL,
    reference  TEXT NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('open', 'closed')),
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX holds_user ON holds(user_id, status);

CREATE TABLE idempotency_keys (
    user_id      UUID NOT NULL,
    scope        TEXT NOT NULL,
    key          TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    status       INTEGER NOT NULL,
    body         TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (user_id, scope, key)
);

CREATE TABLE regions (
    name       TEXT PRIMARY KEY,
    timezone   TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE list_prices (
    region     TEXT NOT NULL REFERENCES regions(name),
    gpu_model  TEXT NOT NULL,
    unit       TEXT NOT NULL,
    list_price NUMERIC NOT NULL,
    currency   TEXT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (region, gpu_model, unit)
);

CREATE TABLE price_history (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    region         TEXT NOT NULL,
    gpu_model      TEXT NOT NULL,
    unit           TEXT NOT NULL,
    list_price     NUMERIC NOT NULL,
    previous_price NUMERIC,
    currency       TEXT NOT NULL,
    changed_by     UUID,
    changed_at     TIMESTAMPTZ NOT NULL
);
CREATE INDEX price_history_time ON price_history(changed_at);

CREATE TABLE audit_log (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    actor_id   UUID,
    action     TEXT NOT NULL,
    target     TEXT NOT NULL,
    details    TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
