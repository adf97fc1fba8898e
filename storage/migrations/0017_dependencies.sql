-- 0017_dependencies: what became of each cause of a job's runs after its
-- upstreams (Job.after; docs/dependencies.md). One row per (downstream
-- job, cause): the cause is the upstream runs' common origin, "slot:<ms>"
-- (the same slot time) or "run:<id>" (the triggered run that started the
-- chain). The row is written in the transaction of the upstream run's end
-- that changes it, and a decided row (outcome 2 ran, 3 not run) with the
-- run it made, in the transaction that makes that run: the key makes the
-- downstream run once per cause, whatever crashes and restarts come
-- between. body is the csched.v1.DependencyCause, packed, without its
-- upstreams: those are rows of dependency_upstreams, inserted once each,
-- so that an upstream's end recorded by a replica that did not yet know
-- the others adds to them rather than replacing them. The columns beside
-- body are what is looked up. run_id is not a foreign key:
-- history retention may delete the run before its cause.
CREATE TABLE dependency_causes (
    job_name text NOT NULL,
    cause text NOT NULL,
    -- 1 waiting, 2 ran, 3 not run (csched.v1.DependencyOutcome)
    outcome smallint NOT NULL CHECK (outcome BETWEEN 1 AND 3),
    run_id bigint NOT NULL DEFAULT 0,
    created_unix_ms bigint NOT NULL,
    decided_unix_ms bigint NOT NULL DEFAULT 0,
    body bytea NOT NULL,
    PRIMARY KEY (job_name, cause)
);

CREATE INDEX dependency_causes_job_name_created ON dependency_causes (job_name, created_unix_ms);
-- What a start loads: the causes still waiting, and those decided lately.
CREATE INDEX dependency_causes_waiting ON dependency_causes (created_unix_ms) WHERE outcome = 1;
CREATE INDEX dependency_causes_decided ON dependency_causes (decided_unix_ms);

CREATE TABLE dependency_upstreams (
    job_name text NOT NULL,
    cause text NOT NULL,
    upstream_job text NOT NULL,
    run_id bigint NOT NULL,
    state smallint NOT NULL,
    started boolean NOT NULL,
    recorded_unix_ms bigint NOT NULL,
    PRIMARY KEY (job_name, cause, upstream_job),
    FOREIGN KEY (job_name, cause) REFERENCES dependency_causes ON DELETE CASCADE
);
