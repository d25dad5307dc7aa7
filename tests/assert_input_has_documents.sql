{#-
  A warning, not an error: an input without documents builds empty outputs (candidate_summary says 0).
  The on-run-end hook warn_if_no_documents says the same with what to check; this test puts it in the
  run's summary (WARN=1).
-#}
{{ config(severity="warn") }}

select count(*) as documents
from {{ ref("stg_documents") }}
having count(*) = 0
