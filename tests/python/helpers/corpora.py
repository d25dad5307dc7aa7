"""Small generated corpora shared by the end-to-end tests."""

import random

import pyarrow as pa

PARAGRAPHS = [
    "Le rapprochement bancaire compare chaque facture émise avec les paiements reçus, signale les écarts "
    "et propose une écriture corrective à l'équipe comptable avant la clôture mensuelle.",
    "Die Größe der Indexsegmente bestimmt, wie schnell neue Dokumente durchsuchbar werden; kleinere "
    "Segmente werden häufiger zusammengeführt, was Schreiblast gegen Aktualität abwägt.",
    "Система маршрутизации инцидентов направляет оповещение дежурной команде, а если никто не ответил за "
    "пять минут, эскалирует его руководителю смены.",
    "東京都の図書館は、毎週土曜日に子ども向けの読み聞かせ会を開いています。参加は無料で、予約は不要です。",
    "تقوم سياسة الاحتفاظ بالبيانات بحذف السجلات القديمة بعد تسعين يوما ما لم تكن مرتبطة بتحقيق مفتوح أو "
    "بطلب قانوني للاحتفاظ.",
    "Η πολιτική διατήρησης ΔΕΔΟΜΕΝΩΝ ορίζει ότι τα αρχεία καταγραφής διαγράφονται μετά από ενενήντα ημέρες.",
    "हमारी सहायता टीम सोमवार से शुक्रवार तक सुबह नौ बजे से शाम छह बजे तक उपलब्ध रहती है।",
    "Promotion of a model to production requires a passing evaluation report, a signed-off fairness "
    "review and a rollback plan that has been rehearsed in the staging environment at least once.",
]


def multilingual_corpus(n_groups=40, seed=9) -> pa.Table:
    """Groups of multilingual pages (an original, some mirrors, some one-word revisions), empty and short
    pages, extra columns, rows shuffled (input order is not doc_id order)."""
    rng = random.Random(seed)
    rows = []
    for g in range(n_groups):
        # every group gets its own text: the paragraphs with a group-specific token every few words
        words = " ".join(rng.sample(PARAGRAPHS, len(PARAGRAPHS))).split()
        body = " ".join(w if i % 4 else f"{w} g{g}x{rng.randrange(10**6)}" for i, w in enumerate(words))
        rows.append((body, "original"))
        if g % 2 == 0:
            rows.append((body, "mirror"))
        if g % 3 == 0:
            words = body.split()
            words[rng.randrange(len(words))] = "MODIFIÉ"
            rows.append((" ".join(words), "revision"))
    rows += [("", "empty"), ("   ", "empty"), ("?!…", "empty"), ("one two", "short"), ("one two", "short")]
    table = pa.table(
        {
            "doc_id": [f"{i:05d}" for i in range(len(rows))],
            "source": [s for _, s in rows],
            "domain": [f"site{i % 7}.example" for i in range(len(rows))],
            "crawled_at": [f"2024-0{1 + i % 9}-1{i % 10} 08:30:00" for i in range(len(rows))],
            "title": [f"Page {i}" for i in range(len(rows))],
            "body": [b for b, _ in rows],
            "url": [f"https://site{i % 7}.example/p/{i}" for i in range(len(rows))],
            "warc_record_offset": list(range(0, 1000 * len(rows), 1000)),
        }
    )
    order = list(range(table.num_rows))
    random.Random(seed).shuffle(order)  # input order is not doc_id order
    return table.take(order)
