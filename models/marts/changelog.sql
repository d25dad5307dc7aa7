{#-
  Grain: one row per document whose status differs from the release now published in output_dir (the
  last build that succeeded there): added to or gone from the input, kept or removed, the document kept
  for it, its cluster.  Why: "what did this crawl remove, and in favour of what?" in one table, without
  keeping two releases to diff.  On the first build into output_dir every document is `added`; a rerun
  on the same input lists nothing.  One change per document, the first that applies: added, left_input,
  became_duplicate, became_kept, kept_doc_replaced, clusters_merged (its cluster now holds members of two
  or more earlier clusters), cluster_id_changed (a split, or an earlier crawled member arrived).
  Published as changelog.parquet.
-#}

with

previous_release as (

    select
        doc_id,
        cluster_id,
        representative_doc_id,
        cast(is_representative as boolean) as is_representative
    from {{ previous_release_clusters() }}

),

clusters as (

    select * from {{ ref("clusters") }}

),

removals as (

    select * from {{ ref("removals") }}

),

merged_clusters as (

    select clusters.cluster_id
    from clusters
    inner join previous_release on clusters.doc_id = previous_release.doc_id
    group by clusters.cluster_id
    having count(distinct previous_release.cluster_id) > 1

),

statuses as (

    select
        coalesce(clusters.doc_id, previous_release.doc_id) as doc_id,
        case
            when previous_release.is_representative then 'kept'
            when not previous_release.is_representative then 'removed'
        end as previous_status,
        case
            when clusters.is_representative then 'kept'
            when not clusters.is_representative then 'removed'
        end as status,
        previous_release.representative_doc_id as previous_kept_doc_id,
        clusters.representative_doc_id as kept_doc_id,
        previous_release.cluster_id as previous_cluster_id,
        clusters.cluster_id
    from clusters
    full outer join previous_release on clusters.doc_id = previous_release.doc_id

),

changes as (

    select
        statuses.*,
        case
            when statuses.previous_status is null then 'added'
            when statuses.status is null then 'left_input'
            when statuses.previous_status = 'kept' and statuses.status = 'removed' then 'became_duplicate'
            when statuses.previous_status = 'removed' and statuses.status = 'kept' then 'became_kept'
            when statuses.previous_kept_doc_id <> statuses.kept_doc_id then 'kept_doc_replaced'
            when statuses.previous_cluster_id <> statuses.cluster_id and merged_clusters.cluster_id is not null
                then 'clusters_merged'
            when statuses.previous_cluster_id <> statuses.cluster_id then 'cluster_id_changed'
        end as change_type
    from statuses
    left join merged_clusters on statuses.cluster_id = merged_clusters.cluster_id

),

final as (

    select
        changes.doc_id,
        changes.change_type,
        changes.previous_status,
        changes.status,
        changes.previous_kept_doc_id,
        changes.kept_doc_id,
        removals.jaccard as jaccard_to_kept,
        changes.previous_cluster_id,
        changes.cluster_id
    from changes
    left join removals on changes.doc_id = removals.removed_doc_id
    where changes.change_type is not null

)

select * from final
