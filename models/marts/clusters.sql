{#-
  Duplicate clusters over every document (singletons included) and the representative of each: the most
  recently crawled document, then the one with more tokens, then the smallest doc_id.

  var clustering: `components` (the default, the spec): a cluster is a connected component of the
  accepted duplicate edges (int_components).  `strict`: each component is split greedily
  (macros/algorithm/strict_clusters.sql) so that every member's exact Jaccard to its representative is at
  or above the threshold, and that representative is the page the rule kept for the cluster.

  The cluster is named after its first crawled member (then the smallest doc_id), so its id stays the
  same when later crawls add members: it changes only when clusters merge (the merged cluster keeps the
  older name) or a member older than all others arrives.
-#}
{%- set strict = dedup_settings().clustering == "strict" %}
{% if strict -%}
    -- strict_clusters scores pairs while it runs (exact_jaccard), reading:
    -- depends_on: {{ exact_jaccard_inputs() | join(", ") }}
{% endif %}

with

documents as (

    select * from {{ ref("stg_documents") }}

),

components as (

    select * from {{ ref("int_components") }}

),

{% if strict -%}
strict_assignments as (

    {{ strict_clusters(
        ref("int_components"), ref("duplicate_pairs"), dedup_settings().threshold
    ) }}

),

{% endif -%}
keyed as (

    select
        components.doc_id,
        components.component_rank,
        documents.crawled_at,
        {% if strict -%}
            coalesce(strict_assignments.kept_doc_id, components.doc_id)
        {%- else -%}
            components.component_id
        {%- endif %} as cluster_key
    from components
    inner join documents on components.doc_id = documents.doc_id
    {% if strict -%}
        left join strict_assignments on components.doc_id = strict_assignments.doc_id
    {%- endif %}

),

ranked as (

    select
        cluster_key,
        doc_id,
        count(*) over (partition by cluster_key) as cluster_size,
        row_number() over (
            partition by cluster_key
            order by {% if strict %}doc_id = cluster_key desc, {% endif %}component_rank asc
        ) as representative_rank,
        row_number() over (partition by cluster_key order by crawled_at asc, doc_id asc) as first_crawled_rank
    from keyed

),

final as (

    select
        'cluster-' || max(case when first_crawled_rank = 1 then doc_id end)
            over (partition by cluster_key) as cluster_id,
        doc_id,
        cluster_size,
        representative_rank,
        representative_rank = 1 as is_representative,
        max(case when representative_rank = 1 then doc_id end)
            over (partition by cluster_key) as representative_doc_id
    from ranked

)

select * from final
