"""The run manifest (manifest.json): input and its hash, settings, counts, output hashes, versions.

A thin adapter over webdedup/manifest.py.  It refs every exported model (the marts and lsh_pictures),
so it runs after all of them have staged their files and can hash them.
"""

from webdedup import spark_models
from webdedup.manifest import build_manifest


def model(dbt, session):
    import pyarrow as pa

    dbt.config(materialized="table")
    exported = {
        "fingerprinted.parquet": dbt.ref("fingerprinted"),
        "candidate_summary.csv": dbt.ref("candidate_summary"),
        "scored_pairs.parquet": dbt.ref("scored_pairs"),
        "duplicate_pairs.csv": dbt.ref("duplicate_pairs"),
        "clusters.csv": dbt.ref("clusters"),
        "cluster_inspection.csv": dbt.ref("cluster_inspection"),
        "deduped_documents.parquet": dbt.ref("deduped_documents"),
    }
    if spark_models.is_spark_session(session):  # Spark: the same manifest, fed from DataFrames
        return spark_models.manifest(
            session,
            settings_df=dbt.ref("int_run_settings"),
            summary_df=dbt.ref("candidate_summary"),
            documents_df=dbt.ref("stg_documents"),
            exported=exported,
        )
    settings = dbt.ref("int_run_settings").fetch_arrow_table().to_pylist()[0]
    summary = dbt.ref("candidate_summary").fetch_arrow_table().to_pylist()[0]
    source_rows = dbt.ref("stg_documents").aggregate("source, count(*) as documents").fetchall()
    row_counts = {name: relation.count("*").fetchall()[0][0] for name, relation in exported.items()}
    dbt.ref("lsh_pictures")  # runs after the pictures are staged, so it can hash them too
    manifest = build_manifest(
        settings={
            k: v
            for k, v in settings.items()
            if k not in ("output_dir", "staging_dir", "documents_path", "warc_paths", "warc_ranges_path")
        },
        summary=summary,
        source_counts={str(source): count for source, count in source_rows},
        output_dir=settings["staging_dir"],
        documents_path=settings["documents_path"],
        warc_paths=settings["warc_paths"],
        warc_ranges_path=settings["warc_ranges_path"],
        seed_path="seeds/documents.csv",
        row_counts=row_counts,
        engine="duckdb",
    )
    return pa.Table.from_pylist([manifest])
