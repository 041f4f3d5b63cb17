-- Trials (DESIGN §22): a workload run once per GPU shape before buying.
-- Each shape's run is an on-demand order; the trial keeps which order ran
-- which shape (or why none could), and reads the rest from the orders,
-- leases and usage records when shown.
CREATE TABLE trials (
    id           BLOB PRIMARY KEY,
    buyer_id     BLOB NOT NULL,
    request_json TEXT NOT NULL,
    runs_json    TEXT NOT NULL,
    created_at   TEXT NOT NULL
);
CREATE INDEX trials_buyer ON trials(buyer_id, created_at);
