-- One row per record, in key order: r (0, 1, ... in key order), then the integer code of each
-- quasi-identifier column as encode.sql assigns it (codes follow the value order, NULL = -1).
-- Read only by the record commands that work in memory (greedy elimination, entropy, PLS):
-- L x N small integers, never the values themselves.
with encoded as (
{{ encode_sql | indent(2, true) }}
)
select
  r{% for i in range(n_columns) %}, c{{ i }}{% endfor %}

from encoded
order by r
