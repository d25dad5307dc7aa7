{#-
  Engine-specific SQL, one dispatched macro per difference.  Models call these and stay engine-neutral;
  a new engine adds `<adapter>__<macro>` implementations here.
-#}

{#- Select-list items that turn one row with a list into one row per element. -#}
{% macro explode_list(list_expression, value_alias) %}
    {{- return(adapter.dispatch("explode_list", "web_text_dedup")(list_expression, value_alias)) -}}
{% endmacro %}

{% macro duckdb__explode_list(list_expression, value_alias) -%}
    unnest({{ list_expression }}) as {{ value_alias }}
{%- endmacro %}

{% macro spark__explode_list(list_expression, value_alias) -%}
    explode({{ list_expression }}) as {{ value_alias }}
{%- endmacro %}


{#- Like explode_list, plus the element's 0-based position. -#}
{% macro explode_list_with_position(list_expression, position_alias, value_alias) %}
    {{- return(adapter.dispatch("explode_list_with_position", "web_text_dedup")(
        list_expression, position_alias, value_alias)) -}}
{% endmacro %}

{% macro duckdb__explode_list_with_position(list_expression, position_alias, value_alias) -%}
    unnest(range(len({{ list_expression }}))) as {{ position_alias }},
    unnest({{ list_expression }}) as {{ value_alias }}
{%- endmacro %}

{% macro spark__explode_list_with_position(list_expression, position_alias, value_alias) -%}
    posexplode({{ list_expression }}) as ({{ position_alias }}, {{ value_alias }})
{%- endmacro %}


{#- Fraction of positions where two equal-length signatures agree (0.0 for empty lists). -#}
{% macro signature_overlap(left_list, right_list) %}
    {{- return(adapter.dispatch("signature_overlap", "web_text_dedup")(left_list, right_list)) -}}
{% endmacro %}

{#- DuckDB: a vectorized function of the registry (webdedup/engines/udfs.py): the list expression
    coalesce(len(list_filter(list_zip(l, r), lambda p: p[1] = p[2])) / nullif(len(l), 0), 0.0), which its
    test keeps as the oracle, took about 8 of scored_pairs' 40 CPU s over 5.9M anchor pairs (85% duplicates;
    docs/benchmarks.md, session 42). -#}
{% macro duckdb__signature_overlap(left_list, right_list) -%}
    webdedup_signature_overlap({{ left_list }}, {{ right_list }})
{%- endmacro %}

{% macro spark__signature_overlap(left_list, right_list) -%}
    coalesce(
        aggregate(
            zip_with({{ left_list }}, {{ right_list }}, (l, r) -> case when l = r then 1 else 0 end),
            0, (agreeing, x) -> agreeing + x
        ) / nullif(size({{ left_list }}), 0),
        0.0
    )
{%- endmacro %}


{#- Up to `max_items` values of `expression`, ordered by `order_by`, joined into one string (an aggregate). -#}
{% macro agg_join(expression, order_by, max_items, separator="', '") %}
    {{- return(adapter.dispatch("agg_join", "web_text_dedup")(expression, order_by, max_items, separator)) -}}
{% endmacro %}

{% macro duckdb__agg_join(expression, order_by, max_items, separator) -%}
    array_to_string(list_slice(list({{ expression }} order by {{ order_by }}), 1, {{ max_items }}), {{ separator }})
    || case when count(*) > {{ max_items }} then ' ...' else '' end
{%- endmacro %}

{% macro spark__agg_join(expression, order_by, max_items, separator) -%}
    array_join(
        slice(
            transform(array_sort(collect_list(struct({{ order_by }} as k, {{ expression }} as v))), x -> x.v),
            1, {{ max_items }}
        ),
        {{ separator }}
    )
    || case when count(*) > {{ max_items }} then ' ...' else '' end
{%- endmacro %}


{#- Stop the query with `message_expression` (a string expression) as the error message. -#}
{% macro raise_error(message_expression) %}
    {{- return(adapter.dispatch("raise_error", "web_text_dedup")(message_expression)) -}}
{% endmacro %}

{% macro duckdb__raise_error(message_expression) -%}
    error({{ message_expression }})
{%- endmacro %}

{% macro spark__raise_error(message_expression) -%}
    raise_error({{ message_expression }})
{%- endmacro %}


{#- One value that orders as its parts in turn (an unnamed struct), e.g. for min_by's ordering argument. -#}
{% macro ordered_tuple(parts) %}
    {{- return(adapter.dispatch("ordered_tuple", "web_text_dedup")(parts)) -}}
{% endmacro %}

{% macro duckdb__ordered_tuple(parts) -%}
    row({{ parts | join(", ") }})
{%- endmacro %}

{% macro spark__ordered_tuple(parts) -%}
    struct({{ parts | join(", ") }})
{%- endmacro %}

{#-
  An integer index as a block of 64 and, as an aggregate over one block's rows, how many distinct indexes
  it holds (the bits set in a 64-bit mask of them): model_rules's unique_index.
-#}
{% macro index_block(index) %}
    {{- return(adapter.dispatch("index_block", "web_text_dedup")(index)) -}}
{% endmacro %}

{% macro duckdb__index_block(index) -%}
    {{ index }} // 64
{%- endmacro %}

{% macro spark__index_block(index) -%}
    {{ index }} div 64
{%- endmacro %}

{% macro distinct_indexes_in_block(index) %}
    {{- return(adapter.dispatch("distinct_indexes_in_block", "web_text_dedup")(index)) -}}
{% endmacro %}

{% macro duckdb__distinct_indexes_in_block(index) -%}
    bit_count(bit_or(cast(1 as ubigint) << cast(({{ index }} % 64 + 64) % 64 as integer)))
{%- endmacro %}

{% macro spark__distinct_indexes_in_block(index) -%}
    bit_count(bit_or(shiftleft(cast(1 as bigint), cast(pmod({{ index }}, 64) as int))))
{%- endmacro %}

{#- A relation with one column `i` holding the integers 0 .. n - 1. -#}
{% macro integer_series(n) %}
    {{- return(adapter.dispatch("integer_series", "web_text_dedup")(n)) -}}
{% endmacro %}

{% macro duckdb__integer_series(n) -%}
    (select range as i from range({{ n }}))
{%- endmacro %}

{% macro spark__integer_series(n) -%}
    (select id as i from range({{ n }}))
{%- endmacro %}


{#-
  The 1-based position of each row in the input (a select-list expression), for error messages.  Spark
  has no unordered row_number(): monotonically_increasing_id() + 1 is unique and follows the input
  order, and is consecutive within each input split (one split for files up to 128 MB).
-#}
{% macro input_row_number() %}
    {{- return(adapter.dispatch("input_row_number", "web_text_dedup")()) -}}
{% endmacro %}

{% macro duckdb__input_row_number() -%}
    row_number() over ()
{%- endmacro %}

{% macro spark__input_row_number() -%}
    (monotonically_increasing_id() + 1)
{%- endmacro %}


{#-
  Select-list items: every column of `alias` except `columns`.  `relation` is the relation behind the
  alias; engines without `* exclude` list its columns from the catalog.
-#}
{% macro star_except(alias, relation, columns) %}
    {{- return(adapter.dispatch("star_except", "web_text_dedup")(alias, relation, columns)) -}}
{% endmacro %}

{% macro duckdb__star_except(alias, relation, columns) -%}
    {{ alias }}.* exclude ({{ columns | join(", ") }})
{%- endmacro %}

{% macro spark__star_except(alias, relation, columns) -%}
    {%- if not execute -%}{{ return(alias ~ ".*") }}{%- endif -%}
    {%- set excluded = columns | map("lower") | list -%}
    {%- set kept = [] -%}
    {%- for column in adapter.get_columns_in_relation(relation) -%}
        {%- if column.name | lower not in excluded -%}
            {%- do kept.append(alias ~ "." ~ adapter.quote(column.name)) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ kept | join(",\n        ") }}
{%- endmacro %}


{#-
  A query: the rows of the stored table `table` (alias `stored`) that `lookup` (alias `matched`, one row
  per key of the table) keeps (its boolean column `keep`), with `select_list`; on DuckDB in the table's
  stored row order.  A DuckDB join gives its rows in the order its threads finish, so an export of it
  needs a global sort, which for the release (rows with their bodies) was a third of a 1M build and its
  largest spill.  Here the lookup's narrow rows are sorted into the table's rowid order and laid beside
  its rows by a POSITIONAL JOIN, which reads the table once, in order, on one thread: an export keeps that
  order and is byte-identical on a rerun.  Rows that do not line up (a key without its lookup row, or a
  key with two) stop the query, naming the first key where they part.  A reader's LIMIT stops the table's
  scan early, and the join then pads the lookup's other rows with nulls: those are not rows (the key is
  never null in the table).  Spark: an inner join (exports sort by their key).
-#}
{% macro select_in_stored_order(select_list, table, lookup, key, keep) %}
    {{- return(adapter.dispatch("select_in_stored_order", "web_text_dedup")(
        select_list, table, lookup, key, keep)) -}}
{% endmacro %}

{% macro duckdb__select_in_stored_order(select_list, table, lookup, key, keep) -%}
    select {{ select_list }}
    from {{ table }} as stored
    positional join (
        select found.*
        from (select {{ key }}, rowid as stored_position from {{ table }}) as positions
        left join {{ lookup }} as found on positions.{{ key }} = found.{{ key }}
        order by positions.stored_position
    ) as matched
    where
        case
            -- past the table's last row: a reader's LIMIT stopped its scan, and the positional join pads the
            -- lookup's remaining rows with nulls (or the lookup repeats the last key: the rows are all out)
            when stored.{{ key }} is null then false
            when stored.{{ key }} is distinct from matched.{{ key }}
                then error({{ sql_string(lookup | string ~ " must hold one row per " ~ key ~ " of " ~ table
                    ~ ": at " ~ key ~ " ") }} || coalesce(stored.{{ key }}, 'null') || ' it gives '
                    || coalesce(matched.{{ key }}, 'none'))
            else matched.{{ keep }}
        end
{%- endmacro %}

{% macro spark__select_in_stored_order(select_list, table, lookup, key, keep) -%}
    select {{ select_list }}
    from {{ table }} as stored
    inner join {{ lookup }} as matched on stored.{{ key }} = matched.{{ key }}
    where matched.{{ keep }}
{%- endmacro %}


{#- P(candidate | J) for LSH with `bands` bands of `rows` rows: 1 - (1 - J^rows)^bands. -#}
{% macro lsh_candidate_probability(jaccard, rows, bands) -%}
    (1 - power(1 - power({{ jaccard }}, {{ rows }}), {{ bands }}))
{%- endmacro %}


{#- The keyword that makes a CTE an optimization fence, where the engine has one (DuckDB: materialized). -#}
{% macro materialized_cte() %}
    {{- return(adapter.dispatch("materialized_cte", "web_text_dedup")()) -}}
{% endmacro %}

{% macro default__materialized_cte() %}{% endmacro %}

{% macro duckdb__materialized_cte() %}materialized{% endmacro %}


{#-
  delete_rows_without_match(relation, reference, key): a post-hook of the incremental models that deletes
  the rows of `relation` whose key is no longer in `reference` (documents that left the input).  Tables
  rebuilt in full (Spark) have none: nothing to do.
-#}
{% macro delete_rows_without_match(relation, reference, key) %}
    {{- return(adapter.dispatch("delete_rows_without_match", "web_text_dedup")(relation, reference, key)) -}}
{% endmacro %}

{% macro default__delete_rows_without_match(relation, reference, key) %}{% endmacro %}

{% macro duckdb__delete_rows_without_match(relation, reference, key) %}
    delete from {{ relation }} as kept
    where not exists (select 1 from {{ reference }} as present where present.{{ key }} = kept.{{ key }})
{% endmacro %}


{#-
  update_column_from(relation, reference, key, column): sets `column` of the rows of relation to the value
  the row of reference with the same key holds, where they differ (incremental stg_documents' pre-hook;
  a no-op where tables are rebuilt whole, as on Spark).
-#}
{% macro update_column_from(relation, reference, key, column) %}
    {{- return(adapter.dispatch("update_column_from", "web_text_dedup")(relation, reference, key, column)) -}}
{% endmacro %}

{% macro default__update_column_from(relation, reference, key, column) %}{% endmacro %}

{% macro duckdb__update_column_from(relation, reference, key, column) %}
    update {{ relation }} as kept set {{ column }} = present.{{ column }}
    from {{ reference }} as present
    where present.{{ key }} = kept.{{ key }} and present.{{ column }} is distinct from kept.{{ column }}
{% endmacro %}


{#-
  mean_of_ratios(numerator, denominator, count): an aggregate, the exact mean of the ratios behind the
  group's rows, rounded once to a double (webdedup_mean_of_ratios, from the registry
  webdedup/engines/udfs.py); each row stands for `count` ratios with that denominator whose numerators
  sum to `numerator` (integer expressions), so a caller groups its ratios by denominator first and the
  list handed to Python stays short (a cluster of 6,000 near-identical pages has 17.6M edges but a few
  hundred denominators).  A sum of doubles depends on its summation order, which differs between engines
  and between parallel runs; this does not, so every engine writes the same bits.

  A group of one row (one denominator: most clusters) needs no Python: its mean is numerator /
  (denominator x count), and one IEEE division of two integers below 2^53 (exact as doubles) is
  correctly rounded on every engine, the value the function gives (half the calls on the 1M benchmark).
-#}
{% macro mean_of_ratios(numerator, denominator, count) %}
    {%- set exact_below = 2 ** 26 -%}
    case
        when
            count(*) = 1
            and max({{ denominator }}) between 1 and {{ exact_below - 1 }}
            and max({{ count }}) between 1 and {{ exact_below - 1 }}
            and max({{ numerator }}) between 0 and {{ exact_below * exact_below - 1 }}
            then cast(max({{ numerator }}) as double) / cast(max({{ denominator }}) * max({{ count }}) as double)
        else {{ adapter.dispatch("mean_of_ratios", "web_text_dedup")(numerator, denominator, count) }}
    end
{%- endmacro %}

{% macro duckdb__mean_of_ratios(numerator, denominator, count) -%}
    webdedup_mean_of_ratios(list([
        cast({{ numerator }} as bigint), cast({{ denominator }} as bigint), cast({{ count }} as bigint)
    ]))
{%- endmacro %}

{% macro spark__mean_of_ratios(numerator, denominator, count) -%}
    webdedup_mean_of_ratios(collect_list(array(
        cast({{ numerator }} as bigint), cast({{ denominator }} as bigint), cast({{ count }} as bigint)
    )))
{%- endmacro %}


{#-
  rounded_percent(part, whole, digits): 100 * part / whole rounded half up to `digits` decimals, from
  integers (null when whole is 0).  The rounding is done on exact integers and only the final division
  by 10^digits is a double division, correctly rounded on every engine: the same bits everywhere
  (rounding a double product can tip the other way on another engine).
-#}
{% macro rounded_percent(part, whole, digits) -%}
    {%- set scale = 10 ** digits -%}
    {%- set whole_expression = "nullif(cast(" ~ whole ~ " as bigint), 0)" -%}
    ({{ integer_divide("2 * " ~ (100 * scale) ~ " * cast(" ~ part ~ " as bigint) + " ~ whole_expression,
        "2 * " ~ whole_expression) }}) / {{ scale }}.0e0
{%- endmacro %}


{#- a div b for non-negative bigints (the integer quotient, rounded down). -#}
{% macro integer_divide(a, b) %}
    {{- return(adapter.dispatch("integer_divide", "web_text_dedup")(a, b)) -}}
{% endmacro %}

{% macro duckdb__integer_divide(a, b) -%}
    ({{ a }}) // ({{ b }})
{%- endmacro %}

{% macro spark__integer_divide(a, b) -%}
    ({{ a }}) div ({{ b }})
{%- endmacro %}


{#-
  A 63-bit hash of a text as a non-negative bigint: stg_documents stores it beside each body, so that
  incremental builds see changed pages without reading bodies again (DuckDB's string hash; Spark's
  xxhash64).  The engines' values differ; each compares only with its own.
-#}
{% macro text_hash(expression) %}
    {{- return(adapter.dispatch("text_hash", "web_text_dedup")(expression)) -}}
{% endmacro %}

{% macro duckdb__text_hash(expression) -%}
    cast(hash({{ expression }}) >> 1 as bigint)
{%- endmacro %}

{% macro spark__text_hash(expression) -%}
    shiftright(xxhash64({{ expression }}), 1)
{%- endmacro %}


{#- The name of the macro adapter.dispatch picks for name on this engine (the manifest reports it). -#}
{% macro implementation(name) %}
    {#- through a variable: dbt's static parser only accepts a literal macro name in adapter.dispatch(...) -#}
    {%- set dispatch = adapter.dispatch -%}
    {{- return(dispatch(name, "web_text_dedup").get_name()) -}}
{% endmacro %}


{#- A column name as a quoted identifier, quote characters inside it escaped (input columns may hold any). -#}
{% macro quoted_column(name) %}
    {{- return(adapter.dispatch("quoted_column", "web_text_dedup")(name)) -}}
{% endmacro %}

{% macro duckdb__quoted_column(name) -%}
    {{- return('"' ~ (name | replace('"', '""')) ~ '"') -}}
{%- endmacro %}

{% macro spark__quoted_column(name) -%}
    {{- return("`" ~ (name | replace("`", "``")) ~ "`") -}}
{%- endmacro %}


{#-
  line_key(expression): a line as boilerplate_filter compares lines: carriage returns dropped, then
  ASCII spaces (and only those) trimmed from both ends.  DuckDB's one-argument trim also removes Unicode
  spaces (no-break, em, ideographic) and Spark's does not, so a page of code indented with &nbsp; (the
  Rust Reference) gave the two engines different boilerplate lines; both now trim the same character.
-#}
{% macro line_key(expression) %}
    {{- return(adapter.dispatch("line_key", "web_text_dedup")(expression)) -}}
{% endmacro %}

{% macro duckdb__line_key(expression) -%}
    trim(replace({{ expression }}, chr(13), ''), ' ')
{%- endmacro %}

{% macro spark__line_key(expression) -%}
    trim(both ' ' from replace({{ expression }}, chr(13), ''))
{%- endmacro %}


{#- The lines of a text (split on line feeds) as a list. -#}
{% macro split_lines(expression) %}
    {{- return(adapter.dispatch("split_lines", "web_text_dedup")(expression)) -}}
{% endmacro %}

{% macro duckdb__split_lines(expression) -%}
    string_split({{ expression }}, chr(10))
{%- endmacro %}

{% macro spark__split_lines(expression) -%}
    split({{ expression }}, '\n', -1)
{%- endmacro %}


{#- All values of `expression` ordered by `order_by`, joined with `separator` (an aggregate). -#}
{% macro ordered_string_agg(expression, order_by, separator) %}
    {{- return(adapter.dispatch("ordered_string_agg", "web_text_dedup")(expression, order_by, separator)) -}}
{% endmacro %}

{% macro duckdb__ordered_string_agg(expression, order_by, separator) -%}
    string_agg({{ expression }}, {{ separator }} order by {{ order_by }})
{%- endmacro %}

{% macro spark__ordered_string_agg(expression, order_by, separator) -%}
    array_join(
        transform(array_sort(collect_list(struct({{ order_by }} as k, {{ expression }} as v))), x -> x.v),
        {{ separator }}
    )
{%- endmacro %}


{#-
  Placed between `name as` and a CTE's parenthesis: the CTE is inlined into each query that reads it, not
  materialized once.  DuckDB materializes a CTE read twice, which for a CTE of page bodies means storing
  (and at scale spilling) every body a second time; Spark always inlines.
-#}
{% macro not_materialized() %}
    {{- return(adapter.dispatch("not_materialized", "web_text_dedup")()) -}}
{% endmacro %}

{% macro duckdb__not_materialized() -%}
    not materialized
{%- endmacro %}

{% macro spark__not_materialized() -%}
{%- endmacro %}


{#-
  Placed right after `select`: the rows are spread over the shuffle's partitions by `column`, so that a
  table read from one input file (one Spark task) is written as many files and every later stage over it
  runs in many tasks.  DuckDB parallelizes on its own.
-#}
{% macro repartition_hint(column) %}
    {{- return(adapter.dispatch("repartition_hint", "web_text_dedup")(column)) -}}
{% endmacro %}

{% macro duckdb__repartition_hint(column) -%}
{%- endmacro %}

{% macro spark__repartition_hint(column) -%}
    /*+ REPARTITION({{ column }}) */
{%- endmacro %}
