-- Webhooks (DESIGN §15). Deliveries are rows, never only tasks in memory, so
-- a restart (even after SIGKILL) resumes where the last one stopped.

-- An account's endpoints. `events_json`: a JSON array of event types, NULL
-- for all. The secret signs deliveries, so it is kept as is, not hashed.
CREATE TABLE webhooks (
    id          BLOB PRIMARY KEY,
    user_id     BLOB NOT NULL,
    url         TEXT NOT NULL,
    events_json TEXT,
    secret      TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE INDEX webhooks_user ON webhooks(user_id, created_at);

-- The account's default secret: it signs what an order's `webhook_url` gets.
CREATE TABLE webhook_secrets (
    user_id    BLOB PRIMARY KEY,
    secret     TEXT NOT NULL,
    created_at TEXT NOT NULL
);

-- The last event the dispatcher turned into deliveries. Starts at the newest
-- event already written: no webhook existed before.
CREATE TABLE webhook_cursor (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    after_id INTEGER NOT NULL
);
INSERT INTO webhook_cursor (id, after_id) VALUES (1, COALESCE((SELECT MAX(id) FROM events), 0));

-- One event for one endpoint. `endpoint` orders them: a webhook's id, or
-- `order:<user>:<url>` for an order's `webhook_url`; its oldest pending row
-- blocks the later ones. The body is kept, so pruning events loses nothing.
CREATE TABLE webhook_deliveries (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    endpoint   TEXT NOT NULL,
    webhook_id BLOB,
    user_id    BLOB NOT NULL,
    url        TEXT NOT NULL,
    event_id   INTEGER NOT NULL,
    event_type TEXT NOT NULL,
    event_at   TEXT NOT NULL,
    body       TEXT NOT NULL,
    state      TEXT NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0,
    next_at    TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries(state, endpoint, id);
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries(webhook_id, id);

-- Each POST of a delivery: the HTTP status, or why there was none.
CREATE TABLE webhook_attempts (
    delivery_id INTEGER NOT NULL,
    at          TEXT NOT NULL,
    status      INTEGER,
    error       TEXT,
    duration_ms INTEGER NOT NULL
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id, at);
