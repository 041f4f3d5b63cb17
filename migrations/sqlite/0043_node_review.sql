-- A node whose agent reported usage beyond what a lease holds (DESIGN §19
-- "Bounds on what nodes report") is marked for a person to look at; the
-- refused records are not stored. `review_reason` says what was seen first.
ALTER TABLE nodes ADD COLUMN under_review BOOLEAN NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN review_reason TEXT;
