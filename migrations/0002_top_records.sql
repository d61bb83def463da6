-- The records that contribute most to a run's risk (optional). With --hash-keys the key is
-- HMAC-SHA256(secret, key) in hex, so the store never holds the raw identifier.

create table qar_top_records (
    run_id text not null references qar_runs (run_id),
    rank integer not null,              -- 1 = the largest contribution
    record_key text not null,
    key_hashed boolean not null,
    contribution double precision not null,
    primary key (run_id, rank)
);
