-- Each API key is bound to the role its account had when it was made: a key
-- whose account's role has since changed no longer authenticates.
ALTER TABLE api_keys ADD COLUMN role TEXT;
UPDATE api_keys SET role = (SELECT role FROM users WHERE users.id = api_keys.user_id);
ALTER TABLE api_keys ALTER COLUMN role SET NOT NULL;
