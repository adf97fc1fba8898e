-- 0011_cluster_key: the secret replicas prove themselves to each other with.
--
-- A standby forwards the calls it cannot answer to the active replica,
-- naming the caller it authenticated; the active replica believes that name
-- only from a call that carries this key (docs/architecture.md, "Replicas").
-- Whoever can read the database can already do anything csched does, so the
-- key lives here, made once from PostgreSQL's strong random source
-- (gen_random_uuid: 122 random bits each).
CREATE TABLE cluster_key (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    key text NOT NULL
);

INSERT INTO cluster_key (key)
VALUES (replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''));
