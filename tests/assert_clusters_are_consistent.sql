{#-
  Conservation and consistency of clusters, on every run: each cluster is named after its first crawled
  member (earliest crawled_at, then smallest doc_id), its size is its member count, it has exactly one
  representative and every member points at it; with clustering components both ends of every accepted
  duplicate edge are in the same cluster, with strict every member's exact Jaccard to its representative
  is at or above the threshold (an edge may then join two clusters).  Returns offending rows.
-#}
{%- set settings = dedup_settings() %}

with

clusters as (select * from {{ ref("clusters") }}),

documents as (select * from {{ ref("stg_documents") }}),

duplicate_pairs as (select * from {{ ref("duplicate_pairs") }}),

member_jaccards as (select * from {{ ref("int_member_jaccards") }}),

members as (

    select
        clusters.*,
        documents.crawled_at
    from clusters
    inner join documents on clusters.doc_id = documents.doc_id

),

per_cluster as (

    select
        cluster_id,
        count(*) as members,
        min(cluster_size) as min_size,
        max(cluster_size) as max_size,
        min_by(doc_id, {{ ordered_tuple(["crawled_at", "doc_id"]) }}) as first_doc_id,
        count(*) filter (where is_representative) as representatives,
        max(case when is_representative then doc_id end) as representative_doc_id,
        -- every member points at one representative: none null, the smallest and largest the same
        count(representative_doc_id) as pointers,
        min(representative_doc_id) as pointed_representative,
        max(representative_doc_id) as last_pointed_representative
    from members
    group by cluster_id

),

bad_clusters as (

    select
        cluster_id as problem_key,
        'cluster is inconsistent' as problem
    from per_cluster
    where
        cluster_id <> 'cluster-' || first_doc_id
        or min_size <> members
        or max_size <> members
        or representatives <> 1
        or pointers <> members
        or pointed_representative <> last_pointed_representative
        or representative_doc_id <> pointed_representative

),

split_edges as (

    select
        duplicate_pairs.left_doc_id || ' ~ ' || duplicate_pairs.right_doc_id as problem_key,
        'duplicate edge crosses clusters' as problem
    from duplicate_pairs
    inner join clusters as l on duplicate_pairs.left_doc_id = l.doc_id
    inner join clusters as r on duplicate_pairs.right_doc_id = r.doc_id
    where l.cluster_id <> r.cluster_id and {{ "true" if settings.clustering == "components" else "false" }}

),

strict_below_threshold as (

    select
        doc_id as problem_key,
        'strict member below the threshold to its representative' as problem
    from member_jaccards
    where
        {{ "true" if settings.clustering == "strict" else "false" }}
        and (jaccard_to_representative is null or jaccard_to_representative < {{ settings.threshold }})

)

select * from bad_clusters
union all
select * from split_edges
union all
select * from strict_below_threshold
