{#
  documents_input(): where the documents come from.

  Without var documents_path: the checked-in seed `documents`.  With it: a CSV or Parquet file, a glob,
  or a folder of such files (relative paths resolve from the directory dbt runs in, the project root).
  Required columns are checked before any work; a missing one stops the build with a message naming it
  and the input.  Returns {"relation": <from-clause SQL>, "columns": [input column names], "label": ...}.
#}
{% macro documents_input() %}
    {%- set seed_relation = ref("documents") -%}
    {%- set path = var("documents_path", "") | string | trim -%}
    {%- if path in ("", "none", "None") -%}
        {%- set relation = seed_relation | string -%}
        {%- set label = "seed 'documents'" -%}
    {%- else -%}
        {%- set relation = read_documents_files(path) -%}
        {%- set label = "documents_path '" ~ path ~ "'" -%}
    {%- endif -%}
    {%- set columns = [] -%}
    {%- if execute -%}
        {%- set described = run_query("describe select * from " ~ relation) -%}
        {%- for row in described.rows -%}{%- do columns.append(row[0]) -%}{%- endfor -%}
        {%- set lowered = columns | map("lower") | list -%}
        {%- set missing = [] -%}
        {%- for required in ["doc_id", "source", "domain", "crawled_at", "title", "body"] -%}
            {%- if required not in lowered -%}{%- do missing.append(required) -%}{%- endif -%}
        {%- endfor -%}
        {%- if missing -%}
            {{ exceptions.raise_compiler_error(
                label ~ " is missing required column(s): " ~ (missing | join(", "))
                ~ " (found: " ~ (columns | join(", ")) ~ ")") }}
        {%- endif -%}
    {%- endif -%}
    {{ return({"relation": relation, "columns": columns, "label": label}) }}
{% endmacro %}


{% macro read_documents_files(path) %}
    {{ return(adapter.dispatch("read_documents_files", "web_text_dedup")(path)) }}
{% endmacro %}


{% macro duckdb__read_documents_files(path) %}
    {%- set lowered = path | lower -%}
    {%- set is_csv = lowered.endswith(".csv") or lowered.endswith(".csv.gz") or lowered.endswith(".tsv") -%}
    {%- set is_parquet = lowered.endswith(".parquet") or lowered.endswith(".pq") -%}
    {%- set pattern = path -%}
    {%- if not (is_csv or is_parquet) -%}
        {#- a folder: take its Parquet files if it has any, else its CSV files -#}
        {%- set folder = path.rstrip("/") -%}
        {%- set parquet_pattern = folder ~ "/**/*.parquet" -%}
        {%- set csv_pattern = folder ~ "/**/*.csv" -%}
        {%- set is_parquet = true -%}
        {%- set pattern = parquet_pattern -%}
        {%- if execute -%}
            {%- set found = run_query(
                "select count(*) from glob(" ~ sql_string(parquet_pattern) ~ ")").columns[0].values()[0] -%}
            {%- if found == 0 -%}
                {%- set found_csv = run_query(
                    "select count(*) from glob(" ~ sql_string(csv_pattern) ~ ")").columns[0].values()[0] -%}
                {%- if found_csv == 0 -%}
                    {{ exceptions.raise_compiler_error(
                        "documents_path '" ~ path ~ "' is not a .csv or .parquet file and no CSV or Parquet"
                        ~ " files were found under it") }}
                {%- endif -%}
                {%- set is_parquet = false -%}
                {%- set pattern = csv_pattern -%}
            {%- endif -%}
        {%- endif -%}
    {%- endif -%}
    {%- if is_parquet -%}
        {{ return("read_parquet(" ~ sql_string(pattern) ~ ", union_by_name = true)") }}
    {%- else -%}
        {{ return("read_csv(" ~ sql_string(pattern)
            ~ ", header = true, all_varchar = true, union_by_name = true, strict_mode = true)") }}
    {%- endif -%}
{% endmacro %}
