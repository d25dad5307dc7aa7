{#-
  Review view of every multi-member cluster: one row per member with its representative, the exact
  Jaccard of the member to the representative, and the accepted edges that touch it.  Input columns
  other than body (for example WARC lineage) are carried along.
-#}

with

documents as (

    select * from {{ ref("stg_documents") }}

),

fingerprints as (

    select * from {{ ref("int_fingerprints") }}

),

clusters as (

    select * from {{ ref("clusters") }}

),

duplicate_pairs as (

    select * from {{ ref("duplicate_pairs") }}

),

members as (

    select * from clusters
    where cluster_size > 1

),

representative_pairs as (

    select
        least(doc_id, representative_doc_id) as low_doc_id,
        greatest(doc_id, representative_doc_id) as high_doc_id
    from members
    where not is_representative

),

representative_jaccard as (

    {{ exact_jaccard("representative_pairs", "fingerprints") }}

),

edge_ends as (

    select
        left_doc_id as doc_id,
        jaccard
    from duplicate_pairs
    union all
    select
        right_doc_id as doc_id,
        jaccard
    from duplicate_pairs

),

edge_stats as (

    select
        doc_id,
        count(*) as accepted_edges,
        min(jaccard) as min_edge_jaccard,
        max(jaccard) as max_edge_jaccard
    from edge_ends
    group by doc_id

),

final as (

    select
        members.cluster_id,
        members.cluster_size,
        members.doc_id,
        members.is_representative,
        members.representative_doc_id,
        case
            when members.is_representative then 1.0 else representative_jaccard.jaccard
        end as jaccard_to_representative,
        coalesce(edge_stats.accepted_edges, 0) as accepted_edges,
        edge_stats.min_edge_jaccard,
        edge_stats.max_edge_jaccard,
        fingerprints.token_count,
        documents.* exclude (doc_id, body)  -- noqa: RF02
    from members
    inner join documents on members.doc_id = documents.doc_id
    inner join fingerprints on members.doc_id = fingerprints.doc_id
    left join representative_jaccard
        on
            least(members.doc_id, members.representative_doc_id) = representative_jaccard.low_doc_id
            and greatest(members.doc_id, members.representative_doc_id) = representative_jaccard.high_doc_id
    left join edge_stats on members.doc_id = edge_stats.doc_id

)

select * from final
