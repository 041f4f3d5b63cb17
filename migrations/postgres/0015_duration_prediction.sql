-- Duration prediction (DESIGN §17): what each order was placed with, for
-- audit and analysis (the engine keeps its own copy in engine_json, which
-- restore reads), and the index the prediction reads a buyer's ended leases
-- by, newest first.
ALTER TABLE orders ADD COLUMN predicted_duration_s BIGINT;
ALTER TABLE orders ADD COLUMN prediction_basis TEXT;
CREATE INDEX leases_buyer_ended ON leases(buyer_id, ended_at);
