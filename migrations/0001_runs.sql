-- The results store: one row per audit run, its per-QI results and its tail fit.
-- Portable DDL (DuckDB and PostgreSQL). Timestamps are UTC. Lists and parameters are JSON text
-- so every engine stores them the same way.

create table qar_runs (
    run_id text primary key,            -- a UUID made by qar, so concurrent writers never clash
    started_at timestamp not null,
    finished_at timestamp,
    scan_name text,                     -- the [[scan]] name in qar.toml; null for qar audit
    source text not null,               -- the audited source, password masked
    table_name text,
    columns text,                       -- JSON list of the QI columns (as resolved when complete)
    parameters text not null,           -- JSON object: p, alpha, pi_u, pwm, k
    engine text,
    engine_version text,
    qar_version text not null,
    status text not null check (status in ('running', 'complete', 'failed')),
    error text,                         -- why a failed run failed (secrets masked)
    duration_seconds double precision,
    row_count bigint,                   -- L
    n_qi bigint,
    risk double precision,              -- T̂(p, α); null when there is no tail
    warnings text                       -- JSON list
);

create index qar_runs_table_started on qar_runs (table_name, started_at);

create table qar_qi_results (
    run_id text not null references qar_runs (run_id),
    qi_index integer not null,
    columns text not null,              -- JSON list of the p columns of this QI
    distinct_count bigint not null,     -- H(j)
    singletons bigint not null,         -- S(j)
    theta double precision not null,    -- θ(j) = H(j) / L
    min_class_size bigint not null,
    primary key (run_id, qi_index)
);

create table qar_fits (
    run_id text primary key references qar_runs (run_id),
    u double precision not null,
    xi double precision not null,
    beta double precision not null,
    n_exceedances integer not null,
    risk double precision not null,     -- T̂(p, α)
    n_qi bigint not null,
    n_clipped bigint not null
);
