-- 0020_http_sessions: the HTTP API's browser sessions (docs/http.md,
-- "Authentication"), shared by every replica so that a session made on one
-- goes on working on another after a failover. Neither the session id nor
-- the token is stored: a row holds the SHA-256 of the id (the cookie) and
-- the SHA-256 of the token it was made with, which the tokens file holds
-- too and which names the token (its name and role) at each call. Logout
-- deletes the row; rows past their expiry are deleted at the next login.
CREATE TABLE http_sessions (
    id_sha256 bytea PRIMARY KEY,
    token_sha256 bytea NOT NULL,
    expires_unix_ms bigint NOT NULL
);
CREATE INDEX http_sessions_expires ON http_sessions (expires_unix_ms);
