{#-
  One row per input document, with the six base columns typed, body_hash, and every extra input column
  (for example WARC lineage) carried along unchanged.  Stored (not a view): a snapshot of the input, read
  once, so later stages and the published database never depend on the input file's path.

  The input contract (macros/inputs/input_contract.sql, declared in _staging__models.yml) is checked before
  this model runs: required columns, accepted types, no column named like one the project adds.  Each
  base column is staged by its input type: crawled_at as a UTC timestamp, binary text decoded as UTF-8.
  Bad rows stop the build here, before any fingerprinting, with one message that names every problem
  and the offending rows: duplicate doc_id (the ids), empty doc_id (the input row numbers), crawled_at
  missing or not a date/timestamp (the doc_ids and values), binary text that is not UTF-8 (the
  doc_ids).  A null body is kept as an empty document.

  On Spark the rows are spread over the shuffle's partitions by doc_id (repartition_hint), so that an
  input read as one file still gives a table of many files and every later stage runs in many tasks.

  Incremental on DuckDB (config in _staging__models.yml): the checks read every input row, but only the
  files not staged yet (by input_read_key) are read whole, only their new or changed rows are written
  again, and a pre-hook first deletes the rows of documents that left the input, so the table always
  equals a full rebuild (macros/inputs/staging.sql).
-#}

{%- set input = documents_input() -%}
{%- set staged = staged_select(input) -%}
{%- set filters = staging_filters(input, staged) -%}

with

source as {{ not_materialized() }} (

    -- read twice (narrow columns for the checks, then every column): never a stored copy of the bodies
    select * from {{ input.keyed_relation or input.relation }}

),

keys as (

    -- the narrow columns the checks need: the bodies are read once, by documents
    select
        {{ staged_column("doc_id", "doc_id", input.categories.get("doc_id", "text")) }} as doc_id,
        {{ staged_column("crawled_at", "crawled_at", input.categories.get("crawled_at", "text")) }} as crawled_at,
        cast(crawled_at as string) as crawled_at_text,
        {{ staged.invalid_utf8_check }} as has_invalid_utf8,
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

    union all

    select
        'bytes that are not UTF-8 (in ' || {{ sql_string(staged.binary_columns | join(" or ") or "body") }} || ') in '
        || count(*) || ' row(s), doc_id: ' || {{ agg_join("doc_id", "input_row", 20) }}
        || ' (convert them to UTF-8, or set var invalid_utf8: replace to read them as U+FFFD)' as problem
    from keys
    where has_invalid_utf8
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

documents as {{ not_materialized() }} (

    -- read again by an incremental build's filters.rows for the ids of the rows to write
    select
        {{ staged.select_list }}
    from source
    cross join gate
    where gate.input_is_valid and {{ filters.files }}

),

final as (

    select {{ repartition_hint("doc_id") }} * from documents
    where {{ filters.rows }}

)

select * from final
