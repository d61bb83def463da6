-- Runs that are still running can be told from runs whose process is gone: the process id and
-- host of the run, a heartbeat it refreshes while it works, and a fourth status 'interrupted'
-- (set on a 'running' run whose process is gone, by the next run on the store).
-- PostgreSQL names the column's CHECK constraint qar_runs_status_check. DuckDB rebuilds the
-- table instead (0003_run_liveness.duckdb.sql).

alter table qar_runs drop constraint qar_runs_status_check;
alter table qar_runs add constraint qar_runs_status_check
    check (status in ('running', 'complete', 'failed', 'interrupted'));
alter table qar_runs add column pid integer;           -- the process that ran it
alter table qar_runs add column host text;             -- the machine it ran on (socket.gethostname())
alter table qar_runs add column heartbeat_at timestamp; -- refreshed while the run works (UTC)
