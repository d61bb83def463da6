-- One pass per batch for record-level commands, two kinds of rows:
--   kind 0: (qi, class size, number of classes): the class-size histogram of the audit;
--   kind 1: (record r, word w, bits): the record's uniqueness flags in word w (sum of distinct
--           powers of two = bitwise or), for records unique on some QI of the batch.
{% from "default/_classes.sql" import with_encoded %}
{{ with_encoded(encode_sql, dialect) }}
g as {{ "materialized " if dialect.cte_materialized }}(
{{ groups_sql | indent(2, true) }}
)
select 0 as kind, qi as a, size as b, count(*) as c
from g
group by qi, size
union all
select 1 as kind, r as a, w as b, sum(bit) as c
from g
where size = 1
group by r, w
