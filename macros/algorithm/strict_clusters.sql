{#-
  strict_clusters(components, edges, threshold): a select of (doc_id, kept_doc_id, jaccard)
  for every member of a multi-member component of `components` (int_components: doc_id, component_id,
  component_size, component_rank, group_anchor_doc_id), kept_doc_id being the representative the member
  is kept for under `clustering: strict`.  `edges` holds the accepted pairs (left_doc_id, right_doc_id).

  The rule (deterministic, greedy), per component, until every member is placed: the next kept page is
    * the unplaced member first in the representative order (component_rank) when every other unplaced
      member's exact Jaccard to it is at or above the threshold (so a component without chains stays
      whole, with the representative `components` gives it);
    * otherwise the unplaced member with the most accepted edges to other unplaced members, ties broken
      by the representative order (the centre of the largest star, as in star clustering: on chains it
      keeps nearly twice the co-clustered pairs of taking the newest page, benchmarks/strict_bound.py);
  and every unplaced member whose exact Jaccard to it is at or above the threshold is placed with it.  So
  no member is ever removed in favour of a page it is not similar to.  Exact Jaccard is that of the
  members' shingle-set group anchors, scored by exact_jaccard (from their texts) whether
  or not the pair was ever an LSH candidate; identical sets score 1.0 (empty sets 0.0).

  Each round scores one pair per unplaced member of the components still being split (two for those
  whose first-ranked member does not cover the rest), so the rounds are the most kept pages any one
  component needs.  The state lives in tables named after the calling model (<model>__strict_*),
  rewritten each round by run_query on both engines; the final one stays until the next build so the
  model's query can read it.  Var graph_max_rounds stops a runaway loop.
-#}
{% macro strict_clusters(components, edges, threshold) %}
    {%- set state_table = _scratch_relation("strict_state") -%}
    {%- set next_table = _scratch_relation("strict_next") -%}
    {%- set firsts_table = _scratch_relation("strict_firsts") -%}
    {%- set picks_table = _scratch_relation("strict_picks") -%}
    {%- set pairs_table = _scratch_relation("strict_pairs") -%}
    {%- set scores_table = _scratch_relation("strict_scores") -%}
    {%- set more_pairs_table = _scratch_relation("strict_more_pairs") -%}
    {%- set more_scores_table = _scratch_relation("strict_more_scores") -%}
    {%- set open_members = "(select * from " ~ state_table ~ " where kept_doc_id is null)" -%}
    {%- set joins_pick = _strict_pick_pair_is("j") -%}
    {%- if execute -%}
        {%- set max_rounds = var("graph_max_rounds") | int -%}
        {%- do _replace_scratch_table(state_table,
            "select doc_id, component_id, component_rank, group_anchor_doc_id,"
            ~ " cast(null as string) as kept_doc_id, cast(null as double) as jaccard"
            ~ " from " ~ components ~ " as c where component_size > 1") -%}
        {%- set state = {"rounds": 0, "open": 1} -%}
        {%- for round in range(max_rounds) if state.open > 0 -%}
            {#- the first-ranked unplaced member of every component with unplaced members, scored -#}
            {%- do _replace_scratch_table(firsts_table,
                "select component_id, doc_id as pick_doc_id, group_anchor_doc_id as pick_anchor_doc_id from ("
                ~ " select component_id, doc_id, group_anchor_doc_id, row_number() over ("
                ~ " partition by component_id order by component_rank) as pick_rank"
                ~ " from " ~ open_members ~ " as s) as ranked where pick_rank = 1") -%}
            {%- do _replace_scratch_table(pairs_table, _strict_pairs(open_members, firsts_table)) -%}
            {%- do _replace_scratch_table(scores_table, exact_jaccard(pairs_table)) -%}
            {#- the pick: that member where it covers the rest, else the one with the most open edges -#}
            {%- do _replace_scratch_table(picks_table,
                "with coverage as ("
                ~ " select s.component_id, min(case when s.doc_id = p.pick_doc_id or j.jaccard >= " ~ threshold
                ~ " then 1 else 0 end) as covers_all"
                ~ " from " ~ open_members ~ " as s inner join " ~ firsts_table ~ " as p"
                ~ " on s.component_id = p.component_id left join " ~ scores_table ~ " as j on " ~ joins_pick
                ~ " group by s.component_id),"
                ~ " open_edges as ("
                ~ " select e.doc_id, count(*) as open_edges from ("
                ~ " select left_doc_id as doc_id, right_doc_id as other_doc_id from " ~ edges
                ~ " union all select right_doc_id, left_doc_id from " ~ edges ~ ") as e"
                ~ " inner join " ~ open_members ~ " as a on e.doc_id = a.doc_id"
                ~ " inner join " ~ open_members ~ " as b on e.other_doc_id = b.doc_id"
                ~ " group by e.doc_id),"
                ~ " centres as ("
                ~ " select s.component_id, s.doc_id as pick_doc_id, s.group_anchor_doc_id as pick_anchor_doc_id,"
                ~ " row_number() over (partition by s.component_id"
                ~ " order by coalesce(o.open_edges, 0) desc, s.component_rank) as pick_rank"
                ~ " from " ~ open_members ~ " as s"
                ~ " inner join coverage as c on s.component_id = c.component_id and c.covers_all = 0"
                ~ " left join open_edges as o on s.doc_id = o.doc_id)"
                ~ " select p.component_id, p.pick_doc_id, p.pick_anchor_doc_id from " ~ firsts_table ~ " as p"
                ~ " inner join coverage as c on p.component_id = c.component_id and c.covers_all = 1"
                ~ " union all"
                ~ " select component_id, pick_doc_id, pick_anchor_doc_id from centres where pick_rank = 1") -%}
            {%- do _replace_scratch_table(more_pairs_table, _strict_pairs(open_members, picks_table, scores_table)) -%}
            {%- do _replace_scratch_table(more_scores_table, exact_jaccard(more_pairs_table)) -%}
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
                ~ " left join (select low_doc_id, high_doc_id, jaccard from " ~ scores_table
                ~ " union all select low_doc_id, high_doc_id, jaccard from " ~ more_scores_table ~ ") as j"
                ~ " on " ~ joins_pick) -%}
            {%- do _replace_scratch_table(state_table, "select * from " ~ next_table) -%}
            {%- set open = run_query("select count(*) from " ~ state_table ~ " where kept_doc_id is null")
                .columns[0].values()[0] -%}
            {%- do state.update({"rounds": round + 1, "open": open}) -%}
        {%- endfor -%}
        {%- for scratch in [next_table, firsts_table, picks_table, pairs_table, scores_table,
                more_pairs_table, more_scores_table] -%}
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


{#- The distinct (low, high) anchor pairs of every unplaced member with its component's pick, less those of `scored`. -#}
{% macro _strict_pairs(open_members, picks, scored=none) -%}
    select distinct
        least(s.group_anchor_doc_id, p.pick_anchor_doc_id) as low_doc_id,
        greatest(s.group_anchor_doc_id, p.pick_anchor_doc_id) as high_doc_id
    from {{ open_members }} as s inner join {{ picks }} as p on s.component_id = p.component_id
    {%- if scored is not none %}
    left join {{ scored }} as j on {{ _strict_pick_pair_is("j") }}
    where j.low_doc_id is null
    {%- endif %}
{%- endmacro %}


{#- The join condition: row `scores` of a scores table holds the pair of member s and pick p. -#}
{% macro _strict_pick_pair_is(scores) -%}
    least(s.group_anchor_doc_id, p.pick_anchor_doc_id) = {{ scores }}.low_doc_id
    and greatest(s.group_anchor_doc_id, p.pick_anchor_doc_id) = {{ scores }}.high_doc_id
{%- endmacro %}


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
