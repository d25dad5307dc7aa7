"""Test data for the WARC input: real-looking HTML pages written into WARC files by hand.

The writer follows the WARC/1.1 format itself (version line, headers, Content-Length of the block, two
CRLFs) and compresses each record as its own gzip member, recording every member's offset and length as
it writes them: the tests compare the model's lineage with these figures, not with anything the code
under test computed.  Pages cover several charsets (UTF-8, windows-1251 declared in HTTP, Shift_JIS and
ISO-8859-1 declared only in <meta>, UTF-8 declared nowhere, a gzip Content-Encoding), plus a near-duplicate
of one article on another site, a 404, a PDF, a revisit, request and warcinfo records, a record whose
block is truncated, garbage between members and a gzip member cut short at the end of a file.
"""

from __future__ import annotations

import csv
import gzip
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ARTICLE = (
    "The harbour bridge reopened to traffic on Monday morning after six months of repairs to its steel "
    "deck and cable anchors. Engineers replaced more than four hundred corroded bolts, resurfaced both "
    "carriageways and installed a new drainage channel that should stop water pooling at the southern "
    "end during winter storms. The city council said the work finished two weeks ahead of schedule and "
    "slightly under the approved budget, which had been raised once after inspectors found cracks in two "
    "of the original support brackets. Bus routes that were diverted through the industrial estate return "
    "to their usual stops from Tuesday, and the temporary ferry service will run until the end of the "
    "month for residents who have grown used to it. Cyclists get a separated lane on the eastern side, "
    "protected by a low concrete kerb, and the pedestrian walkway has been widened by half a metre. A "
    "monitoring system with strain gauges on each cable will report to the maintenance office every "
    "hour, so that small problems are found long before they require another closure of this size."
)


def _page(title: str, nav: str, main: str, footer: str, head_extra: str = "") -> str:
    return (
        "<!DOCTYPE html>\n<html>\n<head>\n"
        f"{head_extra}<title>{title}</title>\n"
        '<link rel="stylesheet" href="/static/site.css">\n'
        "<script>window.analytics = {queue: []};</script>\n"
        "</head>\n<body>\n"
        f'<header><nav class="menu">{nav}</nav></header>\n'
        f"<main><article><h1>{title.split(' – ')[0]}</h1>\n{main}\n</article></main>\n"
        f"<footer>{footer}</footer>\n</body>\n</html>\n"
    )


def _paragraphs(text: str) -> str:
    sentences = text.split(". ")
    return "\n".join(f"<p>{'. '.join(sentences[i : i + 3])}.</p>" for i in range(0, len(sentences), 3))


NEWS_NAV = (
    '<a href="/">Home</a> <a href="/city">City</a> <a href="/sport">Sport</a> <a href="/weather">Weather</a>'
)
MIRROR_NAV = '<a href="/">Start</a> <a href="/archive">Archive</a> <a href="/about">About us</a>'

RUSSIAN_TITLE = "Новая станция метро открылась в центре города"
RUSSIAN_MAIN = (
    "Новая станция метро «Набережная» открылась в субботу утром. В первый день ею воспользовались более "
    "двадцати тысяч пассажиров. Станция соединена подземным переходом с железнодорожным вокзалом, а на "
    "выходах установлены лифты для людей с ограниченными возможностями. Строительство заняло четыре года "
    "и обошлось городу дешевле, чем планировалось. Поезда ходят с интервалом три минуты в часы пик."
)
JAPANESE_TITLE = "東京の図書館で読み聞かせ会"
JAPANESE_MAIN = (
    "東京都の中央図書館は、毎週土曜日の午前十時から子ども向けの読み聞かせ会を開いています。"
    "参加は無料で、予約は必要ありません。絵本のほかに昔話や科学の本も紹介され、"
    "保護者向けには本の選び方についての短い講座もあります。会場は二階の児童室です。"
)
FRENCH_TITLE = "Café de la gare : les horaires d'été"
FRENCH_MAIN = (
    "Le café de la gare ouvre désormais à six heures et demie du matin pendant tout l'été. Les "
    "voyageurs trouveront des croissants frais, du thé glacé et une sélection de journaux régionaux. "
    "La terrasse, rénovée au printemps, accueille quarante personnes à l'ombre des platanes. Le "
    "propriétaire rappelle que les réservations de groupe se font par téléphone la veille."
)
GERMAN_TITLE = "Öffnungszeiten der Bücherei im Sommer"
GERMAN_MAIN = (
    "Die Stadtbücherei öffnet in den Sommerferien montags bis freitags von zehn bis achtzehn Uhr. "
    "Größere Gruppen melden sich bitte vorher an. Für Kinder gibt es eine Leseförderung mit Urkunde, "
    "und im Lesecafé werden Getränke und kleine Snacks angeboten. Die Rückgabe über den Außenautomaten "
    "ist rund um die Uhr möglich."
)
GARDEN_TITLE = "Watering tomatoes in a dry summer"
GARDEN_MAIN = (
    "Tomatoes need deep watering two or three times a week rather than a light sprinkle every day. Water "
    "the soil, not the leaves, early in the morning so that the plants have moisture during the hottest "
    "hours. A layer of straw mulch keeps the ground cool and slows evaporation, and a simple drip line "
    "made from an old hose can halve the amount of water you use over a season."
)
SPANISH_TITLE = "Horario de verano de la piscina municipal"
SPANISH_MAIN = (
    "La piscina municipal abrirá todos los días de junio a septiembre desde las diez de la mañana hasta "
    "las ocho de la tarde. Los menores de catorce años deberán ir acompañados de un adulto. El precio de "
    "la entrada no cambia y los abonos de temporada se venden en la taquilla y por internet."
)


@dataclass
class Written:
    """What the writer put at one place of one file, and what the model should make of it."""

    filename: str  # relative to the corpus folder
    offset: int
    length: int
    kind: str  # expected status
    warc_type: str | None = None
    record_id: str | None = None
    url: str | None = None
    title: str | None = None
    text: str | None = None  # a phrase the extracted body must contain
    http_status: int | None = None
    content_digest: str | None = None
    charset: str | None = None
    in_range_table: bool = True


@dataclass
class Corpus:
    folder: Path
    written: list[Written] = field(default_factory=list)

    def extracted(self) -> list[Written]:
        return [w for w in self.written if w.kind == "extracted"]


def warc_record(warc_type: str, url: str | None, block: bytes, date: str, extra: dict | None = None) -> bytes:
    """One WARC/1.1 record: version line, headers, blank line, block, two CRLFs."""
    headers = {
        "WARC-Type": warc_type,
        "WARC-Record-ID": f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, f'{warc_type} {url} {date}')}>",
        "WARC-Date": date,
    }
    if url:
        headers["WARC-Target-URI"] = url
    headers.update(extra or {})
    headers["Content-Length"] = str(len(block))
    head = "WARC/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    return head.encode("utf-8") + block + b"\r\n\r\n"


def http_response(status: str, content_type: str | None, payload: bytes, extra: dict | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status}", "Server: nginx", f"Content-Length: {len(payload)}"]
    if content_type:
        lines.append(f"Content-Type: {content_type}")
    lines += [f"{k}: {v}" for k, v in (extra or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload


class Writer:
    """Appends records to one WARC file, each as its own gzip member (or plain), noting offsets."""

    def __init__(self, corpus: Corpus, name: str, compress: bool = True):
        self.corpus, self.name, self.compress = corpus, name, compress
        self.path = corpus.folder / name
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_bytes(b"")

    def _append(self, data: bytes) -> tuple[int, int]:
        offset = self.path.stat().st_size
        with self.path.open("ab") as handle:
            handle.write(data)
        return offset, len(data)

    def record(
        self, kind: str, warc_type: str, url: str | None, block: bytes, date: str, **expected
    ) -> Written:
        extra = expected.pop("headers", None)
        record = warc_record(warc_type, url, block, date, extra)
        data = gzip.compress(record, mtime=0) if self.compress else record
        offset, length = self._append(data)
        record_id = record.split(b"WARC-Record-ID: ")[1].split(b"\r\n")[0].decode()
        digest = (extra or {}).get("WARC-Payload-Digest")
        written = Written(
            self.name, offset, length, kind, warc_type, record_id, url, content_digest=digest, **expected
        )
        self.corpus.written.append(written)
        return written

    def raw(self, kind: str, data: bytes, in_range_table: bool = True) -> Written:
        offset, length = self._append(data)
        written = Written(self.name, offset, length, kind, in_range_table=in_range_table)
        self.corpus.written.append(written)
        return written


def html_response(
    writer: Writer,
    url: str,
    date: str,
    title: str,
    html: str,
    encoding: str,
    content_type: str,
    text: str,
    charset: str,
    http_extra: dict | None = None,
    compress_payload: bool = False,
) -> Written:
    payload = html.encode(encoding)
    if compress_payload:
        payload = gzip.compress(payload, mtime=0)
    digest = f"sha1:{uuid.uuid5(uuid.NAMESPACE_URL, url).hex[:32].upper()}"
    return writer.record(
        "extracted",
        "response",
        url,
        http_response("200 OK", content_type, payload, http_extra),
        date,
        headers={"Content-Type": "application/http; msgtype=response", "WARC-Payload-Digest": digest},
        title=title,
        text=text,
        http_status=200,
        charset=charset,
    )


def build_corpus(folder: Path) -> Corpus:
    """Three files under ``folder``: crawl-a.warc.gz, sub/crawl-b.warc.gz and crawl-c.warc (plain)."""
    corpus = Corpus(folder)
    a = Writer(corpus, "crawl-a.warc.gz")
    info = b"software: hand-written test writer\r\nformat: WARC File Format 1.1\r\n"
    a.record(
        "skipped_other_type",
        "warcinfo",
        None,
        info,
        "2024-03-01T09:59:00Z",
        headers={"Content-Type": "application/warc-fields"},
    )
    news_url = "https://news.example/2024/03/harbour-bridge-reopens"
    a.record(
        "skipped_request",
        "request",
        news_url,
        b"GET /2024/03/harbour-bridge-reopens HTTP/1.1\r\nHost: news.example\r\n\r\n",
        "2024-03-01T10:00:00Z",
        headers={"Content-Type": "application/http; msgtype=request"},
    )
    news_title = "Harbour bridge reopens after six months of repairs – City News"
    html_response(
        a,
        news_url,
        "2024-03-01T10:00:00Z",
        news_title,
        _page(news_title, NEWS_NAV, _paragraphs(ARTICLE), "© 2024 City News. All rights reserved."),
        "utf-8",
        "text/html; charset=utf-8",
        "four hundred corroded bolts",
        "utf-8",
    )
    html_response(
        a,
        "http://ru.example/novosti/metro?id=7",
        "2024-03-01T10:01:00.123456Z",
        RUSSIAN_TITLE,
        _page(
            RUSSIAN_TITLE,
            '<a href="/">Главная</a> <a href="/news">Новости</a>',
            _paragraphs(RUSSIAN_MAIN),
            "Все права защищены",
        ),
        "windows-1251",
        "text/html; charset=windows-1251",
        "более двадцати тысяч пассажиров",
        "cp1251",
    )
    html_response(
        a,
        "https://www.tokyo-lib.example:8443/events/yomikikase.html",
        "2024-03-01T10:02:00Z",
        JAPANESE_TITLE,
        _page(
            JAPANESE_TITLE,
            '<a href="/">ホーム</a> <a href="/events">イベント</a>',
            f"<p>{JAPANESE_MAIN}</p>",
            "東京都立図書館",
            head_extra='<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">\n',
        ),
        "shift_jis",
        "text/html",
        "読み聞かせ会を開いています",
        "shift_jis",
    )
    a.record(
        "skipped_status",
        "response",
        "https://news.example/2024/03/missing-page",
        http_response("404 Not Found", "text/html; charset=utf-8", b"<html><title>Not found</title></html>"),
        "2024-03-01T10:03:00Z",
        headers={"Content-Type": "application/http; msgtype=response"},
        http_status=404,
    )
    a.record(
        "skipped_non_html",
        "response",
        "https://news.example/files/bridge-report.pdf",
        http_response(
            "200 OK", "application/pdf", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj << >> endobj\n%%EOF\n"
        ),
        "2024-03-01T10:04:00Z",
        headers={"Content-Type": "application/http; msgtype=response"},
        http_status=200,
    )
    a.record(
        "skipped_revisit",
        "revisit",
        news_url,
        http_response("200 OK", "text/html; charset=utf-8", b""),
        "2024-03-08T10:00:00Z",
        headers={
            "Content-Type": "application/http; msgtype=response",
            "WARC-Profile": "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest",
            "WARC-Refers-To-Target-URI": news_url,
            "WARC-Refers-To-Date": "2024-03-01T10:00:00Z",
        },
    )

    b = Writer(corpus, "sub/crawl-b.warc.gz")
    mirror_title = "Harbour bridge reopens after six months of repairs – Mirror Archive"
    html_response(
        b,
        "https://mirror.example/news/harbour-bridge",
        "2024-03-02T08:00:00Z",
        mirror_title,
        _page(
            mirror_title,
            MIRROR_NAV,
            _paragraphs(ARTICLE.replace("Monday morning", "Monday")),
            "Mirrored for archival purposes.",
        ),
        "utf-8",
        "text/html; charset=UTF-8",
        "four hundred corroded bolts",
        "utf-8",
    )
    html_response(
        b,
        "http://cafe.example/horaires",
        "2024-03-02T08:01:00Z",
        FRENCH_TITLE,
        _page(
            FRENCH_TITLE,
            '<a href="/">Accueil</a> <a href="/menu">Menu</a>',
            _paragraphs(FRENCH_MAIN),
            "Café de la gare, place de la Libération",
            head_extra='<meta charset="iso-8859-1">\n',
        ),
        "iso-8859-1",
        "text/html",
        "pendant tout l'été",
        "cp1252",  # WHATWG: iso-8859-1 is decoded as windows-1252
    )
    # garbage between two members: one error span, reading resumes at the next member
    b.raw("error", b"this is not a gzip member\n" * 3, in_range_table=False)
    html_response(
        b,
        "https://buecherei.example/oeffnungszeiten",
        "2024-03-02T08:02:00Z",
        GERMAN_TITLE,
        _page(
            GERMAN_TITLE,
            '<a href="/">Start</a> <a href="/katalog">Katalog</a>',
            _paragraphs(GERMAN_MAIN),
            "Stadtbücherei",
        ),
        "utf-8",
        "text/html",
        "Größere Gruppen melden sich bitte vorher an",
        "utf-8",
    )
    html_response(
        b,
        "https://garden.example/tomatoes",
        "2024-03-02T08:03:00Z",
        GARDEN_TITLE,
        _page(
            GARDEN_TITLE,
            '<a href="/">Home</a> <a href="/veg">Vegetables</a>',
            _paragraphs(GARDEN_MAIN),
            "Garden Club",
        ),
        "utf-8",
        "text/html; charset=utf-8",
        "straw mulch keeps the ground cool",
        "utf-8",
        http_extra={"Content-Encoding": "gzip"},
        compress_payload=True,
    )
    # a record whose block is shorter than its Content-Length, in a complete gzip member
    full = warc_record(
        "response",
        "https://news.example/2024/03/cut-short",
        http_response("200 OK", "text/html", b"<html><title>Cut</title><p>" + b"x " * 400 + b"</p></html>"),
        "2024-03-02T08:04:00Z",
        {"Content-Type": "application/http; msgtype=response"},
    )
    b.raw("error", gzip.compress(full[:300], mtime=0))
    # a gzip member cut in half at the end of the file
    html = _page("Last page", "", "<p>never complete</p>", "")
    last = warc_record(
        "response",
        "https://news.example/last",
        http_response("200 OK", "text/html", html.encode()),
        "2024-03-02T08:05:00Z",
    )
    member = gzip.compress(last, mtime=0)
    b.raw("error", member[: len(member) // 2])

    c = Writer(corpus, "crawl-c.warc", compress=False)
    html_response(
        c,
        "https://piscina.example/horario",
        "2024-03-03T12:00:00Z",
        SPANISH_TITLE,
        _page(SPANISH_TITLE, '<a href="/">Inicio</a>', _paragraphs(SPANISH_MAIN), "Ayuntamiento"),
        "utf-8",
        "text/html; charset=utf-8",
        "acompañados de un adulto",
        "utf-8",
    )
    c.record(
        "skipped_other_type",
        "metadata",
        "https://piscina.example/horario",
        b"via: https://piscina.example/\r\n",
        "2024-03-03T12:00:01Z",
        headers={"Content-Type": "application/warc-fields"},
    )
    return corpus


def write_ranges_csv(corpus: Corpus, path: Path) -> Path:
    """The Common Crawl index's columns for every written span that a range table would list."""
    with path.open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["url", "warc_filename", "warc_record_offset", "warc_record_length"])
        for w in corpus.written:
            if w.in_range_table:
                out.writerow([w.url or "", w.filename, w.offset, w.length])
    return path
