-- Every number of a run as JSON, so a report rebuilt from the store (qar report --from-store)
-- has every section the live report had: the class-size histograms of each QI, the tail fit's
-- warnings, the uniqueness measures of audit --group-size, the top records of qar records. The
-- object's keys are the report's inputs ("audit", "records"); each is the result's fields
-- (qar_sql.results.to_plain), floats that are not finite as "NaN"/"Infinity". Value combinations
-- of the data (uniqueness's most exposed values) and raw record keys are never stored here.
-- Portable DDL (DuckDB and PostgreSQL): a new table, so no dialect sibling is needed.

create table qar_run_results (
    run_id text primary key references qar_runs (run_id),
    results text not null               -- JSON object (above)
);
