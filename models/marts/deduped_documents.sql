{#-
  The release: one representative document per cluster, with every input column plus its cluster.
  Grain: one row per cluster.  Rows keep the staged documents' order (the input's order; pages that
  incremental builds add or change come after the others), so the export writes them without sorting
  the bodies (macro release_rows; on Spark the export sorts by doc_id).
-#}

with

final as (

    {{ release_rows(with_hash=false) }}

)

select * from final
