-- DuckDB only: keep the coded columns in a session temp table (in memory, never in the audited
-- database; allowed on a read-only connection), so every batch reads codes, not the source.
create temp table {{ q(name) }} as
{{ encode_sql }}
