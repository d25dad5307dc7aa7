{#-
  Grain: one row per member of a multi-member cluster that is not its representative.  Why: the exact
  Jaccard of each member to the representative kept for it is what a reviewer (and cluster_inspection's
  is_chained) needs, and most of these pairs were scored already as candidates: their score is reused,
  only the rest are scored here (on shingle-set group anchors, as scored_pairs does).

  Incremental on DuckDB: pair_state hashes what a member's Jaccard depends on (its anchor and its
  representative's, the two sets' keys and the shingle settings).  A build scores only the members
  whose pair_state is new or differs from the stored row's (those rows replace the stored ones) and a
  post-hook deletes the rows of documents that are no longer such a member, so the table equals a full
  build's.  An unchanged pair is not scored again (scoring reads the bodies of its anchors).
-#}
{%- set incremental = is_incremental() and not stored_columns_missing(["pair_state"]) %}

with

clusters as (

    select * from {{ ref("clusters") }}

),

groups as (

    select * from {{ ref("int_shingle_set_groups") }}

),

scored_pairs as (

    select * from {{ ref("scored_pairs") }}

),

members as (

    -- with their shingle-set group anchors: exact scoring works on anchors
    select
        clusters.doc_id,
        member_group.group_anchor_doc_id as anchor_doc_id,
        representative_group.group_anchor_doc_id as representative_anchor_doc_id,
        {{ text_hash("member_group.group_anchor_doc_id, member_group.shingle_set_key,"
            ~ " representative_group.group_anchor_doc_id, representative_group.shingle_set_key,"
            ~ " member_group.settings_key") }} as pair_state
    from clusters
    inner join groups as member_group on clusters.doc_id = member_group.doc_id
    inner join groups as representative_group on clusters.representative_doc_id = representative_group.doc_id
    where clusters.cluster_size > 1 and not clusters.is_representative

),

{% if incremental -%}
    stored as (

        select
            doc_id,
            pair_state
        from {{ this }}

    ),

{% endif -%}
scored_members as (

    -- the members to score: all of them, or in an incremental build those whose pair is new or changed
    select members.*
    from members
    {%- if incremental %}
    left join stored on members.doc_id = stored.doc_id and members.pair_state = stored.pair_state
    where stored.doc_id is null
    {%- endif %}

),

representative_pairs as (

    select distinct
        least(anchor_doc_id, representative_anchor_doc_id) as low_doc_id,
        greatest(anchor_doc_id, representative_anchor_doc_id) as high_doc_id
    from scored_members

),

scored_anchor_pairs as (

    -- most members are a candidate pair with their representative already: reuse that exact score
    select distinct
        least(left_anchor_doc_id, right_anchor_doc_id) as low_doc_id,
        greatest(left_anchor_doc_id, right_anchor_doc_id) as high_doc_id,
        jaccard
    from scored_pairs

),

unscored_pairs as (

    select representative_pairs.*
    from representative_pairs
    left join scored_anchor_pairs
        on
            representative_pairs.low_doc_id = scored_anchor_pairs.low_doc_id
            and representative_pairs.high_doc_id = scored_anchor_pairs.high_doc_id
    where scored_anchor_pairs.low_doc_id is null

),

computed_jaccard as (

    -- these pairs' anchors shingled into a scratch file while they are counted (macro exact_jaccard)
    {{ exact_jaccard("unscored_pairs") }}

),

representative_jaccard as (

    select
        scored_anchor_pairs.low_doc_id,
        scored_anchor_pairs.high_doc_id,
        scored_anchor_pairs.jaccard
    from scored_anchor_pairs
    inner join representative_pairs
        on
            scored_anchor_pairs.low_doc_id = representative_pairs.low_doc_id
            and scored_anchor_pairs.high_doc_id = representative_pairs.high_doc_id

    union all

    select
        low_doc_id,
        high_doc_id,
        jaccard
    from computed_jaccard

),

final as (

    select
        scored_members.doc_id,
        representative_jaccard.jaccard as jaccard_to_representative,
        scored_members.pair_state
    from scored_members
    left join representative_jaccard
        on
            least(scored_members.anchor_doc_id, scored_members.representative_anchor_doc_id)
            = representative_jaccard.low_doc_id
            and greatest(scored_members.anchor_doc_id, scored_members.representative_anchor_doc_id)
            = representative_jaccard.high_doc_id

)

select * from final
