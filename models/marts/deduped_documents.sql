{#- The release: one representative document per cluster, with every input column plus its cluster. -#}

with

documents as (

    select * from {{ ref("stg_documents") }}

),

clusters as (

    select * from {{ ref("clusters") }}

),

final as (

    select
        {{ star_except("documents", ref("stg_documents"), ["body_hash"]) }},  -- noqa: RF02
        clusters.cluster_id,
        clusters.cluster_size
    from documents
    inner join clusters on documents.doc_id = clusters.doc_id
    where clusters.is_representative

)

select * from final
