{#-
  export_output(): the marts' post-hook (dbt_project.yml).  Writes the model's output file, named with its
  row order in var output_files (CSV, Parquet or JSON by extension), in that fixed row order, so reruns
  give byte-identical files.

  Files are written to this run's hidden staging folder (staging_dir() below); the on-run-end hook
  publish_outputs moves them into <output_dir> (one rename each, manifest.json last) only when the whole
  run succeeded, and discards them otherwise.  A failed or killed build therefore
  leaves the previous run's complete set of outputs untouched.
-#}
{% macro export_output() %}
    {%- set output = var("output_files").get(model.name) -%}
    {%- if output is none -%}
        {{ exceptions.raise_compiler_error("export_output: model " ~ model.name
            ~ " is exported (it is a mart) but has no entry in var output_files") }}
    {%- endif -%}
    {%- if output.key and incremental_outputs() -%}
        {{- return(export_parts(output)) -}}
    {%- endif -%}
    {{- return(adapter.dispatch("export_output", "web_text_dedup")(output.file, output.order_by)) -}}
{% endmacro %}

{#- rows per row group of every Parquet output (the last of a file holds the rest) -#}
{% macro output_row_group_rows() %}{{ return(10000) }}{% endmacro %}

{#-
  DuckDB: a COPY in the output's row order.  An output without a sort (the release, in stored order) is
  written through webdedup_write_in_row_groups (webdedup/outputs/row_groups.py): COPY would cut its row
  groups where the stored table's chunks happen to end, which two builds of the same input can lay out
  differently (measured on 1M pages of real prose).
-#}
{% macro duckdb__export_output(file_name, order_by) %}
    {%- set extension = file_name.split(".")[-1] | lower -%}
    {%- set row_group_rows = output_row_group_rows() -%}
    {%- set options = {
        "csv": "format csv, header true",
        "parquet": "format parquet, compression zstd",
        "json": "format json",
    } -%}
    {%- if extension not in options -%}
        {{ exceptions.raise_compiler_error("export_output: unsupported output file type '" ~ file_name ~ "'") }}
    {%- endif -%}
    {%- set path = staging_dir() ~ "/" ~ file_name -%}
    {%- if extension == "parquet" and not order_by -%}
        {#- the function reads through a connection of its own, which does not see this model's relation
            before its transaction commits: it runs the model's query, over the committed tables -#}
        select webdedup_write_in_row_groups({{ sql_string(model.compiled_code) }}, {{ sql_string(path) }},
            {{ row_group_rows }})
    {%- else -%}
        copy (select * from {{ this }}{% if order_by %} order by {{ order_by }}{% endif %})
        to {{ sql_string(path) }} ({{ options[extension] }}
        {%- if extension == "parquet" %}, row_group_size {{ row_group_rows }}{% endif %})
    {%- endif %}
{% endmacro %}

{#-
  Spark: one Spark write (`insert overwrite directory`) into a hidden folder of the staging folder, then a
  function of the registry (webdedup/engines/udfs.py) moves its files into place.  Two forms:

  * one file (output_parts false): one partition (REPARTITION(1), then SORT BY inside it), renamed to the
    output's name by webdedup_finalize_export.  Every row passes through one task, as DuckDB's COPY.
  * a folder of part files (output_parts true; the default off a local master): the output's name is a
    folder of part-00000.<ext>, part-00001.<ext>, ... (webdedup_finalize_parts) written by many tasks.  A
    global ORDER BY range-partitions the rows and sorts each partition, so the parts read in name order
    hold the rows in the single file's order (each CSV part has its own header).  Where the ranges split
    is sampled, so part boundaries may differ between runs; the rows in order never do.  The run
    manifest stays one file.

  CSV doubles are written through webdedup_format_double, DuckDB's text for them (the JVM's differs
  below 1e-3).  order_by none means the first column.
-#}
{% macro spark__export_output(file_name, order_by) %}
    {%- set extension = file_name.split(".")[-1] | lower -%}
    {%- set options = {
        "csv": "using csv options (header 'true', escape '\"', nullValue '', emptyValue '\"\"',"
            ~ " timestampNTZFormat 'yyyy-MM-dd HH:mm:ss', timestampFormat 'yyyy-MM-dd HH:mm:ssXXX',"
            ~ " dateFormat 'yyyy-MM-dd')",
        "parquet": "using parquet options (compression 'zstd')",
        "json": "using json options (ignoreNullFields 'false', timestampNTZFormat 'yyyy-MM-dd HH:mm:ss')",
    } -%}
    {%- if extension not in options -%}
        {{ exceptions.raise_compiler_error("export_output: unsupported output file type '" ~ file_name ~ "'") }}
    {%- endif -%}
    {%- if not execute -%}{{ return("select 1") }}{%- endif -%}
    {%- set columns = adapter.get_columns_in_relation(this) -%}
    {%- set sort_key = order_by or columns[0].name -%}
    {%- set select_list = [] -%}
    {%- for column in columns -%}
        {%- set quoted = adapter.quote(column.name) -%}
        {%- if extension == "csv" and column.dtype | lower == "double" -%}
            {%- do select_list.append("webdedup_format_double(" ~ quoted ~ ") as " ~ quoted) -%}
        {%- else -%}
            {%- do select_list.append(quoted) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set staging = staging_dir() -%}
    {%- set parts_dir = staging ~ "/.parts-" ~ file_name -%}
    {%- if output_parts() and model.name != "run_manifest" -%}
        {%- do run_query("insert overwrite directory " ~ sql_string(parts_dir) ~ " " ~ options[extension]
            ~ " select " ~ select_list | join(", ") ~ " from " ~ this ~ " order by " ~ sort_key) -%}
        {%- set finalize = "webdedup_finalize_parts" -%}
    {%- else -%}
        {%- do run_query("insert overwrite directory " ~ sql_string(parts_dir) ~ " " ~ options[extension]
            ~ " select /*+ repartition(1) */ " ~ select_list | join(", ") ~ " from " ~ this
            ~ " sort by " ~ sort_key) -%}
        {%- set finalize = "webdedup_finalize_export" -%}
    {%- endif -%}
    {#- run_query fetches the result: dbt-spark's session cursor would leave a hook's select unevaluated -#}
    {%- do run_query("select " ~ finalize ~ "(" ~ sql_string(parts_dir) ~ ", "
        ~ sql_string(staging ~ "/" ~ file_name) ~ ")") -%}
    select 1
{% endmacro %}


{#-
  output_parts(): whether outputs are written as folders of part files (var output_parts; Spark only).
  null (the default) means: on Spark, when the master is not local (a cluster or a Connect server's).
-#}
{% macro output_parts() %}
    {{- return(adapter.dispatch("output_parts", "web_text_dedup")(var("output_parts", none))) -}}
{% endmacro %}

{% macro duckdb__output_parts(setting) %}
    {%- if setting is not none and setting | string | lower not in ("false", "0") -%}
        {{ exceptions.raise_compiler_error("output_parts: folders of part files are a Spark option; "
            ~ "DuckDB writes each output as one file (unset var output_parts)") }}
    {%- endif -%}
    {{ return(false) }}
{% endmacro %}

{% macro spark__output_parts(setting) %}
    {%- if setting is not none -%}
        {{ return(setting | string | lower in ("true", "1")) }}
    {%- endif -%}
    {%- if not execute -%}{{ return(false) }}{%- endif -%}
    {%- set master = run_query("set spark.master").columns[1].values()[0] -%}
    {{ return(not master.startswith("local")) }}
{% endmacro %}


{#-
  incremental_outputs(): whether the keyed Parquet outputs (var output_files entries with a key) are
  folders of parts, one per build holding only the rows it changed (var incremental_outputs; DuckDB).
-#}
{% macro incremental_outputs() %}
    {%- set setting = _dedup_choice("incremental_outputs", var("incremental_outputs") | string | lower,
        ["false", "true"]) == "true" -%}
    {{- return(adapter.dispatch("incremental_outputs", "web_text_dedup")(setting)) -}}
{% endmacro %}

{% macro duckdb__incremental_outputs(setting) %}
    {{ return(setting) }}
{% endmacro %}

{% macro spark__incremental_outputs(setting) %}
    {%- if setting -%}
        {{ exceptions.raise_compiler_error("incremental_outputs: folders of parts per build are a DuckDB "
            ~ "option (Spark builds are not incremental); unset var incremental_outputs") }}
    {%- endif -%}
    {{ return(false) }}
{% endmacro %}


{#-
  export_parts(output): the export of a keyed Parquet output when var incremental_outputs is on
  (webdedup/outputs/parts.py).  The output is the folder <file>/ of parts part-00000.parquet, ...:
  webdedup_stage_parts links the published parts into this run's staging folder and names this build's
  part (its number and path, and the SQL of the published parts' newest hash per key: parts.py).  Part 0 (a new history: none published, or var compact_outputs) holds every row, in the output's
  order; a later part holds only the rows whose part_row_hash differs from the newest published version
  of their key (part_change upsert) and the keys that left (part_change delete), sorted by key; a build
  that changed nothing adds no part.

  The rows come from the macro var output_files names in `rows` (default output_rows below), called as
  rows(only=none) for every row with its part_row_hash, in the output's order, and rows(only=<relation of
  keys>) for those keys' rows in any order.  The release names release_rows
  (models/marts/deduped_documents.sql), whose hash reads body_hash instead of the bodies.
-#}
{% macro export_parts(output) %}
    {{- return(adapter.dispatch("export_parts", "web_text_dedup")(output)) -}}
{% endmacro %}

{% macro spark__export_parts(output) %}
    {#- unreachable while spark__incremental_outputs refuses the var; dbt resolves every dispatch when it parses -#}
    {{ exceptions.raise_compiler_error("incremental_outputs: folders of parts per build are a DuckDB option") }}
{% endmacro %}

{% macro duckdb__export_parts(output) %}
    {%- if not execute -%}{{ return("select 1") }}{%- endif -%}
    {%- set extension = output.file.split(".")[-1] | lower -%}
    {%- if extension != "parquet" -%}
        {{ exceptions.raise_compiler_error("incremental_outputs: output " ~ output.file
            ~ " has a key in var output_files but is not Parquet; only Parquet outputs are written as parts") }}
    {%- endif -%}
    {%- set rows = context[output.get("rows") or "output_rows"] -%}
    {%- set keys = output.key.split(",") | map("trim") | list -%}
    {%- set staged = staging_dir() ~ "/" ~ output.file -%}
    {%- set part = fromjson(run_query("select webdedup_stage_parts("
        ~ sql_string(output_dir() ~ "/" ~ output.file) ~ ", " ~ sql_string(staged) ~ ", " ~ sql_string(output.key) ~ ", "
        ~ _dedup_choice("compact_outputs", var("compact_outputs") | string | lower, ["false", "true"])
        ~ ")").columns[0].values()[0]) -%}
    {%- set path, number = part.path, part.number -%}
    {%- if number | int == 0 and not output.order_by -%}
        {#- in stored order, as duckdb__export_output writes it (a query over the committed tables) -#}
        select webdedup_write_in_row_groups({{ sql_string(rows(only=none)) }}, {{ sql_string(path) }},
            {{ output_row_group_rows() }})
    {%- elif number | int == 0 -%}
        copy ({{ rows(only=none) }} order by {{ output.order_by }})
        to {{ sql_string(path) }} (format parquet, compression zstd, row_group_size {{ output_row_group_rows() }})
    {%- else -%}
        {%- set key_match = [] -%}
        {%- for key in keys -%}{%- do key_match.append("now." ~ key ~ " = before." ~ key) -%}{%- endfor -%}
        copy (
            with before as ({{ part.published }}),
            now as (select {{ keys | join(", ") }}, part_row_hash from ({{ rows(only=none) }})),
            changed_keys as (
                select {{ keys | join(", ") }} from now
                anti join before
                    on {{ key_match | join(" and ") }}
                    and before.part_change = 'upsert' and now.part_row_hash = before.part_row_hash
            ),
            upserts as ({{ rows(only="changed_keys") }}),
            deletes as (
                select {{ keys | join(", ") }}, 'delete' as part_change from before
                where before.part_change = 'upsert'
                and not exists (select 1 from now where {{ key_match | join(" and ") }})
            )
            select * from upserts union all by name select * from deletes
            order by {{ keys | join(", ") }}
        ) to {{ sql_string(path) }} (format parquet, compression zstd, row_group_size {{ output_row_group_rows() }});
        select webdedup_drop_empty_part({{ sql_string(path) }})
    {%- endif %}
{% endmacro %}

{#-
  output_rows(only): export_parts' rows of a stored output (the model's own table): every column, then
  part_change 'upsert' and part_row_hash, the hash of every column; only: a relation of key values.
-#}
{% macro output_rows(only) %}
    {%- set output = var("output_files")[model.name] -%}
    {%- set columns = [] -%}
    {%- for column in adapter.get_columns_in_relation(this) -%}
        {%- do columns.append(adapter.quote(column.name)) -%}
    {%- endfor -%}
    {%- set sql = "select *, 'upsert' as part_change, hash(" ~ columns | join(", ") ~ ") as part_row_hash from "
        ~ this -%}
    {%- if only is not none -%}
        {%- set sql = sql ~ " semi join " ~ only ~ " using (" ~ output.key ~ ")" -%}
    {%- endif -%}
    {{ return(sql) }}
{% endmacro %}


{#-
  export_text_files(name_column, text_column): a post-hook that writes each row's text_column to the file
  named by name_column in this run's staging folder (the SVG pictures of lsh_pictures); they are
  published with the other output files.
-#}
{% macro export_text_files(name_column, text_column) %}
    {{- return(adapter.dispatch("export_text_files", "web_text_dedup")(name_column, text_column)) -}}
{% endmacro %}

{% macro duckdb__export_text_files(name_column, text_column) %}
    select webdedup_write_text({{ sql_string(staging_dir() ~ "/") }} || {{ name_column }}, {{ text_column }})
    from {{ this }}
{% endmacro %}

{% macro spark__export_text_files(name_column, text_column) %}
    {#- run_query fetches the result: dbt-spark's session cursor would leave a hook's select unevaluated -#}
    {%- if execute -%}
        {%- do run_query("select webdedup_write_text(concat(" ~ sql_string(staging_dir() ~ "/") ~ ", "
            ~ name_column ~ "), " ~ text_column ~ ") from " ~ this) -%}
    {%- endif -%}
    select 1
{% endmacro %}


{#-
  This run's staging folder for output files, <output_dir>/.staging-<invocation id> (absolute; the name is
  webdedup/outputs/files.py's), created when create is true: only the exports create it, so compiling
  (sqlfluff, docs generate) leaves no folders behind.
-#}
{% macro staging_dir(create=true) %}
    {%- if not execute -%}{{ return(var("output_dir") ~ "/<staging folder of this run>") }}{%- endif -%}
    {{ return(run_query("select webdedup_staging_dir(" ~ sql_string(var("output_dir")) ~ ", "
        ~ sql_string(invocation_id) ~ ", " ~ (create | string | lower) ~ ")").columns[0].values()[0]) }}
{% endmacro %}


{#-
  publish_outputs(results): on-run-end hook.  After a `dbt build` or `dbt run` in which nothing failed,
  moves this run's staged output files into <output_dir> (manifest.json last) and removes staging
  folders; otherwise discards this run's staging folder and leaves the published outputs as they were.
-#}
{% macro publish_outputs(results) %}
    {%- if not execute or flags.WHICH not in ("build", "run") -%}{{ return("select 1") }}{%- endif -%}
    {%- set staging = staging_dir(create=false) -%}
    {%- if run_succeeded(results) -%}
        {%- set message = run_query("select webdedup_publish_outputs(" ~ sql_string(staging) ~ ", "
            ~ sql_string(output_dir()) ~ ")").columns[0].values()[0] -%}
    {%- else -%}
        {%- set message = "outputs not published (the run did not succeed); "
            ~ run_query("select webdedup_discard_dir(" ~ sql_string(staging) ~ ")").columns[0].values()[0] -%}
    {%- endif -%}
    {{ log("publish_outputs: " ~ message, info=True) }}
    {{ return("select 1") }}
{% endmacro %}


{#- True when no node of the run errored, failed or was skipped. -#}
{% macro run_succeeded(results) %}
    {%- for result in results -%}
        {%- if result.status in ("error", "fail", "skipped", "runtime error") -%}{{ return(false) }}{%- endif -%}
    {%- endfor -%}
    {{ return(true) }}
{% endmacro %}


{#- The absolute output folder (var output_dir, relative to the project root), created if missing. -#}
{% macro output_dir() %}
    {%- if not execute -%}{{ return(var("output_dir")) }}{%- endif -%}
    {%- set result = run_query("select webdedup_prepare_dir(" ~ sql_string(var("output_dir")) ~ ")") -%}
    {{ return(result.columns[0].values()[0]) }}
{% endmacro %}
