-- One row: how many records have a NULL in the key, and how many key values occur more than once.
select
  (select count(*) from {{ relation }} where {% for k in key %}{{ q(k) }} is null{{ " or " if not loop.last }}{% endfor %}) as null_keys,
  (select count(*) from (
     select 1
     from {{ relation }}
     group by {% for k in key %}{{ q(k) }}{{ ", " if not loop.last }}{% endfor %}
     having count(*) > 1
   ) dup) as duplicate_keys
