{#-
  release_rows(only, with_hash): the release's rows (model deduped_documents): every stg_documents column
  but its bookkeeping (staging_bookkeeping_columns), then the cluster's id and size, for the documents
  clusters keeps.  In stored order (select_in_stored_order), or, with only (a relation of doc_ids), those
  documents' rows in any order.

  with_hash (var incremental_outputs: export_parts calls it so) adds part_change 'upsert' and
  part_row_hash, the hash of the release row with body_hash in place of the body: finding the rows a build
  changed reads no body (stg_documents stores a page again whenever its body_hash or another column
  changes).
-#}
{% macro release_rows(only=none, with_hash=true) %}
    {%- set stored = ref("stg_documents") -%}
    {%- set select_list = star_except("stored", stored, staging_bookkeeping_columns())
        ~ ", matched.cluster_id, matched.cluster_size" -%}
    {%- if with_hash -%}
        {%- set hashed = [] -%}
        {%- for column in adapter.get_columns_in_relation(stored) if column.name | lower == "body_hash"
                or column.name | lower not in ["body"] + staging_bookkeeping_columns() -%}
            {%- do hashed.append("stored." ~ adapter.quote(column.name)) -%}
        {%- endfor -%}
        {%- set select_list = select_list ~ ", 'upsert' as part_change, hash("
            ~ (hashed + ["matched.cluster_id", "matched.cluster_size"]) | join(", ") ~ ") as part_row_hash" -%}
    {%- endif -%}
    {%- if only is none -%}
        {{ return(select_in_stored_order(
            select_list=select_list, table=stored, lookup=ref("clusters"), key="doc_id", keep="is_representative"
        )) }}
    {%- endif -%}
    {{ return("select " ~ select_list ~ " from " ~ stored ~ " as stored inner join " ~ ref("clusters")
        ~ " as matched on stored.doc_id = matched.doc_id semi join " ~ only
        ~ " as only_keys on stored.doc_id = only_keys.doc_id where matched.is_representative") }}
{% endmacro %}
