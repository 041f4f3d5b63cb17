-- Resale (DESIGN §6): a charge line says where the capacity it bills came
-- from, so the FOCUS export can write `x_Source`. `primary` for every line
-- written before resale existed; `resale` for a lease bought from a listing
-- and for the seller's proceeds, which also name the listing.
ALTER TABLE charges ADD COLUMN source TEXT NOT NULL DEFAULT 'primary';
ALTER TABLE charges ADD COLUMN listing_id BLOB;
