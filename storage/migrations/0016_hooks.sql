-- 0016_hooks: the queue of hook deliveries (docs/hooks.md). A row is
-- inserted in the transaction of the run's state change that causes it
-- (storage/store_hook.c), so an outcome and its delivery commit together;
-- the delivery thread's attempts update it. dedup_key makes the insert
-- idempotent when a batch is sent again after a reconnect. A delivery goes
-- with its run (ON DELETE CASCADE), so history retention deletes it too.
-- The secret is a reference (a file or a variable of cschedd's
-- environment), never its value.
CREATE TABLE hook_deliveries (
    id bigserial PRIMARY KEY,
    dedup_key text NOT NULL UNIQUE,
    job_name text NOT NULL,
    hook_name text NOT NULL,
    event smallint NOT NULL,
    run_id bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    url text NOT NULL,
    secret_file text NOT NULL DEFAULT '',
    secret_env text NOT NULL DEFAULT '',
    ca_file text NOT NULL DEFAULT '',
    timeout_ms integer NOT NULL,
    max_attempts integer NOT NULL,
    body text NOT NULL,
    created_unix_ms bigint NOT NULL,
    -- 1 pending, 2 delivered, 3 failed (csched.v1.HookDeliveryStatus)
    status smallint NOT NULL DEFAULT 1 CHECK (status BETWEEN 1 AND 3),
    attempts integer NOT NULL DEFAULT 0,
    response_code integer NOT NULL DEFAULT 0,
    last_error text NOT NULL DEFAULT '',
    next_unix_ms bigint NOT NULL,
    last_unix_ms bigint NOT NULL DEFAULT 0
);

-- The head of each job's queue: its oldest pending delivery.
CREATE INDEX hook_deliveries_pending ON hook_deliveries (job_name, id) WHERE status = 1;
CREATE INDEX hook_deliveries_job_name_id ON hook_deliveries (job_name, id);
CREATE INDEX hook_deliveries_run_id ON hook_deliveries (run_id);
