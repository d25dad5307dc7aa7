{#- The validated algorithm settings of this run, one row (see macros/inputs/settings.sql). -#}
{%- set s = dedup_settings() %}

with

settings as (

    select
        cast('{{ s.preset }}' as string) as preset,
        cast({{ s.shingle_size }} as integer) as shingle_size,
        cast({{ s.num_hashes }} as integer) as num_hashes,
        cast({{ s.rows_per_band }} as integer) as rows_per_band,
        cast({{ s.bands }} as integer) as bands,
        cast({{ s.seed }} as bigint) as seed,
        cast({{ s.threshold }} as double) as threshold,
        cast({{ s.signature_overlap_threshold }} as double) as signature_overlap_threshold,
        cast({{ s.batch_size }} as integer) as batch_size,
        cast({{ s.fingerprint_workers }} as integer) as fingerprint_workers,
        cast({{ sql_string(s.clustering) }} as string) as clustering,
        cast({{ "true" if s.boilerplate_filter else "false" }} as boolean) as boilerplate_filter,
        cast({{ s.boilerplate_max_share }} as double) as boilerplate_max_share,
        cast({{ s.boilerplate_min_pages }} as integer) as boilerplate_min_pages,
        cast({{ sql_string(s.settings_key) }} as string) as settings_key,
        cast({{ sql_string(var("documents_path") or "") }} as string) as documents_path,
        cast({{ sql_string(var("warc_paths") or "") }} as string) as warc_paths,
        cast({{ sql_string(var("warc_ranges_path") or "") }} as string) as warc_ranges_path,
        cast({{ sql_string(implementation("exact_jaccard")) }} as string) as scoring_implementation,
        cast({{ sql_string(implementation("connected_components")) }} as string) as components_implementation,
        cast({{ sql_string(output_dir()) }} as string) as output_dir,
        cast({{ sql_string(staging_dir(create=false)) }} as string) as staging_dir

)

select * from settings
