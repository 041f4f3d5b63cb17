-- The outbox (DESIGN §15): every event a user should hear about, written in
-- the transaction of the change it reports. Ids only grow, so a stream
-- resumes after the last id it saw; rows older than the retention are pruned.
CREATE TABLE events (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id   BLOB NOT NULL,
    type      TEXT NOT NULL,
    at        TEXT NOT NULL,
    order_id  BLOB,
    lease_id  BLOB,
    data_json TEXT NOT NULL
);
CREATE INDEX events_user ON events(user_id, id);
CREATE INDEX events_at ON events(at);
