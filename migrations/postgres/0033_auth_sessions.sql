-- Sessions of the CLI and the dashboard (DESIGN §19). A login opens a
-- session; its access tokens name it (`sid`) and stop working when it is
-- revoked. Its refresh tokens are stored hashed and used once each: using
-- one sets `used_at` and issues the next, and showing a used one again
-- revokes the whole session (reuse detection). A deleted account takes its
-- sessions and their tokens with it.
CREATE TABLE auth_sessions (
    id             UUID PRIMARY KEY,
    user_id        UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at     TIMESTAMPTZ NOT NULL,
    revoked_at     TIMESTAMPTZ,
    revoked_reason TEXT
);
CREATE INDEX auth_sessions_user ON auth_sessions(user_id);

CREATE TABLE refresh_tokens (
    token_hash TEXT PRIMARY KEY,
    session_id UUID NOT NULL REFERENCES auth_sessions(id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    used_at    TIMESTAMPTZ
);
CREATE INDEX refresh_tokens_session ON refresh_tokens(session_id);
