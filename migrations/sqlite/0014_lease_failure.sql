-- Why the agent could not run a lease (a bad artifact hash, a failed fetch, a
-- slice it could not make), as it reported; shown on the lease.
ALTER TABLE leases ADD COLUMN failure TEXT;
