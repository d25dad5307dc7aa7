{#-
  The release: one representative document per cluster, with every input column plus its cluster.
  Grain: one row per cluster.  Rows keep the staged documents' order (the input's order; pages that
  incremental builds add or change come after the others), so the export writes them without sorting
  the bodies (macro select_in_stored_order; on Spark the export sorts by doc_id).
-#}

with

final as (

    {{ select_in_stored_order(
        select_list=star_except("stored", ref("stg_documents"), ["body_hash"])
            ~ ", matched.cluster_id, matched.cluster_size",
        table=ref("stg_documents"),
        lookup=ref("clusters"),
        key="doc_id",
        keep="is_representative",
    ) }}

)

select * from final
