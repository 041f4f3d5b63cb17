-- The rows are no longer the engine's storage (DESIGN §20): the journal and
-- its snapshots are. A lease row keeps a record of its own type, what the
-- views, billing and the agents read; rows written before hold the engine's
-- whole lease, which reads as that record too.
ALTER TABLE leases RENAME COLUMN engine_json TO record_json;
-- Orders and listings no longer keep the engine's copy. The columns stay for
-- one purpose: the first start of a database from before the journal reads
-- its engine from them, once, to keep the first snapshot. A later release,
-- which no longer starts such a database, drops them.
ALTER TABLE resale_listings ALTER COLUMN engine_json DROP NOT NULL;
