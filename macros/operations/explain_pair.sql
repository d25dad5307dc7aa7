{#-
  dbt run-operation explain_pair --args '{left: doc-001, right: doc-013}'

  Explains the pipeline's decision for two documents from the built tables: their shingle-set groups,
  the LSH bands they share (or "never a candidate"), signature overlap, exact Jaccard (of the text the
  pipeline shingled, int_shingle_texts: with boilerplate_filter on, the filtered text), the decision and
  reason, their clusters and, when they share one, the shortest path of accepted duplicate edges that
  joins them.

  It reads the published database by default (<DEDUP_PUBLISH_DIR>/<build file name>, what `make sql`
  opens), attached read-only; `database: build` reads the build file (DEDUP_DB_PATH) and any other
  value is taken as the path of a database file.  The first line names the database read.  DuckDB only.
-#}
{% macro explain_pair(left=none, right=none, database="published") %}
    {%- set usage = "usage: dbt run-operation explain_pair --args '{left: doc-001, right: doc-013}'" -%}
    {%- for name, value in [("left", left), ("right", right)] -%}
        {%- if value is none or value | string | trim == "" -%}
            {{ exceptions.raise_compiler_error("explain_pair: missing argument '" ~ name ~ "' (" ~ usage ~ ")") }}
        {%- endif -%}
    {%- endfor -%}
    {%- set source = _explain_pair_source(database) -%}
    {%- set rel = source.relations -%}
    {%- set ids = [left | string, right | string] | sort -%}
    {%- set l = sql_string(ids[0]) -%}
    {%- set r = sql_string(ids[1]) -%}
    {%- set lines = ["explain_pair " ~ ids[0] ~ " ~ " ~ ids[1] ~ " (database " ~ source.path ~ ")"] -%}
    {#- the settings that database was built with, not this invocation's vars -#}
    {%- set built = run_query("select shingle_size, threshold, boilerplate_filter, settings_key from "
        ~ rel["int_run_settings"]).rows[0] -%}
    {%- do lines.append("  built with: " ~ built[3]) -%}

{%- set found = run_query(
        "select doc_id from " ~ rel["stg_documents"] ~ " where doc_id in (" ~ l ~ ", " ~ r ~ ")") -%}
    {%- set found_ids = found.columns[0].values() | list -%}
    {%- for doc_id in ids if doc_id not in found_ids -%}
        {{ exceptions.raise_compiler_error("explain_pair: no document with doc_id '" ~ doc_id ~ "' in "
            ~ source.path) }}
    {%- endfor -%}

    {%- set groups = run_query(
        "select doc_id, group_anchor_doc_id, group_size, shingle_count from " ~ rel["int_shingle_set_groups"]
        ~ " where doc_id in (" ~ l ~ ", " ~ r ~ ") order by doc_id") -%}
    {%- set anchors = {} -%}
    {%- for row in groups.rows -%}
        {%- do anchors.update({row[0]: row[1]}) -%}
        {%- do lines.append("  " ~ row[0] ~ ": " ~ row[3] ~ " distinct shingles, identical-set group of "
            ~ row[2] ~ " (anchor " ~ row[1] ~ ")") -%}
    {%- endfor -%}

    {%- set bands = run_query(
        "select count(*), array_to_string(list(l.band_index order by l.band_index), ', ') from " ~ rel["int_band_memberships"]
        ~ " as l join " ~ rel["int_band_memberships"] ~ " as r on l.band_index = r.band_index"
        ~ " and l.band_key = r.band_key where l.doc_id = " ~ sql_string(anchors[ids[0]])
        ~ " and r.doc_id = " ~ sql_string(anchors[ids[1]])) -%}
    {%- set identical = anchors[ids[0]] == anchors[ids[1]] -%}
    {%- set shared_count = bands.rows[0][0] -%}
    {%- do lines.append("  shared LSH bands: " ~ ("all (identical shingle sets)" if identical
        else (shared_count ~ " (" ~ bands.rows[0][1] ~ ")" if shared_count > 0 else "none"))) -%}

    {%- set scores = run_query(
        "with pairs as (select " ~ l ~ " as low_doc_id, " ~ r ~ " as high_doc_id), "
        ~ "fp as (select * from " ~ rel["int_fingerprints"] ~ " where doc_id in (" ~ l ~ ", " ~ r ~ ")), "
        ~ "computed as (select doc_id, webdedup_shingle_set(body, " ~ built[0]
        ~ ") as shingle_set from " ~ rel["int_shingle_texts"] ~ " where doc_id in (" ~ l ~ ", " ~ r ~ ")), "
        ~ "sets as (select doc_id, len(shingle_set) as shingle_count, shingle_set from computed), "
        ~ "j as (" ~ exact_jaccard("pairs", "sets") ~ ") "
        ~ "select j.jaccard, j.shared_shingles, j.union_shingles, "
        ~ signature_overlap("a.signature", "b.signature")
        ~ " from j join fp as a on a.doc_id = j.low_doc_id join fp as b on b.doc_id = j.high_doc_id") -%}
    {%- set s = scores.rows[0] -%}
    {%- do lines.append("  exact Jaccard: " ~ s[0] ~ " (" ~ s[1] ~ " shared of " ~ s[2] ~ " shingles"
        ~ (" of the text left after boilerplate_filter" if built[2] else "") ~ ")") -%}
    {%- do lines.append("  signature overlap: " ~ s[3]) -%}

    {%- set decision = run_query(
        "select is_duplicate, reason, shared_bands from " ~ rel["scored_pairs"]
        ~ " where left_doc_id = " ~ l ~ " and right_doc_id = " ~ r) -%}
    {%- if decision.rows | length == 0 and not identical and shared_count == 0 -%}
        {%- do lines.append("  decision: never a candidate (no shared LSH band), so never scored") -%}
    {%- elif decision.rows | length == 0 -%}
        {%- do lines.append("  decision: "
            ~ ("duplicate" if s[0] >= built[1] else "not a duplicate")
            ~ " - scored through the group anchors; not listed itself (star form, see int_candidate_pairs)") -%}
    {%- else -%}
        {%- do lines.append("  decision: " ~ ("duplicate" if decision.rows[0][0] else "not a duplicate")
            ~ " (reason " ~ decision.rows[0][1] ~ ")") -%}
    {%- endif -%}

    {%- set clusters = run_query(
        "select doc_id, cluster_id, representative_doc_id from " ~ rel["clusters"]
        ~ " where doc_id in (" ~ l ~ ", " ~ r ~ ") order by doc_id") -%}
    {%- for row in clusters.rows -%}
        {%- do lines.append("  " ~ row[0] ~ " is in " ~ row[1] ~ " (representative " ~ row[2] ~ ")") -%}
    {%- endfor -%}
    {%- if clusters.rows[0][1] == clusters.rows[1][1] -%}
        {%- set path = run_query(
            "with recursive edges as (select left_doc_id as src, right_doc_id as dst from "
            ~ rel["duplicate_pairs"] ~ " union all select right_doc_id, left_doc_id from "
            ~ rel["duplicate_pairs"] ~ "), "
            ~ "walk(node, path) using key (node) as ("
            ~ " select " ~ l ~ ", [" ~ l ~ "]"
            ~ " union select edges.dst, min(list_append(walk.path, edges.dst)) from walk"
            ~ " join edges on edges.src = walk.node"
            ~ " where edges.dst not in (select node from recurring.walk) group by edges.dst)"
            ~ " select array_to_string(path, ' -> ') from walk where node = " ~ r) -%}
        {%- do lines.append("  path of accepted edges: " ~ path.rows[0][0]) -%}
    {%- else -%}
        {%- do lines.append("  different clusters: no path of accepted edges joins them") -%}
    {%- endif -%}
    {{ print(lines | join("\n")) }}
{% endmacro %}


{#-
  The database explain_pair reads: {path, relations}, relations mapping each model it queries to its
  table in that database.  The published database (or another file) is attached read-only under its own
  alias; its tables have the build's schemas and names.
-#}
{% macro _explain_pair_source(database) %}
    {%- set models = ["int_run_settings", "stg_documents", "int_shingle_texts", "int_shingle_set_groups", "int_band_memberships", "int_fingerprints",
        "scored_pairs", "clusters", "duplicate_pairs"] -%}
    {%- set build_path = run_query("select path from duckdb_databases() where database_name = "
        ~ sql_string(target.database)).columns[0].values()[0] -%}
    {%- if database == "build" -%}
        {%- set path = build_path -%}
    {%- elif database == "published" -%}
        {%- set publish_dir = env_var("DEDUP_PUBLISH_DIR", ".") -%}
        {%- if publish_dir in ("", "none") -%}
            {{ exceptions.raise_compiler_error("explain_pair: publishing is off (DEDUP_PUBLISH_DIR is empty);"
                ~ " pass database: build to read the build file " ~ build_path) }}
        {%- endif -%}
        {%- set path = publish_dir ~ "/" ~ build_path.split("/")[-1] -%}
    {%- else -%}
        {%- set path = database | string -%}
    {%- endif -%}
    {%- if run_query("select count(*) from glob(" ~ sql_string(path) ~ ")").columns[0].values()[0] == 0 -%}
        {{ exceptions.raise_compiler_error("explain_pair: no database file at " ~ path ~ (
            " (run `dbt build` first, or pass database: build)" if database == "published" else "")) }}
    {%- endif -%}
    {%- set absolute = _explain_pair_absolute(path) -%}
    {%- if absolute == _explain_pair_absolute(build_path) -%}
        {%- set alias = target.database -%}
    {%- else -%}
        {%- set alias = "explain_pair_source" -%}
        {%- do run_query("attach if not exists " ~ sql_string(path) ~ " as " ~ alias ~ " (read_only)") -%}
    {%- endif -%}
    {%- set relations = {} -%}
    {%- for name in models -%}
        {%- set built = ref(name) -%}
        {%- do relations.update({name: api.Relation.create(
            database=alias, schema=built.schema, identifier=built.identifier)}) -%}
    {%- endfor -%}
    {{ return({"path": absolute, "relations": relations}) }}
{% endmacro %}


{#- The absolute path of an existing file (its folder made absolute by webdedup_prepare_dir). -#}
{% macro _explain_pair_absolute(path) %}
    {%- set folder = path.rsplit("/", 1)[0] if "/" in path else "." -%}
    {{- return(run_query("select webdedup_prepare_dir(" ~ sql_string(folder) ~ ")").columns[0].values()[0]
        ~ "/" ~ path.split("/")[-1]) -}}
{% endmacro %}
