-- The image a container lease ran, by the ID the agent resolved it to when
-- the lease started (`sha256:` and 64 hex digits): what ran stays known
-- after the tag moves. NULL for a lease without an image.
ALTER TABLE leases ADD COLUMN image_id TEXT;
