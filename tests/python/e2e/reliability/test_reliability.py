"""Bad input, faults and hot buckets: a clear error naming the problem and the rows, or a correct result."""

import hashlib
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from fractions import Fraction

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from tests.python.helpers.dbt_runner import DBT, PROJECT_ROOT, run_dbt
from webdedup.core import reference as ref
from webdedup.outputs.files import own_build_file

pytestmark = pytest.mark.dbt

HEADER = "doc_id,source,domain,crawled_at,title,body\n"


def _build(tmp_path, documents_path, check=False, **extra_vars):
    dbt_vars = {"documents_path": str(documents_path), "output_dir": str(tmp_path / "out"), **extra_vars}
    return run_dbt(["build"], db_path=tmp_path / "db.duckdb", dbt_vars=dbt_vars, check=check)


def _fails_with(result, message):
    assert result.returncode != 0
    assert message in result.stdout, result.stdout[-3000:]


def _no_outputs(tmp_path):
    return not (tmp_path / "out" / "deduped_documents.parquet").exists()


def test_duplicate_ids_are_listed(tmp_path):
    path = tmp_path / "docs.csv"
    path.write_text(
        HEADER + "b,s,d,2024-01-01,t,x\na,s,d,2024-01-01,t,y\nb,s,d,2024-01-02,t,z\na,s,d,2024-01-03,t,w\n"
    )
    _fails_with(_build(tmp_path, path), f"bad input in documents_path '{path}': duplicate doc_id (2): a, b")
    assert _no_outputs(tmp_path)


def test_empty_doc_id_names_the_rows(tmp_path):
    path = tmp_path / "docs.csv"
    path.write_text(HEADER + "a,s,d,2024-01-01,t,x\n,s,d,2024-01-01,t,y\n  ,s,d,2024-01-01,t,z\n")
    _fails_with(_build(tmp_path, path), "empty doc_id in 2 row(s), input row(s) 2, 3")


def test_unparseable_crawled_at_names_the_row(tmp_path):
    path = tmp_path / "docs.csv"
    path.write_text(HEADER + "a,s,d,2024-01-01,t,x\nb,s,d,last tuesday,t,y\nc,s,d,2024-02-03 10:11:12,t,z\n")
    _fails_with(
        _build(tmp_path, path), "crawled_at is missing or not a date/timestamp in 1 row(s): b=last tuesday"
    )


def test_missing_required_column_is_named(tmp_path):
    path = tmp_path / "docs.parquet"
    pq.write_table(
        pa.table({"doc_id": ["a"], "source": ["s"], "domain": ["d"], "title": ["t"], "body": ["x"]}), path
    )
    _fails_with(_build(tmp_path, path), f"documents_path '{path}' is missing required column(s): crawled_at")


def test_non_utf8_csv_is_reported(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes((HEADER + "a,s,d,2024-01-01,t,caf\xe9\n").encode("latin-1"))
    _fails_with(
        _build(tmp_path, path),
        f"documents_path '{path}' holds bytes that are not UTF-8 in 1 row(s), doc_id: a; convert the file",
    )


def test_file_that_is_not_parquet_is_reported(tmp_path):
    path = tmp_path / "fake.parquet"
    path.write_text("this is not a parquet file")
    _fails_with(_build(tmp_path, path), f"No magic bytes found at end of file '{path}'")


def test_path_that_is_neither_file_type_nor_folder_is_reported(tmp_path):
    _fails_with(
        _build(tmp_path, tmp_path / "notes.txt"),
        f"documents_path '{tmp_path / 'notes.txt'}': no such file or folder",
    )


def test_quoted_newlines_quotes_and_nul_bytes_survive(tmp_path):
    path = tmp_path / "docs.csv"
    path.write_bytes(
        (
            HEADER
            + '"a","s","d","2024-01-01","t","line one\nline ""two"", with a comma"\n'
            + '"b","s","d","2024-01-01","t","nul\x00inside"\n'
        ).encode()
    )
    _build(tmp_path, path, check=True)
    rows = duckdb.sql(
        f"select doc_id, body from '{tmp_path / 'out' / 'deduped_documents.parquet'}' order by 1"
    )
    assert rows.fetchall() == [("a", 'line one\nline "two", with a comma'), ("b", "nul\x00inside")]


def test_huge_body_and_huge_token_are_fingerprinted(tmp_path):
    big = ("lorem ipsum dolor sit amet " * 2_000_000)[:50_000_000]  # 50 MB
    token = "x" * 1_000_000  # one 1 MB token
    table = pa.table(
        {
            "doc_id": ["big", "big2", "token"],
            "source": ["s"] * 3,
            "domain": ["a", "b", "c"],
            "crawled_at": ["2024-01-01"] * 3,
            "title": ["t"] * 3,
            "body": [big, big + " tail", token],
        }
    )
    pq.write_table(table, tmp_path / "docs.parquet")
    _build(tmp_path, tmp_path / "docs.parquet", check=True)
    fp = dict(
        duckdb.sql(
            f"select doc_id, [token_count, shingle_count] from '{tmp_path / 'out' / 'fingerprinted.parquet'}'"
        ).fetchall()
    )
    assert fp["token"] == [1, 1]
    assert fp["big"][0] == len(ref.normalize_text(big).split())
    assert fp["big"][1] == len(ref.token_shingles(ref.normalize_text(big).split()))
    clusters = dict(
        duckdb.sql(f"select doc_id, cluster_id from '{tmp_path / 'out' / 'clusters.csv'}'").fetchall()
    )
    assert clusters["big"] == clusters["big2"] == "cluster-big"  # Jaccard 5/6 >= 0.7
    assert clusters["token"] == "cluster-token"


@pytest.mark.parametrize(
    ("dbt_vars", "message"),
    [
        (
            {"threshold": "0.7; drop table stg_documents"},
            "var 'threshold' must be a number, got '0.7; drop table",
        ),
        ({"num_hashes": 64, "rows_per_band": 7}, "num_hashes (64) must be divisible by rows_per_band (7)"),
        ({"shingle_size": "5 or 1=1"}, "var 'shingle_size' must be a whole number, got '5 or 1=1'"),
        ({"threshold": 1.5}, "var 'threshold' must be in (0.0, 1.0], got 1.5"),
        ({"threshold": -0.1}, "var 'threshold' must be in (0.0, 1.0], got -0.1"),
        ({"preset": "fast"}, "var 'preset' must be one of default, recall; got 'fast'"),
    ],
)
def test_settings_that_reach_sql_are_validated(tmp_path, dbt_vars, message):
    result = run_dbt(["build"], db_path=tmp_path / "db.duckdb", dbt_vars=dbt_vars, check=False)
    _fails_with(result, message)


def test_a_path_with_quotes_cannot_inject_sql(tmp_path):
    evil = tmp_path / "x'); drop table documents; --.csv"
    _fails_with(_build(tmp_path, evil), f"documents_path '{evil}': no such file or folder")


def _digests(folder):
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()
    }


def test_killed_build_leaves_previous_outputs_and_next_build_completes(tmp_path):
    corpus = tmp_path / "docs.parquet"
    rows = 60_000
    pq.write_table(
        pa.table(
            {
                "doc_id": [f"d{i:06d}" for i in range(rows)],
                "source": ["s"] * rows,
                "domain": [f"site{i % 50}.example" for i in range(rows)],
                "crawled_at": ["2024-01-01"] * rows,
                "title": ["t"] * rows,
                "body": [
                    " ".join(f"w{(i * 7919 + k * 104729) % 1_000_003}" for k in range(60))
                    for i in range(rows)
                ],
            }
        ),
        corpus,
    )
    run_dbt(["build"], db_path=tmp_path / "db.duckdb", dbt_vars={"output_dir": str(tmp_path / "out")})
    before = _digests(tmp_path / "out")
    env = dict(os.environ, DEDUP_DB_PATH=str(tmp_path / "db.duckdb"), DBT_SEND_ANONYMOUS_USAGE_STATS="false")
    command = [
        DBT,
        "build",
        "--profiles-dir",
        str(PROJECT_ROOT),
        "--project-dir",
        str(PROJECT_ROOT),
        "--vars",
        f'{{"documents_path": "{corpus}", "output_dir": "{tmp_path / "out"}"}}',
    ]
    process = subprocess.Popen(
        command,
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    started = False
    for line in process.stdout:
        started = "START python" in line and "main_internal.int_fingerprints" in line
        if started or time.monotonic() > deadline:
            time.sleep(1.0)
            break
    assert started, "the build never reached int_fingerprints"
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    visible = {
        name: digest for name, digest in _digests(tmp_path / "out").items() if not name.startswith(".")
    }
    assert visible == before
    _build(tmp_path, corpus, check=True)
    after = _digests(tmp_path / "out")
    assert after["manifest.json"] != before["manifest.json"]
    assert not [p.name for p in (tmp_path / "out").iterdir() if p.name.startswith(".")]  # staging cleaned


def test_hot_bucket_gives_brute_force_clusters_without_quadratic_pairs(tmp_path):
    hot = 400
    bodies = ["Sorry, the page you requested could not be found. Return to the home page."] * hot
    bodies += [" ".join(f"w{(i * 31 + j) % 997}x{i}" for j in range(40)) for i in range(150)]
    bodies += [bodies[-1] + " extra", bodies[-2]]  # a near duplicate and an exact duplicate of singletons
    ids = [f"h{i:04d}" for i in range(len(bodies))]
    pq.write_table(
        pa.table(
            {
                "doc_id": ids,
                "source": ["s"] * len(ids),
                "domain": [f"d{i % 9}" for i in range(len(ids))],
                "crawled_at": ["2024-01-01"] * len(ids),
                "title": ["t"] * len(ids),
                "body": bodies,
            }
        ),
        tmp_path / "docs.parquet",
    )
    _build(tmp_path, tmp_path / "docs.parquet", check=True)
    sets = {d: ref.token_shingles(ref.normalize_text(b).split()) for d, b in zip(ids, bodies, strict=True)}
    root = {d: d for d in ids}

    def find(d):
        while root[d] != d:
            d = root[d]
        return d

    for a, b in itertools.combinations(ids, 2):
        if ref.jaccard(sets[a], sets[b]) >= 0.7:
            ra, rb = find(a), find(b)
            root[max(ra, rb)] = min(ra, rb)
    clusters = dict(
        duckdb.sql(f"select doc_id, cluster_id from '{tmp_path / 'out' / 'clusters.csv'}'").fetchall()
    )
    assert clusters == {d: f"cluster-{find(d)}" for d in ids}
    candidates = duckdb.sql(f"select count(*) from '{tmp_path / 'out' / 'scored_pairs.parquet'}'").fetchall()[
        0
    ][0]
    assert candidates < 2 * len(ids)  # star form: hot - 1 rows for the hot bucket, not hot * (hot - 1) / 2


def test_a_cluster_of_near_identical_pages_has_exact_edge_statistics_and_hops(tmp_path):
    """300 near-identical pages (benchmarks/near_duplicate_cluster.py: about 44,000 accepted edges, few
    distinct union sizes) among 60 others: the cluster's edge count, its exact mean edge Jaccard (the
    edges are grouped by union size before the mean) and every member's hops from the representative
    equal a brute force over the accepted edges, each of which is at or above the threshold by the
    spec's functions."""
    from benchmarks.near_duplicate_cluster import corpus

    table = corpus(300, 60, seed=3)
    pq.write_table(table, tmp_path / "docs.parquet")
    _build(tmp_path, tmp_path / "docs.parquet", check=True)
    out = tmp_path / "out"
    bodies = dict(zip(table["doc_id"].to_pylist(), table["body"].to_pylist(), strict=True))
    sets = {d: frozenset(ref.token_shingles(ref.normalize_text(b).split())) for d, b in bodies.items()}
    edges = duckdb.sql(f"select left_doc_id, right_doc_id from '{out / 'duplicate_pairs.csv'}'").fetchall()
    ratio = {(a, b): Fraction(len(sets[a] & sets[b]), len(sets[a] | sets[b])) for a, b in edges}
    assert len(edges) > 40_000 and min(ratio.values()) >= Fraction(7, 10)
    inspection = duckdb.sql(
        "select doc_id, representative_doc_id, hops_from_representative, cluster_edges,"
        f" cluster_mean_edge_jaccard from '{out / 'cluster_inspection.csv'}'"
    ).fetchall()
    assert {row[0] for row in inspection} == {d for d in bodies if d.startswith("near")}
    (representative,) = {row[1] for row in inspection}
    assert {(row[3], row[4]) for row in inspection} == {(len(edges), float(sum(ratio.values()) / len(edges)))}
    neighbours = {d: set() for d in bodies}
    for a, b in edges:
        neighbours[a].add(b)
        neighbours[b].add(a)
    hops, frontier, distance = {representative: 0}, {representative}, 0
    while frontier:
        distance += 1
        frontier = {n for d in frontier for n in neighbours[d]} - hops.keys()
        hops.update(dict.fromkeys(frontier, distance))
    assert {row[0]: row[2] for row in inspection} == hops


READER = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
print(con.sql("select count(*) from main_internal.stg_documents").fetchall()[0][0], flush=True)
sys.stdin.readline()
print(con.sql("select count(*) from main_internal.stg_documents").fetchall()[0][0], flush=True)
"""


def _start_reader(path):
    """A process holding a read-only connection to path (READER): it prints the page count, waits for a
    line on stdin (_ask_again), prints it again and exits."""
    return subprocess.Popen(
        [sys.executable, "-c", READER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def _ask_again(reader):
    reader.stdin.write("\n")
    reader.stdin.flush()


def _show_kept(db_path, dbt_vars):
    """`dbt show` of the release's row count."""
    return run_dbt(
        ["show", "--inline", "select count(*) as kept from {{ ref('deduped_documents') }}"],
        db_path=db_path,
        dbt_vars=dbt_vars,
    )


def test_readers_of_the_published_database_never_block_the_build(tmp_path):
    db_path = tmp_path / "web_text_dedup.duckdb"
    published = tmp_path / "published" / "web_text_dedup.duckdb"
    run_dbt(["build"], db_path=db_path, dbt_vars={"output_dir": str(tmp_path / "out")})
    assert os.path.samefile(db_path, published)  # published as a hard link: the database is on disk once
    reader = _start_reader(published)
    assert reader.stdout.readline().strip() == "24"  # the analyst holds a read-only connection
    corpus = tmp_path / "docs.csv"
    corpus.write_text(HEADER + "a,s,d,2024-01-01,t,one two three\nb,s,e,2024-01-02,t,four five six\n")
    # a rebuild while the reader is connected succeeds
    run_dbt(
        ["build"],
        db_path=db_path,
        dbt_vars={"documents_path": str(corpus), "output_dir": str(tmp_path / "out")},
    )
    _ask_again(reader)
    assert reader.stdout.readline().strip() == "24"  # the open connection keeps the old, complete result
    reader.wait()
    fresh = duckdb.connect(str(published), read_only=True)
    assert fresh.sql("select count(*) from main_internal.stg_documents").fetchall() == [
        (2,)
    ]  # new readers see the new one
    fresh.close()
    assert not [p for p in published.parent.iterdir() if p.name.endswith(".tmp")]


def test_a_published_database_written_to_makes_the_next_build_a_full_build(tmp_path):
    """The published file is the build file until the next dbt command gives the build its own copy: a
    connection that writes to the published file in between changes what the build would start from, so
    the next build starts from a new file (a full build: the fixture's results, without the analyst's
    table) and says so."""
    db_path = tmp_path / "web_text_dedup.duckdb"
    published = tmp_path / "published" / "web_text_dedup.duckdb"
    run_dbt(["build"], db_path=db_path, dbt_vars={"output_dir": str(tmp_path / "out")})
    with duckdb.connect(str(published)) as analyst:
        analyst.execute("create table my_notes as select 1 as note")
        analyst.execute("delete from main.clusters")
    rebuilt = run_dbt(["build"], db_path=db_path, dbt_vars={"output_dir": str(tmp_path / "out")})
    assert (
        f"{db_path} was shared with the published database, which was written to after publishing: starting"
        " from a new build file (a full build)" in rebuilt.stdout
    )
    for path in (db_path, published):
        with duckdb.connect(str(path), read_only=True) as con:
            assert con.execute("select count(*) from main.clusters").fetchone()[0] == 24
            assert con.execute("select count(*) from deduped_documents").fetchone()[0] == 12
            assert not con.execute("select * from duckdb_tables() where table_name = 'my_notes'").fetchall()


def test_commands_that_only_read_do_not_copy_a_published_build_file(tmp_path):
    """After a publish the build file is the published file (one inode).  `dbt docs generate`, `dbt show`
    and `dbt compile` only read it: they attach it read-only and leave it shared (no copy, which at 10M
    pages is ~18 GB), beside an analyst reading the published file; the next build still gets a file of
    its own and leaves the published one as it was."""
    db_path = tmp_path / "web_text_dedup.duckdb"
    published = tmp_path / "published" / "web_text_dedup.duckdb"
    out = {"output_dir": str(tmp_path / "out")}
    run_dbt(["build"], db_path=db_path, dbt_vars=out)
    before = hashlib.sha256(published.read_bytes()).hexdigest()
    reader = _start_reader(published)
    assert reader.stdout.readline().strip() == "24"  # an analyst holds a read-only connection throughout
    docs = run_dbt(
        ["docs", "generate", "--target-path", str(tmp_path / "target")], db_path=db_path, dbt_vars=out
    )
    shown = _show_kept(db_path, out)
    compiled = run_dbt(["compile", "-s", "clusters"], db_path=db_path, dbt_vars=out)
    assert "|   12 |" in shown.stdout
    catalog = json.loads((tmp_path / "target" / "catalog.json").read_text())
    assert "model.web_text_dedup.clusters" in catalog["nodes"]  # the catalog read the tables
    for result in (docs, shown, compiled):
        assert "own copy" not in result.stdout
    assert os.path.samefile(db_path, published)
    assert hashlib.sha256(published.read_bytes()).hexdigest() == before
    shared = published.stat().st_ino
    rebuilt = run_dbt(["build", "-s", "clusters"], db_path=db_path, dbt_vars=out)
    _ask_again(reader)
    assert reader.stdout.readline().strip() == "24"
    assert reader.wait() == 0
    assert "the build writes its own copy" in rebuilt.stdout
    assert db_path.stat().st_ino != shared  # the build wrote to its own file, then published it
    assert os.path.samefile(db_path, published)

    # a build file of its own (publishing off, or after a writing command) is attached read-only too:
    # a reader of it does not block `dbt show`
    own_build_file(str(db_path))
    own = db_path.stat().st_ino
    reader = _start_reader(db_path)
    assert reader.stdout.readline().strip() == "24"
    shown = _show_kept(db_path, out)
    assert "|   12 |" in shown.stdout
    _ask_again(reader)
    assert reader.stdout.readline().strip() == "24"
    assert reader.wait() == 0
    assert db_path.stat().st_ino == own


def test_a_failed_build_does_not_publish(tmp_path):
    db_path = tmp_path / "web_text_dedup.duckdb"
    published = tmp_path / "published" / "web_text_dedup.duckdb"
    run_dbt(["build"], db_path=db_path, dbt_vars={"output_dir": str(tmp_path / "out")})
    before = hashlib.sha256(published.read_bytes()).hexdigest()
    corpus = tmp_path / "docs.csv"
    corpus.write_text(HEADER + "a,s,d,2024-01-01,t,x\na,s,d,2024-01-01,t,y\n")
    failed = run_dbt(
        ["build"],
        db_path=db_path,
        check=False,
        dbt_vars={"documents_path": str(corpus), "output_dir": str(tmp_path / "o2")},
    )
    _fails_with(failed, "duplicate doc_id (1): a")
    assert hashlib.sha256(published.read_bytes()).hexdigest() == before


def test_hot_bucket_of_100k_identical_pages_in_200k(tmp_path):
    """100,000 identical pages inside a 200,000-document corpus: one cluster for them, linear candidate
    rows, and every other document clustered exactly as in a run without the hot bucket."""
    from benchmarks.generate_corpus import generate

    table = generate(200_000, seed=5, hot_bucket=100_000)
    pq.write_table(table, tmp_path / "with_hot.parquet")
    hot_mask = pc.equal(table["source"], "hot_bucket")
    pq.write_table(table.filter(pc.invert(hot_mask)), tmp_path / "rest.parquet")
    hot_ids = set(table.filter(hot_mask)["doc_id"].to_pylist())
    assert len(hot_ids) == 100_000

    def clusters_of(name):
        out = tmp_path / f"out-{name}"
        run_dbt(
            ["build"],
            db_path=tmp_path / f"{name}.duckdb",
            dbt_vars={"documents_path": str(tmp_path / f"{name}.parquet"), "output_dir": str(out)},
        )
        rows = duckdb.sql(f"select doc_id, cluster_id from '{out / 'clusters.csv'}'").fetchall()
        candidates = duckdb.sql(f"select count(*) from '{out / 'scored_pairs.parquet'}'").fetchall()[0][0]
        return dict(rows), candidates

    with_hot, hot_candidates = clusters_of("with_hot")
    without_hot, rest_candidates = clusters_of("rest")
    assert len({with_hot[d] for d in hot_ids}) == 1  # the hot bucket is one cluster
    assert {d: c for d, c in with_hot.items() if d not in hot_ids} == without_hot
    assert hot_candidates - rest_candidates == len(hot_ids) - 1  # star form: n - 1 rows, not n(n-1)/2


def test_a_run_that_fails_after_exporting_leaves_the_previous_outputs(tmp_path):
    out = tmp_path / "out"
    run_dbt(["build"], db_path=tmp_path / "db.duckdb", dbt_vars={"output_dir": str(out)})
    before = _digests(out)
    # threshold 0.99 rejects the fixture's near duplicates: the models and their exports run, then the
    # fixture's count tests fail, so nothing of this run may be published
    failed = run_dbt(
        ["build"],
        db_path=tmp_path / "db.duckdb",
        check=False,
        dbt_vars={"output_dir": str(out), "threshold": 0.99},
    )
    _fails_with(failed, "publish_outputs: outputs not published (the run did not succeed)")
    assert "OK created sql table model main.scored_pairs" in failed.stdout
    assert _digests(out) == before


@pytest.mark.parametrize("file_name", ["my-crawl.duckdb", "default.duckdb"])
def test_any_database_file_name_works_and_its_published_views_resolve(tmp_path, file_name):
    """The build file is attached under its stem (profiles.yml): a dash or an SQL keyword in the name
    must neither break the build nor the views of the published copy an analyst opens."""
    run_dbt(["build"], db_path=tmp_path / file_name, dbt_vars={"output_dir": str(tmp_path / "out")})
    published = duckdb.connect(str(tmp_path / "published" / file_name), read_only=True)
    assert published.execute("select count(*) from deduped_documents").fetchone()[0] == 12
    assert published.execute("select count(*) from cluster_inspection").fetchone()[0] > 0


def test_long_pages_size_the_memory_their_readers_need_and_an_explicit_limit_is_kept(tmp_path, monkeypatch):
    """2,048 pages of 100,000 bytes: one stored vector of 204.8 MB, which DuckDB decompresses into a
    256 MiB buffer per reader.  With dbt's 2 threads and an explicit limit of 1000MB, the limit is kept and
    the log names what the readers need: 2 x 256 MiB + half of 1000 MB = 1,036,870,912 bytes."""
    monkeypatch.setenv("DEDUP_MEMORY_LIMIT", "1000MB")
    words = [hashlib.md5(str(n).encode()).hexdigest()[:9] for n in range(20_000)]
    bodies = [
        " ".join(words[(page * 7 + k) % len(words)] for k in range(10_001))[:100_000] for page in range(2048)
    ]
    assert {len(body) for body in bodies} == {100_000}
    table = pa.table(
        {
            "doc_id": [f"p{page:04d}" for page in range(2048)],
            "source": ["s"] * 2048,
            "domain": ["d"] * 2048,
            "crawled_at": ["2024-01-01"] * 2048,
            "title": ["t"] * 2048,
            "body": bodies,
        }
    )
    pq.write_table(table, tmp_path / "docs.parquet")
    dbt_vars = {"documents_path": str(tmp_path / "docs.parquet"), "output_dir": str(tmp_path / "out")}
    result = run_dbt(["run", "--select", "stg_documents"], db_path=tmp_path / "db.duckdb", dbt_vars=dbt_vars)
    assert "stg_documents: memory_limit 1000MB (set explicitly) may be too low for 2 readers" in result.stdout
    assert "(a 256 MiB buffer each): about 1036MB" in result.stdout
    # a command that does not build stg_documents (dbt retry, a selection of later models) sizes for the
    # stored bodies at its start
    result = run_dbt(
        ["run", "--select", "int_run_settings"], db_path=tmp_path / "db.duckdb", dbt_vars=dbt_vars
    )
    assert "stg_documents: memory_limit 1000MB (set explicitly) may be too low for 2 readers" in result.stdout
    assert "(a 256 MiB buffer each): about 1036MB" in result.stdout
