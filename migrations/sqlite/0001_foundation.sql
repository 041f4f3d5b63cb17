-- Foundation: accounts, the double-entry ledger, catalog prices.
-- Money is TEXT (exact decimal strings, summed in Rust, never in SQL); times are UTC RFC 3339.

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE users (
    id            BLOB PRIMARY KEY,
    email         TEXT NOT NULL UNIQUE,
    name          TEXT NOT NULL,
    role          TEXT NOT NULL CHECK (role IN ('buyer', 'provider', 'admin')),
    password_hash TEXT NOT NULL,
    created_at    TEXT NOT NULL
);

CREATE TABLE api_keys (
    id           BLOB PRIMARY KEY,
    user_id      BLOB NOT NULL REFERENCES users(id),
    name         TEXT NOT NULL,
    prefix       TEXT NOT NULL,
    key_hash     TEXT NOT NULL UNIQUE,
    created_at   TEXT NOT NULL,
    last_used_at TEXT
);
CREATE INDEX api_keys_user ON api_keys(user_id);

CREATE TABLE accounts (
    code       TEXT PRIMARY KEY,
    owner_id   BLOB REFERENCES users(id),
    kind       TEXT NOT NULL,
    currency   TEXT NOT NULL,
    balance    TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX accounts_owner ON accounts(owner_id);

CREATE TABLE journal_entries (
    id         BLOB PRIMARY KEY,
    kind       TEXT NOT NULL,
    memo       TEXT NOT NULL,
    actor_id   BLOB,
    reference  TEXT,
    created_at TEXT NOT NULL
);

CREATE TABLE postings (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id   BLOB NOT NULL REFERENCES journal_entries(id),
    account    TEXT NOT NULL REFERENCES accounts(code),
    amount     TEXT NOT NULL,
    balance_after TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX postings_account ON postings(account, id);

CREATE TABLE holds (
    id         BLOB PRIMARY KEY,
    user_id    BLOB NOT NULL REFERENCES users(id),
    remaining  TEXT NOT NULL,
    reference  TEXT NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('open', 'closed')),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX holds_user ON holds(user_id, status);

CREATE TABLE idempotency_keys (
    user_id      BLOB NOT NULL,
    scope        TEXT NOT NULL,
    key          TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    status       INTEGER NOT NULL,
    body         TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (user_id, scope, key)
);

CREATE TABLE regions (
    name       TEXT PRIMARY KEY,
    timezone   TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE list_prices (
    region     TEXT NOT NULL REFERENCES regions(name),
    gpu_model  TEXT NOT NULL,
    unit       TEXT NOT NULL,
    list_price TEXT NOT NULL,
    currency   TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (region, gpu_model, unit)
);

CREATE TABLE price_history (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    region         TEXT NOT NULL,
    gpu_model      TEXT NOT NULL,
    unit           TEXT NOT NULL,
    list_price     TEXT NOT NULL,
    previous_price TEXT,
    currency       TEXT NOT NULL,
    changed_by     BLOB,
    changed_at     TEXT NOT NULL
);
CREATE INDEX price_history_time ON price_history(changed_at);

CREATE TABLE audit_log (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    actor_id   BLOB,
    action     TEXT NOT NULL,
    target     TEXT NOT NULL,
    details    TEXT NOT NULL,
    created_at TEXT NOT NULL
);
