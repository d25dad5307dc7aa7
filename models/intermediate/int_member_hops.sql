{#-
  Grain: one row per member of a multi-member cluster (representatives included, at 0).  Why: how many
  accepted edges separate a member from its representative shows chains (A~B~C keeps C for A through B);
  cluster_inspection reports it and the cluster's eccentricity.  Breadth-first search from every
  representative at once over the accepted edges (macros/algorithm/connected_components.sql).
-#}
{%- set hop_sources = "(select doc_id as node_id from " ~ ref("clusters")
    ~ " where is_representative and cluster_size > 1)" -%}
{%- set hop_edges = "(select left_doc_id as src, right_doc_id as dst from " ~ ref("duplicate_pairs") ~ ")" %}

with

hops as (

    -- sqlfluff cannot parse DuckDB's USING KEY: this one statement is excluded from linting.
    {{ hop_distances(hop_sources, hop_edges) }}  -- noqa: PRS

),

final as (

    select
        node_id as doc_id,
        hops as hops_from_representative
    from hops

)

select * from final
