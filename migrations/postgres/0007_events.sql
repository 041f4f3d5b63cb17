-- The outbox (DESIGN §15): every event a user should hear about, written in
-- the transaction of the change it reports. Ids only grow, so a stream
-- resumes after the last id it saw; rows older than the retention are pruned.
CREATE TABLE events (
    id        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id   UUID NOT NULL,
    type      TEXT NOT NULL,
    at        TIMESTAMPTZ NOT NULL,
    order_id  UUID,
    lease_id  UUID,
    data_json TEXT NOT NULL
);
CREATE INDEX events_user ON events(user_id, id);
CREATE INDEX events_at ON events(at);
