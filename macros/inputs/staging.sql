{#
  How stg_documents stages the input (documents_input()), and what an incremental build of it reads again.

  Each stored row carries input_read_key: the file it was read from, that file's size and modification
  time, and a digest of the staging SQL (the select list below and var invalid_utf8), so "this file, read
  this way".  An incremental build (DuckDB) reads the bodies only of the files whose key no stored row
  carries; the other files' rows are already stored as they would be staged now.  That holds because
  every stored row carries the key of the file it was last read from: before the model writes, a
  document that left the input is deleted and a file read again has its stored rows' keys updated
  (pre-hook sync_stored_documents), then the rows that differ are written again.  A file
  changed in place without a change of size or modification time is not seen (the rule of make and rsync,
  and of the WARC reader's read keys); `dbt build --full-refresh` reads everything again.
#}

{#-
  staged_select(input): {"select_list": stg_documents' select list over the input (aliased source): the
  staged base columns, body_hash, input_read_key, then the extra input columns as they are;
  "binary_columns": the base columns read as bytes; "invalid_utf8_check": a boolean SQL expression, true
  when one of them is not UTF-8 (var invalid_utf8: error); "file_keys": {read_path: input_read_key} of
  the files the input reads (empty for the seed, WARC rows and on Spark: read whole by every build);
  "read_key": the SQL expression of input_read_key}.
-#}
{% macro staged_select(input) %}
    {#- the required input columns, in the contract's order (empty while dbt parses) -#}
    {%- set base_columns = input_contract() | list -%}
    {%- set staged = {} -%}
    {%- set binary_columns = [] -%}
    {%- for name in base_columns -%}
        {%- set category = input.categories.get(name, "text") -%}
        {%- do staged.update({name: staged_column("source." ~ name, name, category)}) -%}
        {%- if category == "binary" -%}{%- do binary_columns.append(name) -%}{%- endif -%}
    {%- endfor -%}
    {#- binary text that is not UTF-8 stops the build (var invalid_utf8: error) -#}
    {%- set invalid_utf8_checks = ["false"] -%}
    {%- if invalid_utf8_mode() == "error" -%}
        {%- for name in binary_columns -%}{%- do invalid_utf8_checks.append(is_invalid_utf8(name)) -%}{%- endfor -%}
    {%- endif -%}
    {%- set typed = [] -%}
    {%- for name in base_columns -%}{%- do typed.append(staged[name] ~ " as " ~ name) -%}{%- endfor -%}
    {%- do typed.append(text_hash(staged.body) ~ " as body_hash") -%}
    {%- set extra = [] -%}
    {%- for column in input.columns if column | lower not in base_columns -%}
        {%- do extra.append("source." ~ quoted_column(column)) -%}
    {%- endfor -%}
    {%- set staging = local_md5((typed + extra) | join(", ") ~ " invalid_utf8=" ~ invalid_utf8_mode())[:16] -%}
    {%- set file_keys = {} -%}
    {%- set cases = [] -%}
    {%- for file in input.files -%}
        {%- set key = file.file_key ~ read_key_staging() ~ staging -%}
        {%- do file_keys.update({file.read_path: key}) -%}
        {%- do cases.append("when " ~ sql_string(file.read_path) ~ " then " ~ sql_string(key)) -%}
    {%- endfor -%}
    {%- if cases -%}
        {%- set read_key = "case source." ~ read_path_column() ~ " " ~ (cases | join(" ")) ~ " end" -%}
    {%- else -%}
        {%- set read_key = "cast(null as string)" -%}
    {%- endif -%}
    {{ return({
        "select_list": (typed + [read_key ~ " as input_read_key"] + extra) | join(",\n        "),
        "binary_columns": binary_columns,
        "invalid_utf8_check": invalid_utf8_checks | join(" or "),
        "file_keys": file_keys,
        "read_key": read_key,
    }) }}
{% endmacro %}


{#- The columns stg_documents keeps for incremental builds, not carried to the release or other outputs. -#}
{% macro staging_bookkeeping_columns() %}{{ return(["body_hash", "input_read_key"]) }}{% endmacro %}


{#-
  staging_filters(input, staged): {"files": a condition on the input rows (aliased source), true for the
  rows of the files to read; "rows": a condition on the staged rows of CTE documents, true for the rows to
  write}.  On a full build, or when the stored table's columns or types differ from the input's staged
  ones (a new lineage column, say), every file is read and every row written.  Otherwise only the files
  no stored row has the input_read_key of (unread_files), and of their rows those new or different from
  the stored row (the body compared by body_hash, every other column but input_read_key by value).
-#}
{% macro staging_filters(input, staged) %}
    {%- set everything = {"files": "true", "rows": "true"} -%}
    {%- if not (execute and is_incremental()) -%}{{ return(everything) }}{%- endif -%}
    {%- set stored = [] -%}
    {%- for column in adapter.get_columns_in_relation(this) -%}
        {%- do stored.append((column.name | lower, column.dtype | upper)) -%}
    {%- endfor -%}
    {%- set wanted = [] -%}
    {%- set described = run_query("describe select " ~ staged.select_list ~ " from "
        ~ (input.keyed_relation or input.relation) ~ " as source") -%}
    {%- for row in described.rows -%}{%- do wanted.append((row[0] | lower, row[1] | upper)) -%}{%- endfor -%}
    {%- if stored | sort != wanted | sort -%}
        {{ log("stg_documents: the input's columns or types changed since the last build: every row is"
            ~ " written again", info=True) }}
        {{ return(everything) }}
    {%- endif -%}
    {%- set matches = ["previous.doc_id = candidates.doc_id", "previous.body_hash = candidates.body_hash"] -%}
    {%- for row in described.rows if row[0] | lower not in ("doc_id", "body", "body_hash", "input_read_key") -%}
        {%- set column = quoted_column(row[0]) -%}
        {%- do matches.append("previous." ~ column ~ " is not distinct from candidates." ~ column) -%}
    {%- endfor -%}
    {%- set unread = unread_files(staged) -%}
    {%- if unread is not none -%}
        {{ log("stg_documents: reads " ~ unread | length ~ " of " ~ staged.file_keys | length
            ~ " input file(s) whole, the others are staged already", info=True) }}
    {%- endif -%}
    {#- the ids first, from columns without the body, then the rows of those ids: an anti join carrying the
        bodies built its hash table of them (a batch of 100k new pages: 360 MB) -#}
    {{ return({
        "files": files_condition(unread),
        "rows": "doc_id in (select candidates.doc_id from documents as candidates where not exists (select 1 from "
            ~ this ~ " as previous where " ~ (matches | join("\n        and ")) ~ "))",
    }) }}
{% endmacro %}


{#- The read paths of the input files whose input_read_key no stored row has (all, when none are keyed). -#}
{% macro unread_files(staged) %}
    {%- if not staged.file_keys -%}{{ return(none) }}{%- endif -%}
    {%- set stored = run_query("select distinct input_read_key from " ~ this
        ~ " where input_read_key is not null").columns[0].values() -%}
    {%- set unread = [] -%}
    {%- for read_path, key in staged.file_keys.items() if key not in stored -%}
        {%- do unread.append(read_path) -%}
    {%- endfor -%}
    {{ return(unread) }}
{% endmacro %}


{#-
  staged_file_keys(): the file keys (file_key in webdedup/inputs/input_files.py: path, size, modification
  time) of the input files an incremental stg_documents holds rows from, as read by earlier builds; empty
  on a full build.  Such a file passed duckdb__read_documents_files' checks in the build that staged it,
  and, unchanged by the same rule as input_read_key, is not checked again.
-#}
{% macro staged_file_keys() %}
    {%- if not (execute and is_incremental()) -%}{{ return([]) }}{%- endif -%}
    {%- set names = adapter.get_columns_in_relation(this) | map(attribute="name") | map("lower") | list -%}
    {%- if "input_read_key" not in names -%}{{ return([]) }}{%- endif -%}
    {%- set keys = [] -%}
    {%- for key in run_query("select distinct input_read_key from " ~ this
            ~ " where input_read_key is not null").columns[0].values() -%}
        {%- do keys.append(key.rsplit(read_key_staging(), 1)[0]) -%}
    {%- endfor -%}
    {{ return(keys) }}
{% endmacro %}


{#- What joins a file's key and the staging digest in input_read_key (staged_select, staged_file_keys). -#}
{% macro read_key_staging() %}{{ return(" staging ") }}{% endmacro %}


{#- A condition on the input rows (source): true for those of the files named (all when none). -#}
{% macro files_condition(read_paths) %}
    {%- if read_paths is none -%}{{ return("true") }}{%- endif -%}
    {%- if not read_paths -%}{{ return("false") }}{%- endif -%}
    {%- set quoted = [] -%}
    {%- for read_path in read_paths -%}{%- do quoted.append(sql_string(read_path)) -%}{%- endfor -%}
    {{ return("source." ~ read_path_column() ~ " in (" ~ (quoted | join(", ")) ~ ")") }}
{% endmacro %}


{#-
  sync_stored_documents(): pre-hook of the incremental stg_documents, before the model writes its rows.
  Deletes the stored rows of documents that left the input since the last build, then gives the stored
  rows of the documents in the files this build reads those files' input_read_key, so that a key on a
  stored row always names the file the row was last read from (the rows that differ are then written
  again by the model).  One statement each, over one documents_input() (a CSV input is profiled once).
-#}
{% macro sync_stored_documents() %}
    {%- if not (execute and is_incremental()) -%}{{ return("select 1") }}{%- endif -%}
    {#- the model's compile, earlier in this build, checked the files -#}
    {%- set input = documents_input(check_files=false) -%}
    {%- set statements = [delete_rows_without_match(
        this, "(select cast(doc_id as string) as doc_id from " ~ input.relation ~ ")", "doc_id")] -%}
    {%- set staged = staged_select(input) -%}
    {%- set names = adapter.get_columns_in_relation(this) | map(attribute="name") | map("lower") | list -%}
    {%- if staged.file_keys and "input_read_key" in names -%}
        {%- set doc_id = staged_column("source.doc_id", "doc_id", input.categories.get("doc_id", "text")) -%}
        {%- do statements.append(update_column_from(
            this,
            "(select " ~ doc_id ~ " as doc_id, " ~ staged.read_key ~ " as input_read_key from "
                ~ input.keyed_relation ~ " as source where " ~ files_condition(unread_files(staged)) ~ ")",
            "doc_id",
            "input_read_key")) -%}
    {%- endif -%}
    {{ return(statements | map("trim") | select | join(";\n")) }}
{% endmacro %}
