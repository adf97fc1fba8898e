-- 0018_command_hooks: command hooks (docs/hooks.md, docs/design/0034-command-hooks.md)
-- share the delivery queue of webhooks. command holds what the command
-- runs as, made when the delivery is queued: a csched.v1.Job in the API's
-- JSON mapping (argv or shell, the job's user, group, env, working_dir and
-- resources, and the event's CSCHED_* variables); '' for a webhook. An
-- attempt's result is its exit code or signal and the tails of its logs.
ALTER TABLE hook_deliveries
    ADD COLUMN command text NOT NULL DEFAULT '',
    ADD COLUMN exit_code integer NOT NULL DEFAULT 0,
    ADD COLUMN term_signal integer NOT NULL DEFAULT 0,
    ADD COLUMN stdout_tail text NOT NULL DEFAULT '',
    ADD COLUMN stderr_tail text NOT NULL DEFAULT '';
