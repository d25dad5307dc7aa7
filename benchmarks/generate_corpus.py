"""Deterministic synthetic web corpus with planted near-duplicate groups.

The corpus is built from real English prose that ships with the interpreter (the ``pydoc_data.topics``
help texts and the docstrings of a fixed list of standard-library modules), split into a pool of several
thousand sentences.  Every document is a pseudo-random selection of pool sentences (300-900 tokens, about
3.5 KB), decorated with per-document "lead" sentences that carry unique names, numbers and dates so that
unrelated documents share almost no 5-token shingles.

Planted structure (``group_id`` records it, ``source`` names the role of each row):

* ``original``        the canonical page of a planted group;
* ``mirror``          byte-identical body on another domain;
* ``revision``        1-5 words edited (shingle Jaccard to the original > 0.9);
* ``boilerplate``     same body wrapped in a different header/footer navigation text (10-30 tokens);
* ``near_threshold``  sentences replaced and words edited until the exact shingle Jaccard to the original
                      lies in [0.705, 0.795] (checked with the reference tokenisation while generating);
* ``hot_bucket``      ``--hot-bucket K`` identical short "page not found" pages (one LSH hot spot);
* ``singleton``       everything else (no planted duplicate).

Content is a pure function of ``(seed, document position)``: any chunk of rows can be produced on its own,
so the generator streams fixed-size chunks into a ``pyarrow.parquet.ParquetWriter`` (bounded memory) and can
fan chunks out to worker processes without changing a single output byte.  The same arguments (and the
same Python / pyarrow versions, which provide the sentence pool and the parquet encoder) always give a
byte-identical parquet file.

Usage::

    python benchmarks/generate_corpus.py --docs 100000 --out /tmp/corpus.parquet [--seed 7]
        [--hot-bucket K] [--near-threshold-share F] [--group-share G] [--batches B] [--workers W]
"""

from __future__ import annotations

import argparse
import functools
import importlib
import inspect
import json
import os
import random
import re
import sys
import time
import warnings
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

if __package__ in (None, ""):  # executed as ``python benchmarks/generate_corpus.py``
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from webdedup.core.reference import jaccard, normalize_text, token_shingles

GENERATOR_VERSION = 1
DEFAULT_SEED = 7
DEFAULT_NEAR_THRESHOLD_SHARE = 0.02
DEFAULT_GROUP_SHARE = 0.30
DEFAULT_ROW_GROUP_SIZE = 50_000
NEAR_LOW, NEAR_HIGH = 0.705, 0.795

SINGLETON, ORIGINAL, MIRROR, REVISION, BOILERPLATE, NEAR, HOT = range(7)
SOURCE_NAMES = ("singleton", "original", "mirror", "revision", "boilerplate", "near_threshold", "hot_bucket")

SCHEMA = pa.schema(
    [
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("domain", pa.string(), nullable=False),
        pa.field("crawled_at", pa.timestamp("us"), nullable=False),
        pa.field("title", pa.string(), nullable=False),
        pa.field("body", pa.string(), nullable=False),
        pa.field("group_id", pa.string(), nullable=True),
    ]
)

# --------------------------------------------------------------------------------------------------------
# Word lists used for decorations (names, numbers, navigation).  All ASCII.
# --------------------------------------------------------------------------------------------------------


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def _items(text: str) -> tuple[str, ...]:
    return tuple(text.split("|"))


ADJECTIVES = _words(
    "Amber Azure Bold Brisk Cedar Cobalt Coral Crimson Dawn Delta Dusky Ember Fern Frost Golden Granite "
    "Harbor Hazel Indigo Ivory Jade Juniper Keen Lunar Maple Marble Misty Navy Nimble Oak Onyx Opal Pine "
    "Polar Quartz Quiet Rapid Raven Rustic Sable Sage Scarlet Silver Slate Solar Spruce Stellar Swift "
    "Tawny Teal Timber Topaz Umber Velvet Verdant Violet Willow Winter Zephyr"
)
NOUNS = _words(
    "Anchor Archive Atlas Beacon Bridge Canvas Cascade Circuit Compass Console Crest Depot Engine Falcon "
    "Forge Garden Gateway Harbor Horizon Journal Kernel Lantern Ledger Lighthouse Matrix Meadow Mosaic "
    "Nexus Orbit Outpost Paddock Pilot Pioneer Portal Prism Pulse Quarry Relay Reservoir Ridge Rocket "
    "Runway Satellite Signal Spire Summit Tablet Terrace Thicket Tower Trail Vault Vector Voyager Warden "
    "Workshop"
)
FIRST_NAMES = _words(
    "Ada Alan Amara Ana Arjun Bea Carlos Chen Dana Diego Elena Emil Farah Felix Greta Hana Hugo Ines Ivan "
    "Jonas Kai Kenji Lara Leon Lucia Malik Mara Mateo Mei Nadia Nils Noor Omar Oskar Priya Quinn Rafael "
    "Rosa Sami Sofia Tariq Tomas Uma Vera Viktor Wen Yara Yusuf Zoe"
)
LAST_NAMES = _words(
    "Abbott Adeyemi Alvarez Berg Brandt Castillo Dubois Eriksen Fischer Garcia Haddad Hansen Ibarra "
    "Jensen Kato Kowalski Larsen Lindqvist Moreau Nakamura Novak Okafor Ortega Petrov Quint Rahman Rossi "
    "Sato Schmidt Silva Tanaka Torres Usman Varga Weber Wright Yilmaz Zhang Ziegler"
)
MONTHS = _words("January February March April May June July August September October November December")
REPLACEMENT_WORDS = _words(
    "account action agent answer area balance basis budget buffer cable channel chapter client column "
    "comment company concept context contract control copy corner course credit cycle data debate degree "
    "design detail device dialog domain draft driver effort engine entry event export factor feature "
    "field figure filter format frame gadget garden guide handle header height history holder image "
    "impact index input issue journey kernel label ladder layer layout ledger lesson letter level library "
    "limit line listing locker manual margin market measure member memory method metric mirror model "
    "module moment monitor motion network notice number object office option origin output owner packet "
    "panel parcel partner pattern period permit phrase picture pilot place planet player pocket policy "
    "portal position powder practice profile project prompt proof quarter question radius record region "
    "relay report request result ribbon route sample schedule screen script section segment sensor server "
    "session signal sketch socket source speaker spirit stage status story stream street studio summary "
    "surface symbol system table target teacher ticket timer token topic tower tracker traffic trailer "
    "update usage valley vendor version vessel viewer volume voucher website widget window worker writer "
    "yield"
)
NAV_ITEMS = _items(
    "Home|About|About us|Contact|Contact us|Blog|News|Docs|Documentation|Pricing|Support|Help center|Sign"
    " in|Log in|Register|Subscribe|Careers|Products|Solutions|Resources|Community|Forum|Events|Partners|D"
    "ownloads|Shop|Cart|Search|Menu|Skip to content|Newsletter|Press|FAQ|Status"
)
FOOTER_ITEMS = _items(
    "Privacy policy|Terms of service|Cookie settings|Accessibility|Sitemap|Imprint|Legal "
    "notice|Security|Contact|Careers|Affiliates|Advertise with us|RSS feed|Report an issue|Do not sell my"
    " data|Back to top"
)
LEAD_TEMPLATES = (
    "{subject} notes, revision {n}: reviewed by {first} {last} on {month} {day}, {year}.",
    "This section of the {subject} handbook was last updated in {month} {year} by {first} {last}.",
    "{first} {last} maintains the {subject} examples and answered ticket {code}-{n} about them.",
    "According to the {subject} team, the following applies to release {major}.{minor}.{patch}.",
    "Ticket {code}-{n} tracks this behaviour in {subject} since {month} {year}.",
    "In the {subject} workshop held on {month} {day}, {first} {last} walked through this topic.",
    "The {subject} archive lists {n} related questions; {first} {last} summarised the answers here.",
    "Version {major}.{minor} of {subject} changed this, as {first} {last} pointed out in {month}.",
    "Readers of the {subject} digest (issue {n}) asked {first} {last} to explain the details below.",
    "{subject} build {n} was tested against these notes by {first} {last} in {month} {year}.",
    "Questions about {subject} can be sent to {first} {last}, who reviewed page {n} of this guide.",
    "Last checked on {month} {day}, {year} for {subject} {major}.{minor} by {first} {last}.",
)
TITLE_TEMPLATES = (
    "{subject}: {topic}",
    "{topic} | {subject} guide",
    "{subject} notes - {topic}",
    "How {subject} handles {topic_lower}",
    "{topic} ({subject} {year})",
)
HOT_TITLE = "Page not found"
HOT_BODY = (
    "Page not found. The page you are looking for might have been removed, had its name changed, or is "
    "temporarily unavailable. Please check the address or return to the home page. Error 404."
)
POOL_MODULES = _words(
    "abc argparse array ast asyncio asyncio.events asyncio.locks asyncio.queues asyncio.streams "
    "asyncio.subprocess asyncio.tasks base64 binascii bisect bz2 calendar cmath code codecs codeop "
    "collections collections.abc colorsys concurrent.futures configparser contextlib copy copyreg "
    "cProfile csv dataclasses datetime dbm decimal difflib dis doctest email.headerregistry email.message "
    "email.parser email.policy email.utils enum faulthandler filecmp fileinput fnmatch fractions ftplib "
    "functools gc getopt getpass gettext glob graphlib gzip hashlib heapq hmac html.parser http.client "
    "http.cookiejar http.cookies http.server imaplib importlib importlib.abc importlib.metadata "
    "importlib.resources inspect io ipaddress itertools json json.decoder json.encoder linecache locale "
    "logging logging.config logging.handlers lzma mailbox math mimetypes mmap modulefinder "
    "multiprocessing multiprocessing.managers multiprocessing.pool multiprocessing.shared_memory netrc "
    "numbers operator optparse os os.path pathlib pdb pickle pkgutil platform plistlib poplib pprint "
    "profile pstats pydoc queue quopri random re reprlib runpy sched secrets selectors shelve shlex "
    "shutil signal smtplib socket socketserver sqlite3 ssl stat statistics string struct subprocess sys "
    "sysconfig tarfile tempfile textwrap threading timeit tokenize tomllib trace traceback tracemalloc "
    "types typing unittest unittest.case unittest.loader unittest.mock unittest.runner urllib.parse "
    "urllib.request urllib.robotparser uuid venv warnings wave weakref wsgiref.handlers "
    "wsgiref.simple_server xml.dom.minidom xml.etree.ElementTree xmlrpc.client xmlrpc.server zipfile "
    "zipimport zlib zoneinfo"
)

# --------------------------------------------------------------------------------------------------------
# Tokenisation helpers (exactly equivalent to webdedup.core.reference, with an ASCII fast path)
# --------------------------------------------------------------------------------------------------------
_PUNCT_RE = re.compile(r"[^\w\s]+")
_WORD_RE = re.compile(r"[A-Za-z]{3,}")


def normalized_tokens(text: str) -> list[str]:
    """``normalize_text(text).split()``; ASCII input skips the (no-op) Unicode decomposition."""
    if text.isascii():
        return _PUNCT_RE.sub(" ", text.lower()).replace("_", " ").split()
    return normalize_text(text).split()


def shingle_set(text: str, size: int = 5) -> set:
    """Set of token tuples; in bijection with ``token_shingles`` (tokens never contain spaces)."""
    tokens = normalized_tokens(text)
    if len(tokens) < size:
        return {tuple(tokens)} if tokens else set()
    return set(zip(*(tokens[offset:] for offset in range(size)), strict=False))


def reference_jaccard(left_body: str, right_body: str) -> float:
    """Exact 5-token shingle Jaccard computed with the spec's reference functions (slow, for checks)."""
    left = token_shingles(normalize_text(left_body).split())
    right = token_shingles(normalize_text(right_body).split())
    return jaccard(left, right)


def _fast_jaccard(left: set, right: set) -> float:
    shared = len(left & right)
    union = len(left) + len(right) - shared
    return shared / union if union else 0.0


# --------------------------------------------------------------------------------------------------------
# Sentence pool
# --------------------------------------------------------------------------------------------------------
_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"(])")
_ROLE_RE = re.compile(r":\w+:`~?([^`]*)`")


def _paragraphs(text: str) -> Iterator[str]:
    for para in re.split(r"\n\s*\n", text):
        lines = para.split("\n")
        if any("::=" in line or ">>>" in line or "..." in line for line in lines):
            continue  # grammar productions and interactive examples
        lines = [line.strip() for line in lines if line.strip() and not set(line.strip()) <= set("*=-~^")]
        if lines:
            yield " ".join(lines)


def _sentences(text: str) -> Iterator[str]:
    text = _ROLE_RE.sub(r"\1", text).replace("``", '"').replace("`", '"').replace("*", "")
    for para in _paragraphs(text):
        for sentence in _SENTENCE_SPLIT_RE.split(" ".join(para.split())):
            sentence = sentence.lstrip("- ").strip()
            if (
                not sentence
                or not sentence.isascii()
                or not sentence[0].isupper()
                or sentence[-1] not in ".!?"
            ):
                continue
            if not 8 <= len(sentence.split()) <= 45:
                continue
            if sum(ch.isalpha() or ch == " " for ch in sentence) < 0.88 * len(sentence):
                continue
            if sentence.count('"') % 2 or sentence.count("(") != sentence.count(")"):
                continue
            yield sentence


def _docstrings() -> Iterator[str]:
    seen: set[int] = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in POOL_MODULES:
            try:
                module = importlib.import_module(name)
            except ImportError:  # pragma: no cover - optional stdlib parts
                continue
            objects = [module] + [
                getattr(module, attr, None) for attr in sorted(dir(module)) if attr[:1] != "_"
            ]
            for obj in objects:
                if obj is None or id(obj) in seen:
                    continue
                seen.add(id(obj))
                doc = getattr(obj, "__doc__", None)
                if isinstance(doc, str):
                    yield inspect.cleandoc(doc)
                if inspect.isclass(obj):
                    for attr, member in sorted(vars(obj).items()):
                        doc = getattr(member, "__doc__", None) if attr[:1] != "_" else None
                        if isinstance(doc, str):
                            yield inspect.cleandoc(doc)


@dataclass(frozen=True)
class SentencePool:
    sentences: tuple[str, ...]
    token_counts: np.ndarray
    counts: tuple[int, ...]  # same as token_counts, as Python ints for the per-document loop

    def __len__(self) -> int:
        return len(self.sentences)


@functools.lru_cache(maxsize=1)
def sentence_pool() -> SentencePool:
    """Sorted, de-duplicated English sentences from pydoc topics and stdlib docstrings."""
    from pydoc_data.topics import topics

    found: set[str] = set()
    for key in sorted(topics):
        found.update(_sentences(topics[key]))
    for doc in _docstrings():
        found.update(_sentences(doc))
    # Drop sentences whose normalised form collides with another one (keeps planted groups clean).
    by_norm: dict[str, str] = {}
    for sentence in sorted(found):
        by_norm.setdefault(" ".join(normalized_tokens(sentence)), sentence)
    sentences = tuple(sorted(by_norm.values()))
    counts = np.fromiter((len(normalized_tokens(s)) for s in sentences), dtype=np.int32, count=len(sentences))
    return SentencePool(sentences, counts, tuple(counts.tolist()))


# --------------------------------------------------------------------------------------------------------
# Counter-based hashing (random access by document position)
# --------------------------------------------------------------------------------------------------------
_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)
_STREAM_LENGTH, _STREAM_SENTENCES, _STREAM_CONTENT, _STREAM_VARIANT, _STREAM_DOMAIN, _STREAM_TIME = range(
    1, 7
)


def _splitmix(values: np.ndarray) -> np.ndarray:
    x = values.astype(np.uint64) + _M1
    x = (x ^ (x >> np.uint64(30))) * _M2
    x = (x ^ (x >> np.uint64(27))) * _M3
    return x ^ (x >> np.uint64(31))


def _hash(seed: int, stream: int, *keys: np.ndarray) -> np.ndarray:
    state = _splitmix(np.asarray([(seed << 8) ^ stream], dtype=np.uint64))
    for key in keys:
        state = _splitmix(state ^ np.asarray(key).astype(np.uint64))
    return state


def _unit(values: np.ndarray) -> np.ndarray:
    return (values >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


# --------------------------------------------------------------------------------------------------------
# Corpus plan: which position holds which role, group and content
# --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CorpusConfig:
    docs: int
    seed: int = DEFAULT_SEED
    hot_bucket: int = 0
    near_threshold_share: float = DEFAULT_NEAR_THRESHOLD_SHARE
    group_share: float = DEFAULT_GROUP_SHARE
    row_group_size: int = DEFAULT_ROW_GROUP_SIZE

    def validate(self) -> None:
        if self.docs < 1:
            raise ValueError("docs must be >= 1")
        if not 0 <= self.hot_bucket <= self.docs:
            raise ValueError("hot_bucket must be between 0 and docs")
        if not 0.0 <= self.near_threshold_share <= 0.5:
            raise ValueError("near_threshold_share must be in [0, 0.5]")
        if not 0.0 <= self.group_share <= 1.0:
            raise ValueError("group_share must be in [0, 1]")
        if self.row_group_size < 1:
            raise ValueError("row_group_size must be >= 1")


@dataclass(frozen=True)
class CorpusPlan:
    """Per-position arrays (position = doc_id order)."""

    kind: np.ndarray  # int8 role code
    group: np.ndarray  # int32 group number, -1 for singletons
    base: np.ndarray  # int64 content key (slot of the group's original)
    key: np.ndarray  # int64 unique slot key (variant randomness)
    domain: np.ndarray  # int64 domain number
    crawled_us: np.ndarray  # int64 microseconds since epoch
    id_width: int
    group_width: int


_GROUP_LAYOUTS = (  # (weight, roles after the original)
    (0.14, (MIRROR,)),
    (0.10, (MIRROR, MIRROR)),
    (0.04, (MIRROR, MIRROR, MIRROR)),
    (0.14, (REVISION,)),
    (0.09, (REVISION, REVISION)),
    (0.10, (BOILERPLATE,)),
    (0.08, (BOILERPLATE, BOILERPLATE)),
    (0.03, (BOILERPLATE, BOILERPLATE, BOILERPLATE)),
    (0.18, (MIRROR, REVISION, BOILERPLATE)),
    (0.10, (MIRROR, REVISION)),
)


def build_plan(config: CorpusConfig) -> CorpusPlan:
    config.validate()
    n = config.docs
    rng = np.random.default_rng([config.seed, 0x5EED, GENERATOR_VERSION])
    kinds: list[int] = []
    groups: list[int] = []
    bases: list[int] = []
    group_no = 0

    def add_group(roles: tuple[int, ...]) -> None:
        nonlocal group_no
        first = len(kinds)
        for role in roles:
            bases.append(first)
            kinds.append(role)
            groups.append(group_no)
        group_no += 1

    if config.hot_bucket:
        add_group((HOT,) * config.hot_bucket)
    rest = n - config.hot_bucket
    n_near = min(round(config.near_threshold_share * rest), rest // 2)
    for _ in range(n_near):
        add_group((ORIGINAL, NEAR))
    remaining = max(0, min(rest, round(config.group_share * rest)) - 2 * n_near)
    weights = np.array([w for w, _ in _GROUP_LAYOUTS])
    layout_ids = rng.choice(len(_GROUP_LAYOUTS), size=remaining // 2 + 1, p=weights / weights.sum())
    for layout_id in layout_ids.tolist():
        roles = (ORIGINAL,) + _GROUP_LAYOUTS[layout_id][1]
        if remaining < 2:
            break
        roles = roles[:remaining]
        add_group(roles)
        remaining -= len(roles)
    grouped = len(kinds)
    kind_slot = np.full(n, SINGLETON, dtype=np.int8)
    kind_slot[:grouped] = kinds
    group_slot = np.full(n, -1, dtype=np.int32)
    group_slot[:grouped] = groups
    base_slot = np.arange(n, dtype=np.int64)
    base_slot[:grouped] = bases

    # Random positions; inside a group the original (first slot) gets the smallest position.
    pos_of_slot = rng.permutation(n).astype(np.int64)
    if grouped:
        order = np.lexsort((pos_of_slot[:grouped], group_slot[:grouped]))
        pos_of_slot[:grouped] = pos_of_slot[:grouped][order]
    slot_at = np.empty(n, dtype=np.int64)
    slot_at[pos_of_slot] = np.arange(n, dtype=np.int64)

    kind = kind_slot[slot_at]
    group = group_slot[slot_at]
    base = base_slot[slot_at]
    key = slot_at

    # Domains: the original's domain comes from its content key; mirrors/boilerplate copies always move
    # to another domain, revisions stay on the same site half of the time.
    n_domains = max(20, n // 25)
    home = (_hash(config.seed, _STREAM_DOMAIN, base) % np.uint64(n_domains)).astype(np.int64)
    other_hash = _hash(config.seed, _STREAM_DOMAIN, key + (1 << 40))
    other = (home + 1 + (other_hash % np.uint64(n_domains - 1)).astype(np.int64)) % n_domains
    moved = (kind == MIRROR) | (kind == BOILERPLATE) | (kind == NEAR)
    moved |= (kind == REVISION) & ((other_hash >> np.uint64(63)) == 1)
    domain = np.where(moved, other, home)
    domain = np.where(kind == HOT, (other_hash % np.uint64(n_domains)).astype(np.int64), domain)

    # Crawl times increase with the position (later batches are crawled later), with jitter.
    start_us = 1_672_531_200_000_000  # 2023-01-01T00:00:00Z
    span_us = 730 * 86_400 * 1_000_000
    step = span_us // n
    jitter = (_hash(config.seed, _STREAM_TIME, key) % np.uint64(max(step, 1))).astype(np.int64)
    crawled_us = start_us + np.arange(n, dtype=np.int64) * step + jitter
    crawled_us -= crawled_us % 1_000_000  # whole seconds

    return CorpusPlan(
        kind=kind,
        group=group,
        base=base,
        key=key,
        domain=domain,
        crawled_us=crawled_us,
        id_width=max(7, len(str(n))),
        group_width=max(6, len(str(max(group_no - 1, 0)))),
    )


# --------------------------------------------------------------------------------------------------------
# Document composition
# --------------------------------------------------------------------------------------------------------
MAX_SENTENCES = 112


def _lead_sentence(bits: int, subject: str) -> str:
    """A templated sentence with names, numbers and dates drawn from one 128-bit random integer."""
    fields = {"subject": subject}
    bits, template = divmod(bits, len(LEAD_TEMPLATES))
    bits, first = divmod(bits, len(FIRST_NAMES))
    bits, last = divmod(bits, len(LAST_NAMES))
    bits, month = divmod(bits, 12)
    bits, day = divmod(bits, 28)
    bits, year = divmod(bits, 16)
    bits, number = divmod(bits, 99_900)
    bits, code = divmod(bits, 24**3)
    bits, major = divmod(bits, 13)
    bits, minor = divmod(bits, 41)
    patch = bits % 21
    letters = "ABCDEFGHJKLMNPQRSTUVWXYZ"
    fields.update(
        first=FIRST_NAMES[first],
        last=LAST_NAMES[last],
        month=MONTHS[month],
        day=day + 1,
        year=2009 + year,
        n=100 + number,
        code=letters[code % 24] + letters[code // 24 % 24] + letters[code // 576],
        major=major,
        minor=minor,
        patch=patch,
    )
    return LEAD_TEMPLATES[template].format(**fields)


def _compose(pool: SentencePool, target_tokens: int, row: list[int], content_seed: int):
    """Return (title, paragraphs) for a base document; paragraphs are lists of sentences."""
    rnd = random.Random(content_seed)
    sentences = pool.sentences
    counts = pool.counts
    bits = rnd.getrandbits(64)
    subject = (
        f"{ADJECTIVES[bits % len(ADJECTIVES)]} {NOUNS[(bits >> 8) % len(NOUNS)]} {100 + (bits >> 16) % 9900}"
    )
    paragraphs: list[list[str]] = []
    current: list[str] = []
    para_size = 0
    tokens = 0
    used: set[int] = set()
    for index in row:
        if index in used:
            continue
        used.add(index)
        if not current:
            bits = rnd.getrandbits(32)
            para_size = 3 + (bits >> 16) % 4
            if bits & 0xFFFF < 36_045:  # lead sentence in ~55% of the paragraphs
                lead = _lead_sentence(rnd.getrandbits(128), subject)
                current.append(lead)
                tokens += len(lead.split())
        current.append(sentences[index])
        tokens += counts[index]
        if len(current) >= para_size:
            paragraphs.append(current)
            current = []
        if tokens >= target_tokens:
            break
    if current:
        paragraphs.append(current)
    first = next((s for s in paragraphs[0] if subject not in s), "General notes") if paragraphs else ""
    topic_words = re.sub(r"[^A-Za-z0-9 ]+", "", first).split()[: rnd.randint(4, 8)]
    topic = " ".join(topic_words) or "General notes"
    title = rnd.choice(TITLE_TEMPLATES).format(
        subject=subject, topic=topic, topic_lower=topic[:1].lower() + topic[1:], year=rnd.randint(2015, 2024)
    )
    return title, paragraphs


def _render(paragraphs: list[list[str]]) -> str:
    return "\n\n".join(" ".join(p) for p in paragraphs)


def _edit_words(paragraphs: list[list[str]], count: int, rnd: random.Random, skip=frozenset()) -> int:
    """Replace ``count`` single-token words (in distinct interior sentences when possible), in place."""
    slots = [(p, s) for p, para in enumerate(paragraphs) for s in range(len(para))]
    interior = [slot for slot in slots[1:-1] if slot not in skip] or slots
    rnd.shuffle(interior)
    done = 0
    for _round in range(4):
        for p, s in interior:
            if done >= count:
                return done
            words = paragraphs[p][s].split(" ")
            candidates = [i for i, w in enumerate(words) if _WORD_RE.fullmatch(w)]
            if not candidates:
                continue
            i = rnd.choice(candidates)
            old = words[i]
            new = rnd.choice(REPLACEMENT_WORDS)
            while new == old.lower():
                new = rnd.choice(REPLACEMENT_WORDS)
            words[i] = new.capitalize() if old[0].isupper() else new
            paragraphs[p][s] = " ".join(words)
            done += 1
    return done


def _navigation(rnd: random.Random, site: str) -> tuple[str, str]:
    """Header and footer navigation text, together 10-30 tokens."""
    budget = rnd.randint(10, 30)
    header_items = rnd.sample(NAV_ITEMS, rnd.randint(3, 7))
    header = f"{site} | " + " | ".join(header_items)
    used = len(normalized_tokens(header))
    footer_parts = [f"Copyright {rnd.randint(2012, 2024)} {site}."]
    used += len(normalized_tokens(footer_parts[0]))
    for item in rnd.sample(FOOTER_ITEMS, len(FOOTER_ITEMS)):
        item_tokens = len(item.split())
        if used + item_tokens > budget:
            break
        footer_parts.append(item)
        used += item_tokens
    while used > budget and len(header_items) > 1:  # trim an oversized header
        used -= len(normalized_tokens(header_items.pop()))
        header = f"{site} | " + " | ".join(header_items)
    return header, " | ".join(footer_parts)


def _near_variant(pool: SentencePool, paragraphs: list[list[str]], rnd: random.Random) -> list[list[str]]:
    """Replace whole sentences, then edit words, until Jaccard(original, variant) is in [0.705, 0.795]."""
    original = shingle_set(_render(paragraphs))
    size = len(original)
    target = rnd.uniform(0.715, 0.785)
    present = {sentence for para in paragraphs for sentence in para}
    best: tuple[float, list[list[str]]] | None = None
    for _attempt in range(12):
        variant = [list(p) for p in paragraphs]
        slots = [(p, s) for p, para in enumerate(variant) for s in range(len(para))][1:-1]
        rnd.shuffle(slots)
        # Shingles to remove in total so that (S - R) / (S + R) == target.
        needed = size * (1.0 - target) / (1.0 + target)
        sentence_share = rnd.uniform(0.3, 0.7)
        removed = added = 0.0
        replaced: set[tuple[int, int]] = set()
        for p, s in slots:
            old_tokens = len(normalized_tokens(variant[p][s]))
            if removed + old_tokens + 4 > needed * sentence_share:
                continue
            new_index = rnd.randrange(len(pool))
            while pool.sentences[new_index] in present:
                new_index = rnd.randrange(len(pool))
            variant[p][s] = pool.sentences[new_index]
            removed += old_tokens + 4
            added += int(pool.token_counts[new_index]) + 4
            replaced.add((p, s))
        # Each isolated word edit removes five shingles and adds five new ones.
        edits = max(0, round((size - removed - target * (size + added)) / (5.0 * (1.0 + target))))
        _edit_words(variant, edits, rnd, skip=frozenset(replaced))
        score = _fast_jaccard(original, shingle_set(_render(variant)))
        if NEAR_LOW <= score <= NEAR_HIGH:
            return variant
        if best is None or abs(score - 0.75) < abs(best[0] - 0.75):
            best = (score, variant)
        target = min(0.79, max(0.71, target + (target - score) * 0.8))
    if best is not None and 0.70 <= best[0] <= 0.80:
        return best[1]
    raise RuntimeError(f"could not place a near-threshold variant (best Jaccard {best and best[0]})")


def _chunk_columns(config: CorpusConfig, plan: CorpusPlan, lo: int, hi: int) -> pa.RecordBatch:
    pool = sentence_pool()
    seed = config.seed
    base = plan.base[lo:hi]
    key = plan.key[lo:hi]
    # Target length: 300-900 tokens, bell-shaped around 600.
    u = _unit(_hash(seed, _STREAM_LENGTH, base[:, None], np.arange(3)[None, :])).mean(axis=1)
    target_tokens = (300 + u * 600).astype(np.int64).tolist()
    columns = np.arange(MAX_SENTENCES, dtype=np.uint64)[None, :]
    rows = (_hash(seed, _STREAM_SENTENCES, base[:, None], columns) % np.uint64(len(pool))).astype(np.int64)
    content_seeds = _hash(seed, _STREAM_CONTENT, base).tolist()
    variant_seeds = _hash(seed, _STREAM_VARIANT, key).tolist()
    kinds = plan.kind[lo:hi].tolist()
    domains = plan.domain[lo:hi].tolist()

    titles: list[str] = []
    bodies: list[str] = []
    for i, kind in enumerate(kinds):
        if kind == HOT:
            titles.append(HOT_TITLE)
            bodies.append(HOT_BODY)
            continue
        title, paragraphs = _compose(pool, target_tokens[i], rows[i].tolist(), content_seeds[i])
        if kind in (SINGLETON, ORIGINAL, MIRROR):
            body = _render(paragraphs)
        else:
            rnd = random.Random(variant_seeds[i])
            if kind == REVISION:
                n_shingles = len(normalized_tokens(_render(paragraphs))) - 4
                edits = min(rnd.randint(1, 5), max(1, n_shingles // 100))
                _edit_words(paragraphs, edits, rnd)
                body = _render(paragraphs)
            elif kind == BOILERPLATE:
                site = f"Site{domains[i]}"
                header, footer = _navigation(rnd, site)
                body = f"{header}\n\n{_render(paragraphs)}\n\n{footer}"
                title = f"{title} | {site}"
            else:  # NEAR
                body = _render(_near_variant(pool, paragraphs, rnd))
                if rnd.random() < 0.5:
                    title = f"Updated: {title}"
        titles.append(title)
        bodies.append(body)

    width = plan.id_width
    gwidth = plan.group_width
    group_ids = [
        None if g < 0 else ("hot-bucket" if k == HOT else f"grp{g:0{gwidth}d}")
        for g, k in zip(plan.group[lo:hi].tolist(), kinds, strict=True)
    ]
    arrays = [
        pa.array([f"g{p + 1:0{width}d}" for p in range(lo, hi)], type=pa.string()),
        pa.array([SOURCE_NAMES[k] for k in kinds], type=pa.string()),
        pa.array([f"site{d}.example" for d in domains], type=pa.string()),
        pa.array(plan.crawled_us[lo:hi], type=pa.timestamp("us")),
        pa.array(titles, type=pa.string()),
        pa.array(bodies, type=pa.string()),
        pa.array(group_ids, type=pa.string()),
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=SCHEMA)


# --------------------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------------------
_WORKER_STATE: dict = {}


def _worker_init(config: CorpusConfig) -> None:
    _WORKER_STATE["config"] = config
    _WORKER_STATE["plan"] = build_plan(config)
    sentence_pool()


def _worker_chunk(bounds: tuple[int, int]) -> pa.RecordBatch:
    return _chunk_columns(_WORKER_STATE["config"], _WORKER_STATE["plan"], *bounds)


def iter_batches(
    docs: int,
    seed: int = DEFAULT_SEED,
    hot_bucket: int = 0,
    near_threshold_share: float = DEFAULT_NEAR_THRESHOLD_SHARE,
    group_share: float = DEFAULT_GROUP_SHARE,
    row_group_size: int = DEFAULT_ROW_GROUP_SIZE,
    workers: int = 1,
) -> Iterator[pa.RecordBatch]:
    """Yield record batches of ``row_group_size`` rows in doc_id order (bounded memory)."""
    config = CorpusConfig(docs, seed, hot_bucket, near_threshold_share, group_share, row_group_size)
    config.validate()
    bounds = [(lo, min(lo + row_group_size, docs)) for lo in range(0, docs, row_group_size)]
    if workers <= 1 or len(bounds) == 1:
        plan = build_plan(config)
        for lo, hi in bounds:
            yield _chunk_columns(config, plan, lo, hi)
        return
    with ProcessPoolExecutor(max_workers=workers, initializer=_worker_init, initargs=(config,)) as pool:
        pending = []
        for chunk in bounds:  # keep at most workers + 1 chunks in flight (bounded memory)
            pending.append(pool.submit(_worker_chunk, chunk))
            if len(pending) > workers:
                yield pending.pop(0).result()
        for future in pending:
            yield future.result()


def generate(
    docs: int,
    seed: int = DEFAULT_SEED,
    hot_bucket: int = 0,
    near_threshold_share: float = DEFAULT_NEAR_THRESHOLD_SHARE,
    group_share: float = DEFAULT_GROUP_SHARE,
    row_group_size: int = DEFAULT_ROW_GROUP_SIZE,
) -> pa.Table:
    """Whole corpus as one ``pyarrow.Table`` (use :func:`iter_batches` / :func:`write_corpus` for big N)."""
    batches = list(iter_batches(docs, seed, hot_bucket, near_threshold_share, group_share, row_group_size))
    return pa.Table.from_batches(batches, schema=SCHEMA)


def _schema_with_metadata(config: CorpusConfig) -> pa.Schema:
    params = {k: v for k, v in asdict(config).items() if k != "row_group_size"}
    meta = {"generator": "webdedup benchmarks/generate_corpus.py", "version": GENERATOR_VERSION, **params}
    return SCHEMA.with_metadata({b"webdedup.corpus": json.dumps(meta, sort_keys=True).encode()})


def batch_paths(out: str | Path, batches: int) -> list[Path]:
    out = Path(out)
    folder = out.with_suffix("") if out.suffix else out.with_name(out.name + "_batches")
    return [folder / f"batch-{i:03d}.parquet" for i in range(1, batches + 1)]


def write_corpus(
    out: str | Path,
    docs: int,
    seed: int = DEFAULT_SEED,
    hot_bucket: int = 0,
    near_threshold_share: float = DEFAULT_NEAR_THRESHOLD_SHARE,
    group_share: float = DEFAULT_GROUP_SHARE,
    batches: int = 0,
    row_group_size: int = DEFAULT_ROW_GROUP_SIZE,
    workers: int = 1,
) -> dict:
    """Stream the corpus to ``out`` (and optionally ``batches`` doc_id-ordered slices). Returns a summary."""
    started = time.perf_counter()
    config = CorpusConfig(docs, seed, hot_bucket, near_threshold_share, group_share, row_group_size)
    config.validate()
    schema = _schema_with_metadata(config)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    options = {"compression": "zstd", "use_dictionary": ["source", "domain", "group_id"]}

    split_paths = batch_paths(out, batches) if batches else []
    edges = np.linspace(0, docs, batches + 1).round().astype(np.int64).tolist() if batches else []
    if split_paths:
        split_paths[0].parent.mkdir(parents=True, exist_ok=True)
    source_counts = dict.fromkeys(SOURCE_NAMES, 0)
    current = -1
    split_writer = None
    position = 0
    with pq.ParquetWriter(out, schema, **options) as writer:
        for batch in iter_batches(
            docs, seed, hot_bucket, near_threshold_share, group_share, row_group_size, workers
        ):
            table = pa.Table.from_batches([batch], schema=schema)
            writer.write_table(table, row_group_size=row_group_size)
            for item in pc.value_counts(batch.column("source")).to_pylist():
                source_counts[item["values"]] += item["counts"]
            offset = 0
            while split_paths and offset < table.num_rows:
                index = int(np.searchsorted(edges, position + offset, side="right")) - 1
                if index != current:
                    if split_writer is not None:
                        split_writer.close()
                    current = index
                    split_writer = pq.ParquetWriter(split_paths[index], schema, **options)
                take = min(table.num_rows - offset, edges[index + 1] - (position + offset))
                split_writer.write_table(table.slice(offset, take), row_group_size=row_group_size)
                offset += take
            position += table.num_rows
    if split_writer is not None:
        split_writer.close()
    return {
        "path": str(out),
        "documents": docs,
        "seed": seed,
        "hot_bucket": hot_bucket,
        "near_threshold_share": near_threshold_share,
        "group_share": group_share,
        "sources": source_counts,
        "batches": [str(p) for p in split_paths],
        "bytes": out.stat().st_size,
        "seconds": round(time.perf_counter() - started, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, required=True, help="number of documents N")
    parser.add_argument("--out", required=True, help="output parquet path")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--hot-bucket", type=int, default=0, help="K identical short pages among the N docs")
    parser.add_argument(
        "--near-threshold-share",
        type=float,
        default=DEFAULT_NEAR_THRESHOLD_SHARE,
        help="fraction of documents that are near-threshold variants (each paired with its own original)",
    )
    parser.add_argument(
        "--group-share",
        type=float,
        default=DEFAULT_GROUP_SHARE,
        help="fraction of non-hot documents in planted groups, near-threshold pairs included",
    )
    parser.add_argument("--batches", type=int, default=0, help="also write B doc_id-ordered batch files")
    parser.add_argument("--row-group-size", type=int, default=DEFAULT_ROW_GROUP_SIZE)
    parser.add_argument(
        "--workers",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="worker processes (the output is byte-identical for any value)",
    )
    args = parser.parse_args(argv)
    summary = write_corpus(
        args.out,
        args.docs,
        seed=args.seed,
        hot_bucket=args.hot_bucket,
        near_threshold_share=args.near_threshold_share,
        group_share=args.group_share,
        batches=args.batches,
        row_group_size=args.row_group_size,
        workers=args.workers,
    )
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
