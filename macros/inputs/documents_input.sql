{#
  documents_input(): where the documents come from.

  Without var documents_path nor a WARC var: the checked-in seed `documents`.  With documents_path: a CSV
  or Parquet file, a glob, or a folder of such files (relative paths resolve from the directory dbt runs
  in, the project root).  With var warc_paths or warc_ranges_path: the extracted rows of the Python model
  stg_warc_records (base columns + WARC lineage).  Setting documents_path and a WARC var is an error.
  The input contract (macros/inputs/input_contract.sql: required columns, accepted types, reserved names) is
  checked before any work, in every file; a breach stops the build with a message naming the column and
  the file.  Returns {"relation": <from-clause SQL>, "columns": [input column names], "categories":
  {lower name: type category}, "label": ..., "files": [{"read_path", "file_key"}], "keyed_relation": the
  relation with a column naming each row's read_path, or none} (files and keyed_relation: see
  read_documents_files).  check_files false skips the per-file checks of documents_path: for
  stg_documents' pre-hook, whose model was compiled, and so checked, earlier in the same build.
#}
{% macro documents_input(check_files=true) %}
    {%- set seed_relation = ref("documents") -%}
    {%- set path = var("documents_path") | string | trim -%}
    {%- set has_path = path not in ("", "none", "None") -%}
    {#- the seed and WARC rows: read whole by every build (no input_read_key, see read_documents_files) -#}
    {%- set files = {"files": [], "keyed_relation": none} -%}
    {%- if has_path and warc_input_enabled() -%}
        {{ exceptions.raise_compiler_error(
            "set either documents_path or warc_paths / warc_ranges_path, not both (documents_path '"
            ~ path ~ "', " ~ warc_input_label() ~ ")") }}
    {%- endif -%}
    {%- if warc_input_enabled() -%}
        {%- set relation = "(select " ~ (warc_document_columns() | join(", ")) ~ " from " ~ ref("stg_warc_records")
            ~ " where status = 'extracted')" -%}
    {%- elif not has_path -%}
        {%- set relation = seed_relation | string -%}
    {%- else -%}
        {%- set files = read_documents_files(path, check_files) -%}
        {%- set relation = files.relation -%}
    {%- endif -%}
    {%- set label = documents_input_label() -%}
    {%- set columns = [] -%}
    {%- set categories = {} -%}
    {%- if execute -%}
        {%- set described = [] -%}
        {%- for row in run_query("describe select * from " ~ relation).rows -%}
            {%- do described.append((row[0], row[1])) -%}
            {%- do columns.append(row[0]) -%}
        {%- endfor -%}
        {%- do categories.update(check_input_contract(label, described)) -%}
        {%- if read_path_column() in columns | map("lower") | list -%}
            {#- an input column of that name: no keyed relation, every build reads every file -#}
            {%- set files = {"files": [], "keyed_relation": none} -%}
        {%- endif -%}
    {%- endif -%}
    {{ return({"relation": relation, "columns": columns, "categories": categories, "label": label,
        "files": files.files, "keyed_relation": files.keyed_relation}) }}
{% endmacro %}


{#- How messages name the input: seed 'documents', documents_path '...' or the WARC vars. -#}
{% macro documents_input_label() %}
    {%- set path = var("documents_path", "") | string | trim -%}
    {%- if warc_input_enabled() -%}{{ return(warc_input_label()) }}{%- endif -%}
    {%- if path in ("", "none", "None") -%}{{ return("seed 'documents'") }}{%- endif -%}
    {{ return("documents_path '" ~ path ~ "'") }}
{% endmacro %}


{#- True when var warc_paths or warc_ranges_path is set: the documents come from stg_warc_records. -#}
{% macro warc_input_enabled() %}
    {{ return(var("warc_paths") | string | trim not in ("", "none", "None")
        or var("warc_ranges_path") | string | trim not in ("", "none", "None")) }}
{% endmacro %}


{#- True when the input is the checked-in fixture (the fixture's count tests run only then). -#}
{% macro is_fixture_input() %}
    {{ return(var("documents_path") in ("", none) and not warc_input_enabled()) }}
{% endmacro %}


{% macro warc_input_label() %}
    {%- set parts = [] -%}
    {%- for name in ["warc_paths", "warc_ranges_path"] -%}
        {%- set value = var(name, "") | string | trim -%}
        {%- if value not in ("", "none", "None") -%}{%- do parts.append(name ~ " '" ~ value ~ "'") -%}{%- endif -%}
    {%- endfor -%}
    {{ return(parts | join(" and ")) }}
{% endmacro %}


{#- The columns of an extracted WARC record that stg_documents carries: base columns, then lineage. -#}
{% macro warc_document_columns() %}
    {{ return([
        "doc_id", "source", "domain", "crawled_at", "title", "body",
        "url", "warc_filename", "warc_record_offset", "warc_record_length", "warc_record_id",
        "content_digest", "warc_date", "http_status", "content_type", "charset"]) }}
{% endmacro %}


{#-
  read_documents_files(path): {"relation": the files of documents_path read as one relation, "files":
  [{"read_path": what the relation reads (a repaired copy for a CSV file read with invalid_utf8: replace),
  "file_key": the file's path, size and modification time (webdedup/inputs/input_files.py)}],
  "keyed_relation": the same relation with column read_path_column() naming each row's read_path}.  files
  and keyed_relation let an incremental stg_documents read only the files it has not staged (DuckDB);
  empty and none where every build reads everything (Spark).
-#}
{% macro read_documents_files(path, check_files=true) %}
    {{ return(adapter.dispatch("read_documents_files", "web_text_dedup")(path, check_files)) }}
{% endmacro %}


{#- The column of keyed_relation that names each row's file (read_documents_files). -#}
{% macro read_path_column() %}{{ return("webdedup_read_path") }}{% endmacro %}


{#-
  documents_path on DuckDB: the files it names (webdedup_documents_files: a file, a folder or a glob; kinds
  by suffix in any case; a folder holding files of another kind, or CSV and Parquet, is refused, naming
  them) read as one union by column name.  Each file is checked before any work: what DuckDB would read
  wrongly (webdedup_input_file_problem: an empty CSV, two columns of one name, CSV rows that do not split
  like the header) and, when several files are read, the input contract per file, so a file without a
  required column stops the build (named) instead of contributing nulls.  A Parquet file without rows
  is not checked for types (pandas writes an empty frame's columns as null).  .csv files are read as
  RFC 4180, fields quoted with double quotes only (DuckDB's sniffer would otherwise take a quote character
  from the data, and strip the apostrophes around a title such as 'Intro').  A file an incremental
  stg_documents already holds rows of, read from the same path, size and modification time
  (staged_file_keys), passed these checks in that build and is not checked again, so a build's checks
  follow its new files, not the whole folder.
-#}
{% macro duckdb__read_documents_files(path, check_files=true) %}
    {%- set csv_options = "header = true, all_varchar = true, union_by_name = true, strict_mode = true" -%}
    {%- set rfc_4180 = ", quote = '\"', escape = '\"'" -%}
    {%- if not execute -%}
        {%- if (path | lower).endswith(".parquet") or (path | lower).endswith(".pq") -%}
            {%- set reader = "read_parquet(" ~ sql_string(path) ~ ", union_by_name = true)" -%}
        {%- else -%}
            {%- set reader = "read_csv(" ~ sql_string(path) ~ ", " ~ csv_options ~ ")" -%}
        {%- endif -%}
        {{ return({"relation": reader, "files": [], "keyed_relation": none}) }}
    {%- endif -%}
    {%- set label = "documents_path '" ~ path ~ "'" -%}
    {%- set listed = fromjson(run_query("select webdedup_documents_files(" ~ sql_string(path) ~ ")")
        .columns[0].values()[0]) -%}
    {%- if listed.problem -%}{{ exceptions.raise_compiler_error(listed.problem) }}{%- endif -%}
    {%- set several = listed.files | length > 1 -%}
    {%- set read_paths = [] -%}
    {%- if listed.kind == "parquet" -%}
        {%- do read_paths.extend(listed.files) -%}
        {%- set reader = "read_parquet({files}, union_by_name = true{options})" -%}
    {%- else -%}
        {#- each CSV file is scanned once: its largest row sets max_line_size, and bytes that are not
            UTF-8 are named or replaced (webdedup/inputs/csv_files.py) -#}
        {%- set line_size = {"max": 0} -%}
        {%- set mode = invalid_utf8_mode() -%}
        {%- set work_dir = run_query("select path || '.inputs' from duckdb_databases() where database_name = "
            ~ sql_string(target.database)).columns[0].values()[0] -%}
        {%- set profile_rows = [] -%}
        {%- for file in listed.files -%}
            {%- do profile_rows.append("(" ~ loop.index0 ~ ", " ~ sql_string(file) ~ ")") -%}
        {%- endfor -%}
        {%- set profiles = run_query("select webdedup_csv_profile(file, " ~ sql_string(mode) ~ ", "
            ~ sql_string(work_dir) ~ ") from (values " ~ profile_rows | join(", ")
            ~ ") as files(file_index, file) order by file_index").columns[0].values() -%}
        {%- for file in listed.files -%}
            {%- set profile = fromjson(profiles[loop.index0]) -%}
            {%- do stop_on_invalid_utf8(path, file if several else none, profile) -%}
            {%- do read_paths.append(profile.read_path) -%}
            {%- do line_size.update({"max": [line_size.max, profile.max_line_size] | max}) -%}
        {%- endfor -%}
        {#- .csv is RFC 4180 (fields quoted with " only); TSV is often written without quoting, so with a
            .tsv file among them DuckDB's sniffer decides -#}
        {%- set tsv = [] -%}
        {%- for file in listed.files if (file | lower).endswith(".tsv") or (file | lower).endswith(".tsv.gz") -%}
            {%- do tsv.append(file) -%}
        {%- endfor -%}
        {%- set quoting = "" if tsv else rfc_4180 -%}
        {%- set reader = "read_csv({files}, " ~ csv_options ~ quoting ~ ", max_line_size = " ~ line_size.max
            ~ "{options})" -%}
    {%- endif -%}
    {#- the files to check (indexes into listed.files): those not staged before -#}
    {%- set checked = [] -%}
    {%- if check_files -%}
        {%- set staged_keys = staged_file_keys() -%}
        {%- for index in range(listed.files | length) if listed.file_keys[index] not in staged_keys -%}
            {%- do checked.append(index) -%}
        {%- endfor -%}
        {%- if staged_keys -%}
            {{ log("stg_documents: checks " ~ checked | length ~ " of " ~ listed.files | length ~ " input file(s),"
                ~ " the others were checked when an earlier build staged them", info=True) }}
        {%- endif -%}
    {%- endif -%}
    {#- every file's columns, problem and row count in a few queries, not a few per file: a folder of
        thousands of part files is checked in seconds (dbt's round trip per query is the cost) -#}
    {%- set ones = [] -%}
    {%- for index in checked -%}
        {%- do ones.append(reader.format(files=sql_string(read_paths[index]), options="")) -%}
    {%- endfor -%}
    {%- set described_files = described_columns_per_relation(ones) -%}
    {%- set problem_rows = [] -%}
    {%- for index in checked -%}
        {%- do problem_rows.append("(" ~ loop.index0 ~ ", " ~ sql_string(listed.files[index]) ~ ", "
            ~ described_files[loop.index0] | length ~ ")") -%}
    {%- endfor -%}
    {%- set problems = run_query("select webdedup_input_file_problem(file, columns_read) from (values "
        ~ problem_rows | join(", ") ~ ") as files(file_index, file, columns_read) order by file_index")
        .columns[0].values() if checked else [] -%}
    {%- set row_counts = row_counts_per_relation(ones) if several and listed.kind == "parquet" else [] -%}
    {#- the contract is a function of a file's columns and types: files of one schema are checked once -#}
    {%- set checked_schemas = [] -%}
    {%- for index in checked -%}
        {%- set file = listed.files[index] -%}
        {%- set where = label ~ (": file '" ~ file ~ "'" if several else "") -%}
        {%- if problems[loop.index0] -%}
            {{ exceptions.raise_compiler_error(where ~ " " ~ problems[loop.index0]) }}
        {%- endif -%}
        {%- set schema = described_files[loop.index0] | string -%}
        {%- if several and schema not in checked_schemas
                and not (listed.kind == "parquet" and row_counts[loop.index0] == 0) -%}
            {%- do check_input_contract(label, described_files[loop.index0], file) -%}
            {%- do checked_schemas.append(schema) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set files = [] -%}
    {%- set quoted = [] -%}
    {%- for read_path in read_paths -%}
        {%- do files.append({"read_path": read_path, "file_key": listed.file_keys[loop.index0]}) -%}
        {%- do quoted.append(sql_string(read_path)) -%}
    {%- endfor -%}
    {%- set listing = "[" ~ (quoted | join(", ")) ~ "]" -%}
    {{ return({
        "relation": reader.format(files=listing, options=""),
        "files": files,
        "keyed_relation": reader.format(files=listing, options=", filename = " ~ sql_string(read_path_column())),
    }) }}
{% endmacro %}

{#-
  rows_per_relation(relations, select): the rows of `select` (a template naming {index} and {relation},
  whose first column is {index}) over every relation (a reader of one file), sorted by all columns, from
  one union per 500 relations: a query per file would cost dbt's round trip each.
-#}
{% macro rows_per_relation(relations, select) %}
    {%- set rows = [] -%}
    {%- for batch in relations | batch(500) -%}
        {%- set first = loop.index0 * 500 -%}
        {%- set selects = [] -%}
        {%- for relation in batch -%}
            {%- do selects.append(select.format(index=first + loop.index0, relation=relation)) -%}
        {%- endfor -%}
        {%- do rows.extend(run_query(selects | join(" union all ") ~ " order by all").rows) -%}
    {%- endfor -%}
    {{ return(rows) }}
{% endmacro %}

{#- described_columns_per_relation(relations): for each relation, DuckDB's [(column name, type)] in order. -#}
{% macro described_columns_per_relation(relations) %}
    {%- set described = [] -%}
    {%- for relation in relations -%}{%- do described.append([]) -%}{%- endfor -%}
    {%- for row in rows_per_relation(relations, "select {index} as relation_index, row_number() over () as "
            ~ "column_index, column_name, column_type from (describe select * from {relation})") -%}
        {%- do described[row[0]].append((row[2], row[3])) -%}
    {%- endfor -%}
    {{ return(described) }}
{% endmacro %}

{#- row_counts_per_relation(relations): each relation's row count. -#}
{% macro row_counts_per_relation(relations) %}
    {%- set counts = [] -%}
    {%- for row in rows_per_relation(relations, "select {index}, count(*) from {relation}") -%}
        {%- do counts.append(row[1]) -%}
    {%- endfor -%}
    {{ return(counts) }}
{% endmacro %}

{#- A CSV file's profile (webdedup_csv_profile) named rows that are not UTF-8: stop, naming them. -#}
{% macro stop_on_invalid_utf8(path, file, profile) %}
    {%- if profile.invalid_rows -%}
        {{ exceptions.raise_compiler_error(
            "documents_path '" ~ path ~ "'" ~ (": file '" ~ file ~ "'" if file else "")
            ~ " holds bytes that are not UTF-8 in "
            ~ profile.invalid_row_count ~ " row(s), doc_id: " ~ (profile.invalid_rows | join(", "))
            ~ (" ..." if profile.invalid_row_count > profile.invalid_rows | length else "")
            ~ "; convert the file to UTF-8, or set var invalid_utf8: replace to read them as U+FFFD") }}
    {%- endif -%}
{% endmacro %}


{#-
  documents_path on Spark: Parquet files, globs and folders are read directly; CSV (header, all
  columns as text, quoted newlines allowed) through a temporary view, after the same UTF-8 check as on
  DuckDB (every build: a Spark stg_documents is not incremental, so check_files changes nothing).
-#}
{% macro spark__read_documents_files(path, check_files=true) %}
    {%- set lowered = path | lower -%}
    {%- if "`" in path -%}
        {{ exceptions.raise_compiler_error("documents_path '" ~ path ~ "' must not contain a backtick") }}
    {%- endif -%}
    {%- if lowered.endswith(".csv") or lowered.endswith(".csv.gz") or lowered.endswith(".tsv") -%}
        {%- if execute -%}
            {#- the same UTF-8 check (and repaired copy with invalid_utf8: replace) as on DuckDB -#}
            {%- set profile = fromjson(run_query("select webdedup_csv_profile(" ~ sql_string(path) ~ ", "
                ~ sql_string(invalid_utf8_mode()) ~ ", " ~ sql_string("target/spark-inputs")
                ~ ")").columns[0].values()[0]) -%}
            {%- do stop_on_invalid_utf8(path, none, profile) -%}
            {%- do run_query("create or replace temporary view webdedup_documents_csv using csv options (path "
                ~ sql_string(profile.read_path) ~ ", header 'true', multiLine 'true', escape '\"', inferSchema 'false'"
                ~ (", sep '\\t'" if lowered.endswith(".tsv") else "") ~ ")") -%}
        {%- endif -%}
        {{ return({"relation": "webdedup_documents_csv", "files": [], "keyed_relation": none}) }}
    {%- endif -%}
    {{ return({"relation": "parquet.`" ~ path ~ "`", "files": [], "keyed_relation": none}) }}
{% endmacro %}
