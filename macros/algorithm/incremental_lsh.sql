{#-
  The incremental LSH stages (int_band_memberships, int_anchor_pairs, int_anchor_intersections) keep what
  they computed for a group anchor while the anchor's state is unchanged: the same document is still the
  anchor of its group, with the same shingle set (shingle_set_key) and, for band keys, the same
  fingerprint settings (settings_key).  A build first deletes the rows that are no longer current (these
  pre-hooks; all of them in a table built before these columns existed), then appends what is missing,
  so each table always equals a full rebuild's.
-#}

{#-
  delete_stale_anchor_rows(sides, with_settings): a pre-hook deleting the rows of this incremental model
  in which one of `sides` (pairs of columns: an anchor doc_id and its shingle_set_key) is not a current
  anchor in that state (int_shingle_set_groups), or, with_settings, whose settings_key is not the
  anchor's.  Nothing on a full build.
-#}
{% macro delete_stale_anchor_rows(sides, with_settings) %}
    {%- set needed = sides | map("last") | list + (["settings_key"] if with_settings else []) -%}
    {%- if is_incremental() and not stored_columns_missing(needed) -%}
        delete from {{ this }} as stored
        where
        {%- for doc_id, key in sides %}
            {% if not loop.first %}or {% endif %}not exists (
                select 1 from {{ ref("int_shingle_set_groups") }} as anchors
                where
                    anchors.is_anchor
                    and anchors.doc_id = stored.{{ doc_id }}
                    and anchors.shingle_set_key = stored.{{ key }}
                    {%- if with_settings %}
                    and anchors.settings_key = stored.settings_key
                    {%- endif %}
            )
        {%- endfor %}
    {%- elif is_incremental() -%}
        delete from {{ this }}
    {%- endif -%}
{% endmacro %}

{#-
  delete_unpaired_intersections(): int_anchor_intersections' pre-hook: the counts of anchor pairs that are
  no longer in int_anchor_pairs with the same two shingle sets.  Nothing on a full build.
-#}
{% macro delete_unpaired_intersections() %}
    {%- if is_incremental() and not stored_columns_missing(["low_shingle_set_key", "high_shingle_set_key"]) -%}
        delete from {{ this }} as stored
        where not exists (
            select 1 from {{ ref("int_anchor_pairs") }} as pairs
            where
                pairs.left_anchor_doc_id = stored.low_doc_id
                and pairs.right_anchor_doc_id = stored.high_doc_id
                and pairs.left_shingle_set_key = stored.low_shingle_set_key
                and pairs.right_shingle_set_key = stored.high_shingle_set_key
        )
    {%- elif is_incremental() -%}
        delete from {{ this }}
    {%- endif -%}
{% endmacro %}

{#-
  stored_columns_missing(columns): whether the stored table lacks one of `columns` (built by a version
  of the project before them): then nothing of it is reused, and on_schema_change adds the columns.
-#}
{% macro stored_columns_missing(columns) %}
    {%- set stored = adapter.get_columns_in_relation(this) | map(attribute="name") | map("lower") | list -%}
    {{- return(columns | reject("in", stored) | list | length > 0) -}}
{% endmacro %}
