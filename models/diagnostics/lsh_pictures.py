"""The run's pictures as SVG text: the LSH S-curve and the histogram of candidate Jaccards.

A thin adapter over webdedup/pictures.py, fed from this run's lsh_s_curve and scored_pairs.  Its post-hook
writes each row's svg to <output_dir>/<file_name> (staged and published with the other outputs); after a
successful run the on-run-end hook publish_pictures copies them into assets/, which `dbt docs generate`
copies next to the docs, where the overview page shows them.
"""

from webdedup import spark_models
from webdedup.pictures import render_pictures


def model(dbt, session):
    import pyarrow as pa

    dbt.config(materialized="table")
    settings_relation = dbt.ref("int_run_settings")
    curve_relation = dbt.ref("lsh_s_curve")
    scored_relation = dbt.ref("scored_pairs")
    if spark_models.is_spark_session(session):  # Spark: the same pictures from collected DataFrames
        return spark_models.pictures(settings_relation, curve_relation, scored_relation, session)
    settings = settings_relation.fetch_arrow_table().to_pylist()[0]
    curve = curve_relation.project("jaccard, p_candidate").fetchall()
    jaccards = scored_relation.project("jaccard").fetch_arrow_table().column("jaccard").to_pylist()
    pictures = render_pictures(
        curve=curve,
        jaccards=jaccards,
        threshold=settings["threshold"],
        bands=settings["bands"],
        rows_per_band=settings["rows_per_band"],
    )
    return pa.Table.from_pylist(pictures)
