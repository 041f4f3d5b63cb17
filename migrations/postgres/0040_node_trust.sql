-- A node an admin marked simulated may register with the simulated backend
-- (the demo, tests, load tests); any other node may not (DESIGN §7).
ALTER TABLE nodes ADD COLUMN simulated BOOLEAN NOT NULL DEFAULT FALSE;
-- A re-inventory that changed the node's models or GPU count puts it under
-- review (cordoned) until an admin accepts it; why, in words.
ALTER TABLE nodes ADD COLUMN under_review BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE nodes ADD COLUMN review_reason TEXT;
