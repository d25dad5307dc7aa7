{#-
  size_memory_for_text(relation, column): a post-hook (after commit) of the model that stores the page
  bodies.  DuckDB reads a stored text column a vector of 2,048 rows at a time, and decompresses a zstd
  vector into one buffer of its text rounded up to a power of two: with pages of 540 KB that is 2 GiB per
  reader, and two readers at once (dbt's threads) do not fit the default memory limit.  From the stored
  segments' statistics (no body is read) it bounds the text of one vector in each row group (the
  row group's text, at most 2,048 times its longest text: segments not yet checkpointed are smaller than a
  vector), and
  webdedup_size_memory_for_text (webdedup/engines/duckdb_memory.py) raises a derived limit to hold every
  concurrent reader's buffer; the line it returns is logged.  Spark has no such limit: nothing to do.
-#}
{% macro size_memory_for_text(relation, column) %}
    {{- return(adapter.dispatch("size_memory_for_text", "web_text_dedup")(relation, column)) -}}
{% endmacro %}

{% macro default__size_memory_for_text(relation, column) %}
    {{- return("") -}}
{% endmacro %}

{% macro duckdb__size_memory_for_text(relation, column) %}
    {%- if execute -%}
        {%- set sized = run_query(
            "select webdedup_size_memory_for_text(coalesce(max(vector_text), 0)::bigint,"
            ~ " " ~ target.threads ~ " * least(current_setting('threads')::bigint, count(*)))"
            ~ " from (select least(sum(stats.total_string_length),"
            ~ " least(sum(count), 2048) * max(stats.max_string_length)) as vector_text"
            ~ " from pragma_storage_info('" ~ relation ~ "')"
            ~ " where column_name = '" ~ column ~ "' and segment_type = 'VARCHAR'"
            ~ " group by row_group_id)"
        ) -%}
        {%- set message = sized.columns[0].values()[0] -%}
        {%- if message -%}{{ log(relation.identifier ~ ": " ~ message, info=True) }}{%- endif -%}
    {%- endif -%}
    {{- return("") -}}
{% endmacro %}

{#-
  size_memory_for_stored_text(): on-run-start.  A command that does not build stg_documents (`dbt retry`
  after a failed build, `dbt run -s marts`) still reads the bodies an earlier build stored: the limit is
  sized for them at the start too.  Sizing again after staging changes nothing for the same text
  (webdedup/engines/duckdb_memory.py reckons from the limit the connection was opened with).
-#}
{% macro size_memory_for_stored_text() %}
    {{- return(adapter.dispatch("size_memory_for_stored_text", "web_text_dedup")()) -}}
{% endmacro %}

{% macro default__size_memory_for_stored_text() %}
    {{- return("select 1") -}}
{% endmacro %}

{% macro duckdb__size_memory_for_stored_text() %}
    {%- if execute -%}
        {%- set node = graph.nodes.get("model.web_text_dedup.stg_documents") -%}
        {%- set stored = adapter.get_relation(node.database, node.schema, node.alias) if node else none -%}
        {%- if stored is not none and stored.is_table -%}
            {%- do size_memory_for_text(stored, "body") -%}
        {%- endif -%}
    {%- endif -%}
    {{- return("select 1") -}}
{% endmacro %}
