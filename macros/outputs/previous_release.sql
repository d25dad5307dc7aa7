{#-
  previous_release_clusters(): from-clause SQL over the clusters file now published in output_dir (the
  release of the last build that succeeded there; its name from var output_files), every column as text.
  On the first build into output_dir there is none: an empty relation with the same columns.  The
  changelog (models/marts/changelog.sql) compares this build's clusters with it.  A published file that
  lacks one of the columns the changelog reads stops the build, naming the file and the column.
-#}
{% macro previous_release_clusters() %}
    {%- set columns = ["doc_id", "cluster_id", "is_representative", "representative_doc_id"] -%}
    {%- set empty_columns = [] -%}
    {%- for column in columns -%}
        {%- do empty_columns.append("cast(null as " ~ dbt.type_string() ~ ") as " ~ column) -%}
    {%- endfor -%}
    {%- set empty = "(select " ~ empty_columns | join(", ") ~ " where 1 = 0)" -%}
    {%- if not execute -%}{{ return(empty) }}{%- endif -%}
    {%- set path = output_dir() ~ "/" ~ var("output_files")["clusters"]["file"] -%}
    {%- set kind = run_query("select webdedup_path_kind(" ~ sql_string(path) ~ ")").columns[0].values()[0] -%}
    {%- if not kind -%}{{ return(empty) }}{%- endif -%}
    {%- set relation = adapter.dispatch("read_published_csv", "web_text_dedup")(path, kind) -%}
    {%- set found = [] -%}
    {%- for row in run_query("describe select * from " ~ relation).rows -%}
        {%- do found.append(row[0] | lower) -%}
    {%- endfor -%}
    {%- for column in columns if column not in found -%}
        {{ exceptions.raise_compiler_error("changelog: the published release " ~ path ~ " has no column "
            ~ column ~ " (written by another version?); move it out of output_dir to start a new history") }}
    {%- endfor -%}
    {{ return(relation) }}
{% endmacro %}

{#- A published CSV output (a file, or Spark's folder of part files, each with its header), all text. -#}
{% macro duckdb__read_published_csv(path, kind) %}
    {%- set files = path ~ "/part-*.csv" if kind == "folder" else path -%}
    {{ return("read_csv(" ~ sql_string(files) ~ ", header = true, all_varchar = true)") }}
{% endmacro %}

{% macro spark__read_published_csv(path, kind) %}
    {%- set view = "webdedup_previous_release_clusters" -%}
    {%- do run_query("create or replace temporary view " ~ view ~ " using csv options (path "
        ~ sql_string(path) ~ ", header 'true')") -%}
    {{ return(view) }}
{% endmacro %}
