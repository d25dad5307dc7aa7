{#-
  Grain: one row per removed document (every member of a multi-member cluster that is not its
  representative).  Why: the removal log: which kept page each removed page duplicates and why: their
  exact Jaccard (int_member_jaccards), the shortest path of accepted edges from the removed page to the
  kept one (int_member_hops; one edge when the pair itself was accepted, more for a chain), and the
  settings it was decided under (int_run_settings.settings_key, the text manifest.json reports).
  Published as removals.parquet.
-#}

with

documents as (

    select * from {{ ref("stg_documents") }}

),

clusters as (

    select * from {{ ref("clusters") }}

),

member_jaccards as (

    select * from {{ ref("int_member_jaccards") }}

),

member_hops as (

    select * from {{ ref("int_member_hops") }}

),

settings as (

    select * from {{ ref("int_run_settings") }}

),

final as (

    select
        clusters.doc_id as removed_doc_id,
        clusters.representative_doc_id as kept_doc_id,
        clusters.cluster_id,
        member_jaccards.jaccard_to_representative as jaccard,
        member_hops.hops_from_representative as hops,
        member_hops.path_to_representative as edge_path,
        documents.source,
        documents.domain,
        settings.settings_key
    from clusters
    inner join documents on clusters.doc_id = documents.doc_id
    left join member_jaccards on clusters.doc_id = member_jaccards.doc_id
    left join member_hops on clusters.doc_id = member_hops.doc_id
    cross join settings
    where not clusters.is_representative

)

select * from final
