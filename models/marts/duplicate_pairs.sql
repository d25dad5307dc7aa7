{#- The accepted duplicate edges: scored pairs with exact Jaccard at or above the threshold. -#}

with

scored_pairs as (

    select * from {{ ref("scored_pairs") }}

),

final as (

    select
        left_doc_id,
        right_doc_id,
        shared_bands,
        jaccard,
        signature_overlap,
        is_duplicate,
        reason,
        jaccard = 1.0 as is_exact_duplicate,
        left_domain,
        right_domain,
        is_cross_domain
    from scored_pairs
    where is_duplicate

)

select * from final
