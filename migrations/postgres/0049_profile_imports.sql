-- Imported job histories (DESIGN §22): what a buyer's Slurm, Kubernetes or
-- CSV history makes, kept as its profile and concurrency series (JSON), not
-- as its rows: the profile is what an import is for, and a million rows
-- would outweigh the file they came from.
CREATE TABLE profile_imports (
    id                   UUID PRIMARY KEY,
    buyer_id             UUID NOT NULL,
    format               TEXT NOT NULL,
    created_at           TIMESTAMPTZ NOT NULL,
    job_rows             BIGINT NOT NULL,
    skipped              BIGINT NOT NULL,
    rejected_count       BIGINT NOT NULL,
    rejected             TEXT NOT NULL,
    defaulted_model_rows BIGINT NOT NULL,
    default_gpu_model    TEXT NOT NULL,
    from_at              TIMESTAMPTZ,
    to_at                TIMESTAMPTZ,
    bytes                BIGINT NOT NULL,
    profile              TEXT,
    concurrency          TEXT NOT NULL
);
CREATE INDEX profile_imports_buyer ON profile_imports(buyer_id, created_at);
