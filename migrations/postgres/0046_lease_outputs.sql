-- What a lease's workload left in /outputs, one row per file, uploaded by its
-- agent (DESIGN §21). The bytes are in the outputs store under
-- `leases/<lease_id>/<name>`; the row says what the buyer downloads and when
-- it is pruned (`stored_at` + the retention).
CREATE TABLE lease_outputs (
    lease_id   UUID NOT NULL,
    name       TEXT NOT NULL,
    size       BIGINT NOT NULL,
    sha256     TEXT NOT NULL,
    stored_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (lease_id, name)
);
CREATE INDEX lease_outputs_stored_at ON lease_outputs(stored_at);
