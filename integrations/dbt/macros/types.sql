{#- What differs between warehouses, one dispatched macro each (portable SQL in default__, an
    adapter's override only where it needs one, with the reason). qar-sql's own dialects say the
    same (qar_sql/engines/dialects). -#}

{#- The type name CAST takes for a 64-bit float. -#}
{% macro double_type() -%}
  {{ return(adapter.dispatch('double_type', 'qar')()) }}
{%- endmacro %}

{% macro default__double_type() -%}
  {{ return('double precision') }}
{%- endmacro %}

{#- BigQuery names it float64. -#}
{% macro bigquery__double_type() -%}
  {{ return('float64') }}
{%- endmacro %}

{#- Spark SQL (Databricks) and Trino have no "double precision" in a cast. -#}
{% macro spark__double_type() -%}
  {{ return('double') }}
{%- endmacro %}

{% macro databricks__double_type() -%}
  {{ return('double') }}
{%- endmacro %}

{% macro trino__double_type() -%}
  {{ return('double') }}
{%- endmacro %}

{#- A string literal holding any text: a quote inside doubled. -#}
{% macro string_literal(value) -%}
  {{ return(adapter.dispatch('string_literal', 'qar')(value)) }}
{%- endmacro %}

{% macro default__string_literal(value) -%}
  {{ return("'" ~ value | replace("'", "''") ~ "'") }}
{%- endmacro %}

{#- In Snowflake's and Redshift's literals a backslash escapes, so it is doubled. -#}
{% macro snowflake__string_literal(value) -%}
  {{ return("'" ~ value | replace("\\", "\\\\") | replace("'", "''") ~ "'") }}
{%- endmacro %}

{% macro redshift__string_literal(value) -%}
  {{ return("'" ~ value | replace("\\", "\\\\") | replace("'", "''") ~ "'") }}
{%- endmacro %}

{#- BigQuery and Spark SQL (Databricks): a backslash escapes, and '' is not a quote but the end of
    one literal and the start of the next, so a quote is written \'. -#}
{% macro bigquery__string_literal(value) -%}
  {{ return("'" ~ value | replace("\\", "\\\\") | replace("'", "\\'") ~ "'") }}
{%- endmacro %}

{% macro spark__string_literal(value) -%}
  {{ return(qar.bigquery__string_literal(value)) }}
{%- endmacro %}

{% macro databricks__string_literal(value) -%}
  {{ return(qar.bigquery__string_literal(value)) }}
{%- endmacro %}

{#- A column named in YAML or in the macro's arguments, quoted so that any name (spaces, quotes,
    reserved words) is one identifier: the quote character inside it doubled, as qar's own
    dialects quote (adapter.quote() does not double it, so a column we"ird broke the SQL). -#}
{% macro quote_column(name) -%}
  {{ return(adapter.dispatch('quote_column', 'qar')(name)) }}
{%- endmacro %}

{% macro default__quote_column(name) -%}
  {{ return('"' ~ name | replace('"', '""') ~ '"') }}
{%- endmacro %}

{#- Backticks, a backtick inside doubled: Spark SQL (Databricks) and MySQL/MariaDB. -#}
{% macro backtick_quote(name) -%}
  {{ return('`' ~ name | replace('`', '``') ~ '`') }}
{%- endmacro %}

{% macro spark__quote_column(name) -%}
  {{ return(qar.backtick_quote(name)) }}
{%- endmacro %}

{% macro databricks__quote_column(name) -%}
  {{ return(qar.backtick_quote(name)) }}
{%- endmacro %}

{% macro mysql__quote_column(name) -%}
  {{ return(qar.backtick_quote(name)) }}
{%- endmacro %}

{% macro mariadb__quote_column(name) -%}
  {{ return(qar.backtick_quote(name)) }}
{%- endmacro %}

{#- BigQuery: backticks, in which a backslash escapes, so it is doubled and a backtick written \`. -#}
{% macro bigquery__quote_column(name) -%}
  {{ return('`' ~ name | replace('\\', '\\\\') | replace('`', '\\`') ~ '`') }}
{%- endmacro %}

{#- Snowflake folds unquoted names to upper case: a column written age in a model is AGE, so an
    all-lower-case plain name is quoted upper-cased; any other name is quoted as written. -#}
{% macro snowflake__quote_column(name) -%}
  {%- if modules.re.fullmatch('[a-z_][a-z0-9_$]*', name) -%}
    {{ return(qar.default__quote_column(name | upper)) }}
  {%- endif -%}
  {{ return(qar.default__quote_column(name)) }}
{%- endmacro %}
