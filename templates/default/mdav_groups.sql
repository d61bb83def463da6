-- The MDAV grouping of a multivariate microaggregation as a derived table qar_m(qar__mid,
-- qar__mg): one (row identity, group) pair per grouped row, computed by qar_sql.stats.mdav
-- (MDAV has no set-based form: each group depends on the ones formed before it).
(values
{% for i, g in groups %}
  ({{ i }}, {{ g }}){{ "," if not loop.last }}
{% endfor %}
) as qar_m (qar__mid, qar__mg)
