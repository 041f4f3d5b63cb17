-- Billing: charge lines carry what a FOCUS row needs (lease, order, mode, SKU,
-- region, quantity, contracted and list unit prices, tags), credits are lines
-- of their own (no lease needed), and buyers set monthly budgets per tag value.
-- SQLite cannot relax NOT NULL in place, so `charges` is rebuilt.

CREATE TABLE charges_v4 (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    lease_id        BLOB,
    order_id        BLOB,
    buyer_id        BLOB NOT NULL,
    provider_id     BLOB,
    node_id         BLOB,
    -- usage | reserved_used | reserved_unused | credit
    kind            TEXT NOT NULL DEFAULT 'usage',
    mode            TEXT,
    gpu_model       TEXT,
    region          TEXT,
    -- tflops_h | vram_h; NULL on credits and on lines from before 0004
    unit            TEXT,
    quantity        TEXT NOT NULL DEFAULT '0',
    unit_price      TEXT NOT NULL DEFAULT '0',
    list_unit_price TEXT NOT NULL DEFAULT '0',
    tags_json       TEXT NOT NULL DEFAULT '{}',
    memo            TEXT,
    period_start    INTEGER NOT NULL,
    period_end      INTEGER NOT NULL,
    tflops_units    TEXT NOT NULL,
    vram_units      TEXT NOT NULL,
    amount          TEXT NOT NULL,
    fee             TEXT NOT NULL,
    entry_id        BLOB NOT NULL,
    created_at      TEXT NOT NULL
);
INSERT INTO charges_v4 (id, lease_id, buyer_id, provider_id, period_start, period_end,
    tflops_units, vram_units, amount, fee, entry_id, created_at)
SELECT id, lease_id, buyer_id, provider_id, period_start, period_end,
    tflops_units, vram_units, amount, fee, entry_id, created_at FROM charges;
DROP TABLE charges;
ALTER TABLE charges_v4 RENAME TO charges;
CREATE INDEX charges_lease ON charges(lease_id, period_start);
CREATE INDEX charges_buyer ON charges(buyer_id, period_start);
-- Readers page through lines in id order (keyset), per buyer or provider.
CREATE INDEX charges_buyer_id ON charges(buyer_id, id);
CREATE INDEX charges_provider_id ON charges(provider_id, id);

CREATE TABLE budgets (
    buyer_id      BLOB NOT NULL REFERENCES users(id),
    tag_key       TEXT NOT NULL,
    tag_value     TEXT NOT NULL,
    monthly_limit TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    PRIMARY KEY (buyer_id, tag_key, tag_value)
);
