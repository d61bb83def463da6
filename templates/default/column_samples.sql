-- One row: one non-NULL value of each column (NULL when the column is entirely NULL), so that
-- the record commands can tell numeric and ordinal columns from text (nominal) ones.
select
{% for col in columns %}
  (select {{ q(col) }} from {{ relation }} as t where {{ q(col) }} is not null limit 1) as s{{ loop.index0 }}{{ "," if not loop.last }}
{% endfor %}
