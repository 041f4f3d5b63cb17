-- The demand forecast (src/forecast) reads the last hours of orders each
-- minute; without this it would scan the whole table.
CREATE INDEX orders_created ON orders(created_at);
