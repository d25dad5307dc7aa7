{#-
  One row per input document, with the six base columns typed, body_hash, and every extra input column
  (for example WARC lineage) carried along unchanged.  Stored (not a view): a snapshot of the input, read
  once, so later stages and the published database never depend on the input file's path.

  Bad input stops the build here, before any fingerprinting, with one message that names every problem
  and the offending rows: duplicate doc_id (the ids), empty doc_id (the input row numbers), crawled_at
  missing or not a date/timestamp (the doc_ids and values).  A null body is kept as an empty document.

  Incremental on DuckDB (config in _staging__models.yml): the checks read every input row, but only new
  or changed rows are written again (changed_documents_only below), and a post-hook deletes the rows of
  documents that left the input, so the table always equals a full rebuild.
-#}

{%- set input = documents_input() -%}
{%- set base_columns = ["doc_id", "source", "domain", "crawled_at", "title", "body"] -%}
{%- set extra_columns = [] -%}
{%- for column in input.columns -%}
    {%- if column | lower not in base_columns -%}{%- do extra_columns.append(adapter.quote(column)) -%}{%- endif -%}
{%- endfor -%}
{%- set typed_columns -%}
        cast(source.doc_id as string) as doc_id,
        cast(source.source as string) as source,
        cast(source.domain as string) as domain,
        {{ parse_timestamp("source.crawled_at") }} as crawled_at,
        cast(source.title as string) as title,
        cast(source.body as string) as body,
        {{ text_hash("cast(source.body as string)") }} as body_hash{% for column in extra_columns %},
        source.{{ column }}{% endfor %}
{%- endset %}

with

source as (

    select * from {{ input.relation }}

),

keys as (

    -- the narrow columns the checks need: the bodies are read once, by final
    select
        cast(doc_id as string) as doc_id,
        {{ parse_timestamp("crawled_at") }} as crawled_at,
        cast(crawled_at as string) as crawled_at_text,
        {{ input_row_number() }} as input_row
    from source

),

duplicate_ids as (

    select doc_id
    from keys
    where doc_id is not null
    group by doc_id
    having count(*) > 1

),

problems as (

    select
        'duplicate doc_id (' || count(*) || '): '
        || {{ agg_join("doc_id", "doc_id", 20) }} as problem
    from duplicate_ids
    having count(*) > 0

    union all

    select
        'empty doc_id in ' || count(*) || ' row(s), input row(s) '
        || {{ agg_join("cast(input_row as string)", "input_row", 20) }} as problem
    from keys
    where doc_id is null or trim(doc_id) = ''
    having count(*) > 0

    union all

    select
        'crawled_at is missing or not a date/timestamp in ' || count(*) || ' row(s): '
        || {{ agg_join("doc_id || '=' || coalesce(crawled_at_text, 'null')", "input_row", 20) }} as problem
    from keys
    where crawled_at is null
    having count(*) > 0

),

gate as (

    select
        case
            when count(*) = 0 then true
            else {{ raise_error("'bad input in " ~ input.label | replace("'", "''") ~ ": ' || "
                ~ agg_join("problem", "problem", 10, "'; '")) }}
        end as input_is_valid
    from problems

),

documents as (

    select
        {{ typed_columns }}
    from source
    cross join gate
    where gate.input_is_valid

),

final as (

    select * from documents
    where {{ changed_documents_only("documents", typed_columns, input.relation) }}

)

select * from final
