"""A crawl with many duplicates (chains, pages that copy a few bodies, planted revisions, multilingual
mirrors with extra columns) changed batch by batch as real crawls change: new batches, pages crawled
again (a removed page becomes the newest, so its cluster's kept page is replaced), bodies copied from
another cluster or edited, chains completed by a later batch (clusters merge), kept pages removed, strict
clustering and a higher threshold.  After every build the pairs, clusters, representatives, removals,
the release and every stage table equal a full build's on the same input, and the changelog lists
exactly the documents whose status changed (test_incremental's brute force over the two releases)."""

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq

from tests.python.e2e.incremental.test_incremental import _assert_same_as_full_build, _build, _statuses
from tests.python.helpers.corpora import multilingual_corpus
from tests.python.helpers.quality_corpora import quality_corpus

COLUMNS = ["doc_id", "source", "domain", "crawled_at", "title", "body"]
SCHEMA = pa.schema(
    [("crawled_at", pa.timestamp("us")) if name == "crawled_at" else (name, pa.string()) for name in COLUMNS]
)


def _multi_member_clusters(out):
    """cluster_id -> (kept doc_id, [removed doc_ids]) of the published release's multi-member clusters."""
    clusters = {}
    for doc_id, (kept, kept_doc, cluster_id) in sorted(_statuses(out).items()):
        clusters.setdefault(cluster_id, [kept_doc, []])
        if not kept:
            clusters[cluster_id][1].append(doc_id)
    return {cluster_id: (kept, removed) for cluster_id, (kept, removed) in clusters.items() if removed}


def test_a_duplicate_heavy_crawl_changed_batch_by_batch_equals_full_builds(tmp_path):
    rows = quality_corpus().select(COLUMNS).to_pylist()
    # interleaved, so that every batch holds members of clusters that other batches hold too (a chain's
    # middle page arriving later joins two clusters)
    batches = {f"batch-{i}.parquet": rows[i::3] for i in range(3)}
    folder = tmp_path / "crawl"
    folder.mkdir()
    out = tmp_path / "incremental" / "out"

    def write(name):
        pq.write_table(pa.Table.from_pylist(batches[name], SCHEMA), folder / name)

    def build_and_compare(extra_vars=None):
        _build(tmp_path, "incremental", folder, extra_vars)
        _assert_same_as_full_build(tmp_path, folder, "incremental", extra_vars)

    def rows_of(doc_ids):
        return [row for batch in batches.values() for row in batch if row["doc_id"] in doc_ids]

    write("batch-0.parquet")
    build_and_compare()
    write("batch-1.parquet")
    build_and_compare()

    # removed pages crawled again, now the newest: each replaces its cluster's kept page
    clusters = list(_multi_member_clusters(out).values())
    recrawled = {removed[0] for _, removed in clusters[:6]}
    for i, row in enumerate(rows_of(recrawled)):
        row["crawled_at"] = dt.datetime(2030, 1, 1) + dt.timedelta(hours=i)
    for name in ("batch-0.parquet", "batch-1.parquet"):
        write(name)
    build_and_compare()

    # one cluster's kept page takes another cluster's body (it moves there), another's body is edited away
    # from its copies, a third's title changes; a new batch arrives in the same build
    clusters = list(_multi_member_clusters(out).values())
    (merged, edited, retitled), donor = [kept for kept, _ in clusters[:3]], clusters[-1][0]
    (donor_body,) = [row["body"] for row in rows_of({donor})]
    for row in rows_of({merged, edited, retitled}):
        if row["doc_id"] == merged:
            row["body"] = donor_body
        elif row["doc_id"] == edited:
            row["body"] = " ".join(f"rewritten{i}" for i in range(60))
        else:
            row["title"] = "a new title"
    for name in ("batch-0.parquet", "batch-1.parquet"):
        write(name)
    write("batch-2.parquet")
    build_and_compare()

    # kept pages leave the input (their clusters choose again), and a whole batch file leaves
    gone = {kept for kept, _ in list(_multi_member_clusters(out).values())[:5]}
    batches = {name: [row for row in batch if row["doc_id"] not in gone] for name, batch in batches.items()}
    for name in ("batch-0.parquet", "batch-1.parquet"):
        write(name)
    (folder / "batch-2.parquet").unlink()
    del batches["batch-2.parquet"]
    build_and_compare()

    # pages with other columns (WARC-style lineage, crawled_at as text), then strict clustering, then a
    # higher threshold under strict
    pq.write_table(multilingual_corpus(n_groups=12), folder / "multilingual.parquet")
    build_and_compare()
    build_and_compare({"clustering": "strict"})
    build_and_compare({"clustering": "strict", "threshold": 0.8})
