-- Runs that are still running can be told from runs whose process is gone: the process id and
-- host of the run, a heartbeat it refreshes while it works, and a fourth status 'interrupted'
-- (set on a 'running' run whose process is gone, by the next run on the store).
-- DuckDB cannot change a CHECK constraint in place, so its tables are rebuilt with their rows
-- (same columns, same keys, in one transaction); PostgreSQL alters them (0003_run_liveness.sql).

create temp table qar_0003_runs as select * from qar_runs;
create temp table qar_0003_qi as select * from qar_qi_results;
create temp table qar_0003_fits as select * from qar_fits;
create temp table qar_0003_top as select * from qar_top_records;
drop table qar_top_records;
drop table qar_fits;
drop table qar_qi_results;
drop index qar_runs_table_started;
drop table qar_runs;

create table qar_runs (
    run_id text primary key,
    started_at timestamp not null,
    finished_at timestamp,
    scan_name text,
    source text not null,
    table_name text,
    columns text,
    parameters text not null,
    engine text,
    engine_version text,
    qar_version text not null,
    status text not null check (status in ('running', 'complete', 'failed', 'interrupted')),
    error text,
    duration_seconds double precision,
    row_count bigint,
    n_qi bigint,
    risk double precision,
    warnings text,
    pid integer,                        -- the process that ran it
    host text,                          -- the machine it ran on (socket.gethostname())
    heartbeat_at timestamp              -- refreshed while the run works (UTC)
);
insert into qar_runs (run_id, started_at, finished_at, scan_name, source, table_name, columns, parameters, engine,
    engine_version, qar_version, status, error, duration_seconds, row_count, n_qi, risk, warnings)
    select run_id, started_at, finished_at, scan_name, source, table_name, columns, parameters, engine,
    engine_version, qar_version, status, error, duration_seconds, row_count, n_qi, risk, warnings from qar_0003_runs;
create index qar_runs_table_started on qar_runs (table_name, started_at);

create table qar_qi_results (
    run_id text not null references qar_runs (run_id),
    qi_index integer not null,
    columns text not null,
    distinct_count bigint not null,
    singletons bigint not null,
    theta double precision not null,
    min_class_size bigint not null,
    primary key (run_id, qi_index)
);
insert into qar_qi_results select * from qar_0003_qi;

create table qar_fits (
    run_id text primary key references qar_runs (run_id),
    u double precision not null,
    xi double precision not null,
    beta double precision not null,
    n_exceedances integer not null,
    risk double precision not null,
    n_qi bigint not null,
    n_clipped bigint not null
);
insert into qar_fits select * from qar_0003_fits;

create table qar_top_records (
    run_id text not null references qar_runs (run_id),
    rank integer not null,
    record_key text not null,
    key_hashed boolean not null,
    contribution double precision not null,
    primary key (run_id, rank)
);
insert into qar_top_records select * from qar_0003_top;

drop table qar_0003_runs;
drop table qar_0003_qi;
drop table qar_0003_fits;
drop table qar_0003_top;
