{#- A number written in quotes in YAML (threshold: "0.5") reaches a macro as text: refuse it with
    a sentence saying so, rather than "0.5 is not a number ... such as 0.5". -#}
{% macro check_not_text(macro, name, value) -%}
  {%- if value is string -%}
    {{ exceptions.raise_compiler_error(macro ~ ": " ~ name ~ " is the text '" ~ value ~ "' (quoted in the YAML), not a number; write it without quotes, as " ~ name ~ ": " ~ value) }}
  {%- endif -%}
{%- endmacro %}
