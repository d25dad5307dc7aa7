{#-
  The input contract (issue 14), enforced once, in stg_documents, for every input mode (seed, CSV,
  Parquet, a folder or glob of them, WARC).

  * Required columns and their accepted types are declared in models/staging/_staging__models.yml: each
    column of stg_documents with `meta.input_types` is a required input column, and the list names the
    type categories it accepts (type_category below maps an engine's type name to a category: text,
    binary, integer, date, timestamp, timestamp_tz, null, other).  A missing column or a type outside the
    list stops the build before any work, naming the column, its type and the file.
  * Columns the project adds to an output may not come from the input: every column declared on
    stg_documents or on a model downstream of it (deduped_documents' cluster_id, cluster_inspection's
    jaccard_to_representative, ...), other than the required input columns, is reserved, read from the
    YAML through dbt's graph, so the list follows the models.  An input column with such a name (any
    case) stops the build before any work, naming it.
  * crawled_at is staged as a UTC timestamp without zone: a value with an offset or zone (text such as
    2024-01-05T08:30:00+02:00 or 2024-01-05 08:30:00 America/New_York, or a Parquet timestamp with time
    zone) is converted to UTC; a value without one (text, a date, a timestamp without zone) is taken as
    UTC.  Both engines run their sessions in UTC (profiles.yml).
  * A binary (BLOB / Parquet BINARY) body, title, source or domain is decoded as UTF-8.  Bytes that are not
    UTF-8 stop the build naming the doc_ids (var invalid_utf8: error, the default), or with
    invalid_utf8: replace each invalid sequence becomes U+FFFD (as Python's bytes.decode(errors=
    "replace")); CSV files are read the same way (webdedup/inputs/csv_files.py).
-#}

{#- {column name: [accepted type categories]} of the required input columns, from the YAML. -#}
{% macro input_contract() %}
    {%- set contract = {} -%}
    {%- if not execute -%}{{ return(contract) }}{%- endif -%}
    {%- set node = graph.nodes.get("model." ~ project_name ~ ".stg_documents") -%}
    {%- for name, column in node.columns.items() if column.meta.get("input_types") -%}
        {%- do contract.update({name | lower: column.meta["input_types"]}) -%}
    {%- endfor -%}
    {{ return(contract) }}
{% endmacro %}


{#-
  The column names (lower case) the project adds to its outputs: every column declared on stg_documents
  or on any enabled model downstream of it (dbt's graph holds enabled nodes only: the opt-in audit
  models add theirs when var audit is on), except the required input columns.
-#}
{% macro reserved_output_columns() %}
    {%- set reserved = [] -%}
    {%- if not execute -%}{{ return(reserved) }}{%- endif -%}
    {%- set downstream = {"model." ~ project_name ~ ".stg_documents": true} -%}
    {%- set models = graph.nodes.values() | selectattr("resource_type", "equalto", "model") | list -%}
    {#- a fixed point: each pass adds the models that depend on one already found (the DAG is shallow) -#}
    {%- for _ in range(models | length) -%}
        {%- for node in models if node.unique_id not in downstream -%}
            {%- if node.depends_on.nodes | select("in", downstream) | list -%}
                {%- do downstream.update({node.unique_id: true}) -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- set required = input_contract() -%}
    {%- for node in models if node.unique_id in downstream -%}
        {%- for name in node.columns if name | lower not in required and name | lower not in reserved -%}
            {%- do reserved.append(name | lower) -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return(reserved | sort) }}
{% endmacro %}


{#- var invalid_utf8: error (default) or replace. -#}
{% macro invalid_utf8_mode() %}
    {%- set mode = var("invalid_utf8", "error") | string | trim | lower -%}
    {%- if mode not in ("error", "replace") -%}
        {{ exceptions.raise_compiler_error(
            "var 'invalid_utf8' must be error or replace, got '" ~ var("invalid_utf8") ~ "'") }}
    {%- endif -%}
    {{ return(mode) }}
{% endmacro %}


{#-
  check_input_contract(label, described, file_label): stops the build when the input's columns break the
  contract.  described = [(name, engine type)], file_label names the file when several are read.
  Returns {lower name: type category} for every column.
-#}
{% macro check_input_contract(label, described, file_label="") %}
    {%- set contract = input_contract() -%}
    {%- set where = label ~ (": file '" ~ file_label ~ "'" if file_label else "") -%}
    {%- set categories = {} -%}
    {%- set names = [] -%}
    {%- for name, type_name in described -%}
        {%- do categories.update({name | lower: type_category(type_name)}) -%}
        {%- do names.append(name) -%}
    {%- endfor -%}
    {%- set missing = [] -%}
    {%- for required in contract if required not in categories -%}{%- do missing.append(required) -%}{%- endfor -%}
    {%- if missing -%}
        {{ exceptions.raise_compiler_error(
            where ~ " is missing required column(s): " ~ (missing | join(", "))
            ~ " (found: " ~ (names | join(", ")) ~ ")") }}
    {%- endif -%}
    {%- set wrong = [] -%}
    {%- for name, type_name in described if name | lower in contract -%}
        {%- if categories[name | lower] not in contract[name | lower] -%}
            {%- do wrong.append(name ~ " is " ~ type_name ~ " (accepted: "
                ~ (contract[name | lower] | reject("equalto", "null") | join(", ")) ~ ")") -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if wrong -%}
        {{ exceptions.raise_compiler_error(
            where ~ " has column(s) of a type the input contract does not accept: " ~ (wrong | join("; "))
            ~ "; convert them in the file or with a query first") }}
    {%- endif -%}
    {%- set reserved = reserved_output_columns() -%}
    {%- set clashes = [] -%}
    {%- for name in names if name | lower in reserved -%}{%- do clashes.append(name) -%}{%- endfor -%}
    {%- if clashes -%}
        {{ exceptions.raise_compiler_error(
            where ~ " has column(s) named like a column this project adds to its outputs: "
            ~ (clashes | join(", ")) ~ "; rename or drop them in the input (reserved names: "
            ~ "docs/analysts.md#input-contract)") }}
    {%- endif -%}
    {%- set engine_names = [] -%}
    {%- for name in names if name | lower in engine_reserved_columns() -%}{%- do engine_names.append(name) -%}{%- endfor -%}
    {%- if engine_names -%}
        {{ exceptions.raise_compiler_error(
            where ~ " has column(s) named like a column the " ~ target.type ~ " engine reserves: "
            ~ (engine_names | join(", ")) ~ "; rename or drop them in the input") }}
    {%- endif -%}
    {#- dbt quotes column names without escaping (its unit tests read stg_documents' columns) -#}
    {%- set unquotable = [] -%}
    {%- for name in names if '"' in name or "`" in name -%}{%- do unquotable.append(name) -%}{%- endfor -%}
    {%- if unquotable -%}
        {{ exceptions.raise_compiler_error(
            where ~ " has column name(s) holding a quote character (\" or `), which dbt cannot quote: "
            ~ (unquotable | join(", ")) ~ "; rename them in the input") }}
    {%- endif -%}
    {%- set seen = {} -%}
    {%- for name in names -%}
        {%- if name | lower in seen -%}
            {{ exceptions.raise_compiler_error(
                where ~ " has two columns whose names differ only in case: " ~ seen[name | lower] ~ ", " ~ name) }}
        {%- endif -%}
        {%- do seen.update({name | lower: name}) -%}
    {%- endfor -%}
    {{ return(categories) }}
{% endmacro %}


{#- Column names the engine gives a meaning of its own (DuckDB: rowid, the row id that the release's stored
    order is read by, which an input column of that name would shadow). -#}
{% macro engine_reserved_columns() %}
    {{- return(adapter.dispatch("engine_reserved_columns", "web_text_dedup")()) -}}
{% endmacro %}

{% macro duckdb__engine_reserved_columns() %}{{ return(["rowid"]) }}{% endmacro %}

{% macro spark__engine_reserved_columns() %}{{ return([]) }}{% endmacro %}


{#- The contract's category of an engine type name. -#}
{% macro type_category(type_name) %}
    {{- return(adapter.dispatch("type_category", "web_text_dedup")(type_name | string | trim | lower)) -}}
{% endmacro %}

{% macro duckdb__type_category(type_name) %}
    {%- if type_name == "varchar" or type_name.startswith("varchar(") or type_name == "uuid" -%}
        {{ return("text") }}
    {%- elif type_name == "blob" -%}{{ return("binary") }}
    {%- elif type_name in ("tinyint", "smallint", "integer", "bigint", "hugeint",
        "utinyint", "usmallint", "uinteger", "ubigint", "uhugeint") -%}{{ return("integer") }}
    {%- elif type_name == "date" -%}{{ return("date") }}
    {%- elif type_name in ("timestamp with time zone", "timestamptz_ns") -%}{{ return("timestamp_tz") }}
    {%- elif type_name in ("timestamp", "timestamp_s", "timestamp_ms", "timestamp_ns") -%}{{ return("timestamp") }}
    {%- elif type_name == '"null"' or type_name == "null" -%}{{ return("null") }}
    {%- endif -%}
    {{ return("other") }}
{% endmacro %}

{% macro spark__type_category(type_name) %}
    {%- if type_name == "string" or type_name.startswith("varchar") or type_name.startswith("char") -%}
        {{ return("text") }}
    {%- elif type_name == "binary" -%}{{ return("binary") }}
    {%- elif type_name in ("tinyint", "smallint", "int", "bigint") -%}{{ return("integer") }}
    {%- elif type_name == "date" -%}{{ return("date") }}
    {%- elif type_name == "timestamp" -%}{{ return("timestamp_tz") }}
    {%- elif type_name == "timestamp_ntz" -%}{{ return("timestamp") }}
    {%- elif type_name == "void" -%}{{ return("null") }}
    {%- endif -%}
    {{ return("other") }}
{% endmacro %}


{#-
  staged_column(expression, name, category): the staged value of a required input column of the given
  type category: crawled_at as a UTC timestamp without zone, the others as text.
-#}
{% macro staged_column(expression, name, category) %}
    {%- if name == "crawled_at" -%}{{ return(utc_timestamp(expression, category)) }}{%- endif -%}
    {%- if category == "binary" -%}{{ return(utf8_text(expression)) }}{%- endif -%}
    {{ return("cast(" ~ expression ~ " as string)") }}
{% endmacro %}


{#- A binary value decoded as UTF-8: null when invalid (the gate names it), or U+FFFD with invalid_utf8: replace. -#}
{% macro utf8_text(expression) %}
    {{- return(adapter.dispatch("utf8_text", "web_text_dedup")(expression, invalid_utf8_mode())) -}}
{% endmacro %}

{% macro duckdb__utf8_text(expression, mode) -%}
    {%- if mode == "replace" -%}
        coalesce(try(decode({{ expression }})), webdedup_decode_utf8_replace({{ expression }}))
    {%- else -%}
        try(decode({{ expression }}))
    {%- endif -%}
{%- endmacro %}

{% macro spark__utf8_text(expression, mode) -%}
    {%- if mode == "replace" -%}
        make_valid_utf8(cast({{ expression }} as string))
    {%- else -%}
        cast({{ expression }} as string)
    {%- endif -%}
{%- endmacro %}


{#- True (a boolean SQL expression) when a binary value is not valid UTF-8. -#}
{% macro is_invalid_utf8(expression) %}
    {{- return(adapter.dispatch("is_invalid_utf8", "web_text_dedup")(expression)) -}}
{% endmacro %}

{% macro duckdb__is_invalid_utf8(expression) -%}
    ({{ expression }} is not null and try(decode({{ expression }})) is null)
{%- endmacro %}

{% macro spark__is_invalid_utf8(expression) -%}
    ({{ expression }} is not null and not is_valid_utf8(cast({{ expression }} as string)))
{%- endmacro %}


{#- A value of the given type category as a UTC timestamp without zone (null when it cannot be parsed). -#}
{% macro utc_timestamp(expression, category) %}
    {{- return(adapter.dispatch("utc_timestamp", "web_text_dedup")(expression, category)) -}}
{% endmacro %}

{#- DuckDB: infinite values (date or timestamp 'infinity', '-infinity') are null; so is text that does not
    start with a digit ('epoch', 'now', 'today', which DuckDB's cast reads as dates). -#}
{% macro duckdb__utc_timestamp(expression, category) -%}
    {%- if category == "timestamp_tz" -%}
        case
            when isfinite(cast({{ expression }} as timestamptz))
                then timezone('UTC', cast({{ expression }} as timestamptz))
        end
    {%- elif category in ("date", "timestamp") -%}
        case when isfinite(cast({{ expression }} as timestamp)) then cast({{ expression }} as timestamp) end
    {%- else -%}
        {#- text: with the session in UTC, text without a zone is read as UTC -#}
        case
            when
                regexp_matches(cast({{ expression }} as varchar), '^[0-9]')
                and isfinite(try_cast(cast({{ expression }} as varchar) as timestamptz))
                then timezone('UTC', try_cast(cast({{ expression }} as varchar) as timestamptz))
        end
    {%- endif -%}
{%- endmacro %}

{% macro spark__utc_timestamp(expression, category) -%}
    {%- if category in ("date", "timestamp", "timestamp_tz") -%}
        cast({{ expression }} as timestamp_ntz)
    {%- else -%}
        {#- text: Spark's timestamp honours an offset or zone; the session time zone (UTC) applies otherwise -#}
        cast(try_cast(cast({{ expression }} as string) as timestamp) as timestamp_ntz)
    {%- endif -%}
{%- endmacro %}


{#- `dbt run-operation show_input_contract`: print the required columns, their accepted types and the reserved names. -#}
{% macro show_input_contract() %}
    {%- for name, types in input_contract().items() -%}
        {{ log("required: " ~ name ~ " (" ~ (types | reject("equalto", "null") | join(", ")) ~ ")", info=True) }}
    {%- endfor -%}
    {{ log("reserved: " ~ (reserved_output_columns() | join(", ")), info=True) }}
    {{ log("reserved by the " ~ target.type ~ " engine: " ~ (engine_reserved_columns() | join(", ") or "none"), info=True) }}
{% endmacro %}
