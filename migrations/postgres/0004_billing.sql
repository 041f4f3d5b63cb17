-- Billing: charge lines carry what a FOCUS row needs (lease, order, mode, SKU,
-- region, quantity, contracted and list unit prices, tags), credits are lines
-- of their own (no lease needed), and buyers set monthly budgets per tag value.

ALTER TABLE charges DROP CONSTRAINT IF EXISTS charges_lease_id_fkey;
ALTER TABLE charges ALTER COLUMN lease_id DROP NOT NULL;
ALTER TABLE charges ALTER COLUMN provider_id DROP NOT NULL;
ALTER TABLE charges ADD COLUMN order_id UUID;
ALTER TABLE charges ADD COLUMN node_id UUID;
-- usage | reserved_used | reserved_unused | credit
ALTER TABLE charges ADD COLUMN kind TEXT NOT NULL DEFAULT 'usage';
ALTER TABLE charges ADD COLUMN mode TEXT;
ALTER TABLE charges ADD COLUMN gpu_model TEXT;
ALTER TABLE charges ADD COLUMN region TEXT;
-- tflops_h | vram_h; NULL on credits and on lines from before 0004
ALTER TABLE charges ADD COLUMN unit TEXT;
ALTER TABLE charges ADD COLUMN quantity NUMERIC NOT NULL DEFAULT 0;
ALTER TABLE charges ADD COLUMN unit_price NUMERIC NOT NULL DEFAULT 0;
ALTER TABLE charges ADD COLUMN list_unit_price NUMERIC NOT NULL DEFAULT 0;
ALTER TABLE charges ADD COLUMN tags_json TEXT NOT NULL DEFAULT '{}';
ALTER TABLE charges ADD COLUMN memo TEXT;
-- Readers page through lines in id order (keyset), per buyer or provider.
CREATE INDEX charges_buyer_id ON charges(buyer_id, id);
CREATE INDEX charges_provider_id ON charges(provider_id, id);

CREATE TABLE budgets (
    buyer_id      UUID NOT NULL REFERENCES users(id),
    tag_key       TEXT NOT NULL,
    tag_value     TEXT NOT NULL,
    monthly_limit NUMERIC NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (buyer_id, tag_key, tag_value)
);
