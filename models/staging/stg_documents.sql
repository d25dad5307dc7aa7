{#-
  One row per input document, with the six base columns typed and every extra input column (for example
  WARC lineage) carried along unchanged.  Materialized as a table: it is a snapshot of the input, read
  once, so later stages and the published database never depend on the input file's path.
-#}
{{ config(materialized="table") }}

{%- set input = documents_input() -%}
{%- set base_columns = ["doc_id", "source", "domain", "crawled_at", "title", "body"] -%}
{%- set extra_columns = [] -%}
{%- for column in input.columns -%}
    {%- if column | lower not in base_columns -%}{%- do extra_columns.append(column) -%}{%- endif -%}
{%- endfor %}

with

source as (

    select * from {{ input.relation }}

),

typed as (

    select
        cast(doc_id as varchar) as doc_id,
        cast(source as varchar) as source,
        cast(domain as varchar) as domain,
        {{ parse_timestamp("crawled_at") }} as crawled_at,
        cast(title as varchar) as title,
        cast(body as varchar) as body{% for column in extra_columns %},
        {{ adapter.quote(column) }}{% endfor %}
    from source

)

select * from typed
