{#-
  strict_clusters(components, shingle_sets, threshold): a select of (doc_id, kept_doc_id, jaccard) for
  every member of a multi-member component of `components` (int_components: doc_id, component_id,
  component_size, component_rank, group_anchor_doc_id), kept_doc_id being the representative the member
  is kept for under `clustering: strict`.

  The rule (deterministic, greedy in representative order), per component, until every member is placed:
  the unplaced member first in the representative order (component_rank) becomes a representative, and
  every unplaced member whose exact Jaccard to it is at or above the threshold is placed with it.  So no
  member is ever removed in favour of a page it is not similar to, and a component without chains stays
  whole (its first-ranked member is within the threshold of all others).  Exact Jaccard is that of the
  members' shingle-set group anchors (`shingle_sets`: int_shingle_sets), scored by exact_jaccard whether
  or not the pair was ever an LSH candidate; identical sets score 1.0 (empty sets 0.0).

  Each round scores one pair per unplaced member of the components still being split, so the rounds are
  the most representatives any one component needs and the work is at most (component size) x (its
  representatives) pairs.  The state lives in tables named after the calling model (<model>__strict_*),
  rewritten each round by run_query on both engines; the final one stays until the next build so the
  model's query can read it.  Var graph_max_rounds stops a runaway loop.
-#}
{% macro strict_clusters(components, shingle_sets, threshold) %}
    {%- set state_table = _scratch_relation("strict_state") -%}
    {%- set next_table = _scratch_relation("strict_next") -%}
    {%- set picks_table = _scratch_relation("strict_picks") -%}
    {%- set pairs_table = _scratch_relation("strict_pairs") -%}
    {%- set scores_table = _scratch_relation("strict_scores") -%}
    {%- if execute -%}
        {%- set max_rounds = var("graph_max_rounds") | int -%}
        {%- do _replace_scratch_table(state_table,
            "select doc_id, component_id, component_rank, group_anchor_doc_id,"
            ~ " cast(null as string) as kept_doc_id, cast(null as double) as jaccard"
            ~ " from " ~ components ~ " as c where component_size > 1") -%}
        {%- set state = {"rounds": 0, "open": 1} -%}
        {%- for round in range(max_rounds) if state.open > 0 -%}
            {#- the next representative of every component with unplaced members -#}
            {%- do _replace_scratch_table(picks_table,
                "select component_id, doc_id as pick_doc_id, group_anchor_doc_id as pick_anchor_doc_id from ("
                ~ " select component_id, doc_id, group_anchor_doc_id, row_number() over ("
                ~ " partition by component_id order by component_rank) as pick_rank"
                ~ " from " ~ state_table ~ " as s where kept_doc_id is null) as open_members"
                ~ " where pick_rank = 1") -%}
            {%- do _replace_scratch_table(pairs_table,
                "select distinct least(s.group_anchor_doc_id, p.pick_anchor_doc_id) as low_doc_id,"
                ~ " greatest(s.group_anchor_doc_id, p.pick_anchor_doc_id) as high_doc_id"
                ~ " from " ~ state_table ~ " as s inner join " ~ picks_table ~ " as p"
                ~ " on s.component_id = p.component_id where s.kept_doc_id is null") -%}
            {%- do _replace_scratch_table(scores_table, exact_jaccard(pairs_table, shingle_sets)) -%}
            {%- do _replace_scratch_table(next_table,
                "select s.doc_id, s.component_id, s.component_rank, s.group_anchor_doc_id,"
                ~ " case when s.kept_doc_id is not null then s.kept_doc_id"
                ~ " when s.doc_id = p.pick_doc_id or j.jaccard >= " ~ threshold ~ " then p.pick_doc_id"
                ~ " end as kept_doc_id,"
                ~ " case when s.kept_doc_id is not null then s.jaccard"
                ~ " when s.doc_id = p.pick_doc_id then 1.0"
                ~ " when j.jaccard >= " ~ threshold ~ " then j.jaccard end as jaccard"
                ~ " from " ~ state_table ~ " as s"
                ~ " left join " ~ picks_table ~ " as p on s.component_id = p.component_id"
                ~ " left join " ~ scores_table ~ " as j"
                ~ " on least(s.group_anchor_doc_id, p.pick_anchor_doc_id) = j.low_doc_id"
                ~ " and greatest(s.group_anchor_doc_id, p.pick_anchor_doc_id) = j.high_doc_id") -%}
            {%- do _replace_scratch_table(state_table, "select * from " ~ next_table) -%}
            {%- set open = run_query("select count(*) from " ~ state_table ~ " where kept_doc_id is null")
                .columns[0].values()[0] -%}
            {%- do state.update({"rounds": round + 1, "open": open}) -%}
        {%- endfor -%}
        {%- for scratch in [next_table, picks_table, pairs_table, scores_table] -%}
            {%- do run_query("drop table if exists " ~ scratch) -%}
        {%- endfor -%}
        {%- if state.open > 0 -%}
            {{ exceptions.raise_compiler_error("strict_clusters: members still unplaced after "
                ~ max_rounds ~ " rounds (raise var graph_max_rounds)") }}
        {%- endif -%}
        {{ log("strict_clusters: " ~ state.rounds ~ " round(s)", info=True) }}
    {%- endif %}
    select doc_id, kept_doc_id, jaccard from {{ state_table }}
{% endmacro %}


{#- A scratch table named after the calling model: <schema>.<model>__<suffix>. -#}
{% macro _scratch_relation(suffix) %}
    {{- return(this.incorporate(path={"identifier": this.identifier ~ "__" ~ suffix})) -}}
{% endmacro %}


{#- Replace a scratch table with the result of a select. -#}
{% macro _replace_scratch_table(name, select_sql) %}
    {{- return(adapter.dispatch("_replace_scratch_table", "web_text_dedup")(name, select_sql)) -}}
{% endmacro %}

{% macro duckdb___replace_scratch_table(name, select_sql) %}
    {%- do run_query("create or replace table " ~ name ~ " as " ~ select_sql) -%}
{% endmacro %}

{% macro spark___replace_scratch_table(name, select_sql) %}
    {%- do _spark_replace_table(name, select_sql) -%}
{% endmacro %}
