"""On Spark (`--target spark`), `clustering: strict` with `boilerplate_filter: true` on templated sites plus
chains gives the brute force's clusters and removal log (tests/python/helpers/: the filter, the edges
and the greedy rule in plain Python over the spec's reference functions).  Opt-in like the other large
Spark tests: DEDUP_SPARK_CORPUS=1 (`make test-spark`)."""

from __future__ import annotations

import csv
import itertools
import os
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.python.helpers import quality_corpora as qc
from tests.python.helpers import templated_sites as ts
from tests.python.helpers.dbt_runner import run_dbt_spark
from tests.python.helpers.project import project_vars

pytest.importorskip("pyspark")
pytestmark = [
    pytest.mark.dbt,
    pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java 17 (java not on PATH)"),
    pytest.mark.skipif(not os.environ.get("DEDUP_SPARK_CORPUS"), reason="opt-in: DEDUP_SPARK_CORPUS=1"),
]


@pytest.fixture(scope="module")
def spark_quality_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("spark_quality")
    sites, _ = ts.templated_sites()
    table = pa.concat_tables([sites, pa.Table.from_pylist(qc.chain_rows(4, 6, seed=8), schema=sites.schema)])
    pq.write_table(table, work / "docs.parquet")
    run_dbt_spark(
        ["build", "--exclude-resource-type", "unit_test"],
        work=work,
        dbt_vars={
            "documents_path": str(work / "docs.parquet"),
            "output_dir": str(work / "out"),
            "preset": "recall",
            "clustering": "strict",
            "boilerplate_filter": True,
        },
    )
    return table, work / "out"


def test_spark_strict_filtered_clusters_and_removals_equal_brute_force(spark_quality_run):
    table, out = spark_quality_run
    defaults = project_vars()
    texts = ts.filtered_texts(table, defaults["boilerplate_max_share"], defaults["boilerplate_min_pages"])
    filtered = table.set_column(
        table.schema.get_field_index("body"),
        "body",
        pa.array([texts[d] for d in table["doc_id"].to_pylist()]),
    )
    sets = qc.shingle_sets(filtered)
    edges = [
        (a, b) for a, b in itertools.combinations(sorted(sets), 2) if qc.jaccard(sets, a, b) >= qc.THRESHOLD
    ]
    kept = qc.kept_for(filtered, edges, strict=True)
    with open(out / "clusters.csv", newline="") as handle:
        got = {row["doc_id"]: row["representative_doc_id"] for row in csv.DictReader(handle)}
    assert got == kept
    removals = pq.read_table(out / "removals.parquet").to_pylist()
    assert sorted(r["removed_doc_id"] for r in removals) == sorted(d for d, k in kept.items() if d != k)
    for row in removals:
        assert row["jaccard"] == pytest.approx(qc.jaccard(sets, row["removed_doc_id"], row["kept_doc_id"]))
        assert row["jaccard"] >= qc.THRESHOLD
        assert row["edge_path"][0] == row["removed_doc_id"] and row["edge_path"][-1] == row["kept_doc_id"]
        assert "clustering=strict" in row["settings_key"] and "boilerplate_filter=true" in row["settings_key"]
