{#-
  comment_relations(results): an on-run-end hook (the first: publish_database reattaches the file
  read-only) that writes the YAML description of every model and seed the run built as the comment of its
  table or view and of each of its columns (duckdb_tables().comment, duckdb_columns().comment), all in one
  statement.  dbt's persist_docs writes the same comments node by node, each with a describe and two
  statements of its own: about 1.5 s of the 24-page build's 11 s (docs/benchmarks.md, session 36).  A
  documented column the relation lacks (a column of an option that is off) is skipped, as persist_docs
  skips it.  Spark keeps the descriptions in the docs only (dbt-spark writes column comments only for
  Delta, Hudi and Iceberg tables).
-#}
{% macro comment_relations(results) %}
    {{- return(adapter.dispatch("comment_relations", "web_text_dedup")(results)) -}}
{% endmacro %}

{% macro default__comment_relations(results) %}
    {{- return("select 1") -}}
{% endmacro %}

{% macro duckdb__comment_relations(results) %}
    {%- set nodes = [] -%}
    {%- for result in results if result.status == "success" and result.node.resource_type in ("model", "seed") -%}
        {%- do nodes.append(result.node) -%}
    {%- endfor -%}
    {%- if not execute or not nodes -%}{{ return("select 1") }}{%- endif -%}
    {#- what each relation is and which columns it has, for the whole database at once -#}
    {%- set found = run_query(
        "select schema_name, table_name, 'table', null from duckdb_tables() where database_name = "
        ~ sql_string(target.database)
        ~ " union all select schema_name, view_name, 'view', null from duckdb_views() where database_name = "
        ~ sql_string(target.database)
        ~ " union all select schema_name, table_name, null, lower(column_name) from duckdb_columns()"
        ~ " where database_name = " ~ sql_string(target.database)) -%}
    {%- set kinds, columns = {}, {} -%}
    {%- for schema, name, kind, column in found.rows -%}
        {%- set key = (schema ~ "." ~ name) | lower -%}
        {%- if kind -%}{%- do kinds.update({key: kind}) -%}{%- endif -%}
        {%- if column -%}{%- do columns.setdefault(key, []).append(column) -%}{%- endif -%}
    {%- endfor -%}
    {%- set statements = [] -%}
    {%- for node in nodes -%}
        {%- set key = (node.schema ~ "." ~ node.alias) | lower -%}
        {%- if key in kinds -%}
            {%- set relation = api.Relation.create(
                database=target.database, schema=node.schema, identifier=node.alias) -%}
            {%- if node.description -%}
                {%- do statements.append("comment on " ~ kinds[key] ~ " " ~ relation ~ " is "
                    ~ sql_string(node.description)) -%}
            {%- endif -%}
            {%- for column in node.columns.values()
                    if column.description and column.name | lower in columns.get(key, []) -%}
                {%- do statements.append("comment on column " ~ relation ~ "." ~ adapter.quote(column.name)
                    ~ " is " ~ sql_string(column.description)) -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if statements -%}
        {%- do run_query(statements | join(";\n")) -%}
    {%- endif -%}
    {{- return("select 1") -}}
{% endmacro %}
