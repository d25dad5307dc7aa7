"""macros/algorithm/connected_components.sql on DuckDB against union-find: the macro's SQL (rendered from the
macro file with Jinja, as dbt renders it) run on random graphs - long paths whose ids go up and down,
cliques, stars, self-loops, edges given in both directions or twice - gives every node the smallest node
id of its connected component."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import duckdb
import jinja2
import pytest

from tests.python.helpers.quality_corpora import components as union_find

MACROS = Path(__file__).resolve().parents[3] / "macros" / "algorithm" / "connected_components.sql"


def _components_sql(nodes: str, edges: str) -> str:
    module = jinja2.Environment(extensions=["jinja2.ext.do"]).from_string(MACROS.read_text()).module
    return str(module.duckdb__connected_components(nodes, edges))


def _graph(rng: random.Random) -> tuple[list[str], list[tuple[str, str]]]:
    nodes = [f"d{rng.randrange(10**6):06d}" for _ in range(rng.randrange(1, 80))]
    nodes = sorted(set(nodes))
    shuffled = nodes[:]
    rng.shuffle(shuffled)
    edges = []
    shape = rng.choice(["path", "cliques", "random", "star"])
    if shape == "path":  # one long path in random id order: the diameter is the number of nodes
        edges = list(itertools.pairwise(shuffled))
    elif shape == "cliques":
        for start in range(0, len(shuffled), 7):
            group = shuffled[start : start + rng.randrange(1, 8)]
            edges += [(a, b) for i, a in enumerate(group) for b in group[i + 1 :]]
    elif shape == "star":
        edges = [(shuffled[0], other) for other in shuffled[1:]]
    else:
        edges = [(rng.choice(nodes), rng.choice(nodes)) for _ in range(rng.randrange(0, 3 * len(nodes)))]
    edges += [(b, a) for a, b in rng.sample(edges, k=len(edges) // 3)]  # some in both directions
    edges += rng.sample(edges, k=len(edges) // 5)  # some twice
    edges += [(node, node) for node in rng.sample(nodes, k=len(nodes) // 10)]  # loops
    return nodes, edges


@pytest.mark.parametrize("seed", range(40))
def test_every_node_gets_the_smallest_id_of_its_component(seed):
    rng = random.Random(seed)
    nodes, edges = _graph(rng)
    connection = duckdb.connect()
    connection.execute("create table nodes (node_id varchar)")
    connection.executemany("insert into nodes values (?)", [(node,) for node in nodes])
    connection.execute("create table edges (src varchar, dst varchar)")
    if edges:
        connection.executemany("insert into edges values (?, ?)", edges)
    rows = connection.execute(_components_sql("nodes", "edges")).fetchall()
    assert len(rows) == len(nodes)
    assert dict(rows) == union_find(nodes, edges)
