-- DuckDB only: keep the coded columns in a session temp table (in memory, never in the audited
-- database; allowed on a read-only connection), so every batch reads codes, not the source.
-- With code_types, each code column is stored in the narrowest integer type that holds it.
create temp table {{ q(name) }} as
{% if code_types is defined and code_types %}
select * replace (
{% for t in code_types %}
  cast(c{{ loop.index0 }} as {{ t }}) as c{{ loop.index0 }}{{ "," if not loop.last }}
{% endfor %}
)
from (
{{ encode_sql }}
) as e
{% else %}
{{ encode_sql }}
{% endif %}
