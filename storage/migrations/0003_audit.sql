-- 0003_audit: who did what. Runs say who made them (the TriggerJob caller's
-- identity, or "schedule"); jobs carry created_by and updated_by inside their
-- packed spec. The audit table holds one row per change, trigger and cancel,
-- and per refused call of those methods, written in the transaction of the
-- change it records. Ids are handed out by the server, so a batch sent again
-- after a reconnect inserts nothing twice. code is the gRPC status code the
-- call ended with (0 is OK).
ALTER TABLE runs ADD COLUMN triggered_by text NOT NULL DEFAULT '';

CREATE TABLE audit (
    id bigint PRIMARY KEY,
    at_unix_ms bigint NOT NULL,
    method text NOT NULL,
    identity text NOT NULL,
    job_name text NOT NULL DEFAULT '',
    run_id bigint NOT NULL DEFAULT 0,
    code integer NOT NULL,
    message text NOT NULL DEFAULT ''
);

-- Retention deletes by time; the filters of ListAudit by time, identity
-- and job read these.
CREATE INDEX audit_at_unix_ms ON audit (at_unix_ms);
CREATE INDEX audit_identity_id ON audit (identity, id);
CREATE INDEX audit_job_name_id ON audit (job_name, id);

CREATE VIEW audit_readable AS
    SELECT a.id, to_timestamp(a.at_unix_ms / 1000.0) AS at, a.method, a.identity,
           a.job_name, nullif(a.run_id, 0) AS run_id,
           CASE WHEN a.code = 0 THEN 'OK' ELSE a.code::text END AS outcome, a.message
      FROM audit a;
