"""Generated templated sites and an independent brute force of the boilerplate filter (plain Python over
the spec's reference functions) for tests/python/e2e/quality/test_boilerplate_filter.py and
benchmarks/boilerplate_sweep.py.

Each site's pages share a large navigation block and a footer (many short lines, about 280 words); each
third of them (a section) also shares a sidebar (60 short lines, about 240 words); pages differ in a
short body (45 words).  Distinct pages of one site have shingle Jaccard of about 0.6 to 0.8
unfiltered, and distinct pages of one section still about 0.75 once only the navigation is left out.
Planted: mirrors (the same page under another doc_id, on the same site or on a mirror domain) and
one-word revisions (one body word replaced)."""

from __future__ import annotations

import datetime as dt
import random
from collections import defaultdict

import pyarrow as pa

from webdedup.core import reference as ref

THRESHOLD = ref.SHINGLE_JACCARD_THRESHOLD


def _word(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9)))


def _line(rng: random.Random, words: int) -> str:
    return " ".join(_word(rng) for _ in range(words))


def templated_sites(sites: int = 3, pages_per_site: int = 30, seed: int = 4) -> tuple[pa.Table, dict]:
    """(table, plants): plants maps each planted copy's doc_id to its original's doc_id and kind
    ('mirror', 'mirror_elsewhere' or 'revision'); every other page is distinct."""
    rng = random.Random(seed)
    rows, plants = [], {}
    day = dt.datetime(2024, 5, 1)
    for s in range(sites):
        domain = f"docs{s}.example"
        nav = [_line(rng, rng.randint(2, 6)) for _ in range(60)]
        footer = [_line(rng, 8) for _ in range(5)]
        sidebars = [[_line(rng, rng.randint(2, 6)) for _ in range(60)] for _ in range(3)]
        for p in range(pages_per_site):
            body = [_line(rng, 15) for _ in range(3)]
            doc_id = f"site{s}-p{p:02d}"
            sidebar = sidebars[p % 3]
            text = "\n".join([*nav, *sidebar, *body, *footer])
            rows.append((doc_id, domain, day + dt.timedelta(days=p), text))
            if p % 6 == 0:
                rows.append((f"{doc_id}-mirror", domain, day + dt.timedelta(days=p, hours=1), text))
                plants[f"{doc_id}-mirror"] = (doc_id, "mirror")
            if p % 6 == 1:
                rows.append((f"{doc_id}-copy", f"mirror{s}.example", day, text))
                plants[f"{doc_id}-copy"] = (doc_id, "mirror_elsewhere")
            if p % 6 == 2:
                words = " ".join(body).split()
                words[rng.randrange(len(words))] = "revised"
                revised = [" ".join(words[i * 15 : (i + 1) * 15]) for i in range(3)]
                rows.append(
                    (
                        f"{doc_id}-rev",
                        domain,
                        day + dt.timedelta(days=p + 40),
                        "\n".join([*nav, *sidebar, *revised, *footer]),
                    )
                )
                plants[f"{doc_id}-rev"] = (doc_id, "revision")
    table = pa.table(
        {
            "doc_id": [r[0] for r in rows],
            "source": ["templated"] * len(rows),
            "domain": [r[1] for r in rows],
            "crawled_at": [r[2] for r in rows],
            "title": [r[0] for r in rows],
            "body": [r[3] for r in rows],
        }
    )
    return table, plants


# ---------------------------------------------------------------------------------------------------
# Brute force of the filter (the rule of models/intermediate/int_shingle_texts.sql, written independently)


def _key(line: str) -> str:
    return line.replace("\r", "").strip(" ")


def filtered_texts(table: pa.Table, max_share: float, min_pages: int) -> dict[str, str]:
    rows = table.select(["doc_id", "domain", "body"]).to_pylist()
    bodies_by_domain = defaultdict(set)
    for r in rows:
        if r["domain"] is not None and r["body"] is not None:
            bodies_by_domain[r["domain"]].add(r["body"])
    boilerplate = set()
    for bodies in bodies_by_domain.values():
        if len(bodies) < min_pages:
            continue
        counts = defaultdict(int)
        for body in bodies:
            for key in {_key(line) for line in body.split("\n")} - {""}:
                counts[key] += 1
        boilerplate |= {key for key, n in counts.items() if n > max_share * len(bodies)}
    out = {}
    for r in rows:
        body = r["body"]
        if body is None:
            out[r["doc_id"]] = body
            continue
        lines = body.split("\n")
        dropped = [_key(line) in boilerplate for line in lines]
        kept_text = [line for line, d in zip(lines, dropped, strict=True) if not d and _key(line)]
        if not any(dropped) or not kept_text:
            out[r["doc_id"]] = body
        else:
            out[r["doc_id"]] = "\n".join("" if d else line for line, d in zip(lines, dropped, strict=True))
    return out


def shingle_set(text: str | None) -> frozenset:
    """The spec's shingle set of a text (None: empty)."""
    return frozenset(ref.token_shingles(ref.normalize_text(text or "").split()))


def reference_jaccard(left: str | None, right: str | None) -> float:
    """The spec's exact Jaccard of two texts' shingle sets."""
    return ref.jaccard(shingle_set(left), shingle_set(right))


def duplicate_components(texts: dict[str, str], threshold: float = THRESHOLD) -> dict[str, str]:
    """doc_id -> smallest doc_id of its component of all pairs with reference Jaccard >= threshold."""
    sets = {d: shingle_set(t) for d, t in texts.items()}
    ids = sorted(sets)
    parent = {d: d for d in ids}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            if sets[a] and sets[b] and ref.jaccard(sets[a], sets[b]) >= threshold:
                ra, rb = find(a), find(b)
                if ra != rb:
                    parent[max(ra, rb)] = min(ra, rb)
    return {d: find(d) for d in ids}


def merge_errors(components: dict[str, str], plants: dict) -> tuple[int, int]:
    """(pairs of distinct pages merged, planted copies not merged with their original)."""
    originals = {d for d in components if d not in plants}
    by_component = defaultdict(list)
    for d in originals:
        by_component[components[d]].append(d)
    false_merges = sum(len(v) * (len(v) - 1) // 2 for v in by_component.values())
    missed = sum(components[copy] != components[original] for copy, (original, _) in plants.items())
    return false_merges, missed
