{#-
  Grain: one row per member of a multi-member cluster (representatives included, at 0).  Why: how many
  accepted edges separate a member from its representative shows chains (A~B~C keeps C for A through B),
  and the path itself is what a reviewer of a removal needs (removals).  Breadth-first search from every
  representative at once over the accepted edges (hop_paths, macros/algorithm/connected_components.sql),
  each representative labelling its own search: under `clustering: strict` a component holds several
  representatives, and a member's path leads to its own one.
-#}
{%- set hop_sources = "(select representative_doc_id as label, doc_id as node_id from " ~ ref("clusters")
    ~ " where is_representative and cluster_size > 1)" -%}
{%- set hop_edges = "(select left_doc_id as src, right_doc_id as dst from " ~ ref("duplicate_pairs") ~ ")" %}

with

clusters as (

    select * from {{ ref("clusters") }}

),

hops as (

    -- sqlfluff cannot parse DuckDB's USING KEY: this one statement is excluded from linting.
    {{ hop_paths(hop_sources, hop_edges) }}  -- noqa: PRS

),

final as (

    select
        clusters.doc_id,
        hops.hops as hops_from_representative,
        hops.path as path_to_representative
    from clusters
    inner join hops on clusters.representative_doc_id = hops.label and clusters.doc_id = hops.node_id
    where clusters.cluster_size > 1

)

select * from final
