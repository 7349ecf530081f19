"""Write ``labels.jsonl``: a small labelled set of correct and deliberately corrupted Aurp answers.

Each row is one answer to one Aurp question (filled from ``templates.yaml``, its true value read from
``aurp.sql`` by the template's SQL), with the context a retriever would return (the entity's document and a
neighbouring document of the same kind) and a human-style label:

- ``verbatim`` (correct): the document's own sentence;
- ``paraphrase`` (correct): the same fact in other words (dates written out), as an LLM would answer;
- ``wrong_entity`` (incorrect): another row's value, taken from the neighbouring document when it has one, so
  the wrong value is in the context;
- ``wrong_number`` (incorrect, date questions): the date shifted by a year and a few days;
- ``unsupported`` (incorrect): the verbatim answer plus a claim that no document supports.

The set is deterministic (sorted rows, one seeded ``random.Random``): running this script again writes the same
bytes. It is used to choose the offline lexical fact-checker's default threshold (``choose_threshold.py``) and
by the tests of ``ragassay meta-eval``. Run from the repository root: ``python examples/aurp/make_labels.py``.
"""

from __future__ import annotations

import datetime
import json
import random
import sqlite3
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
OUT = HERE / "labels.jsonl"
SEED = 0

# template id -> (table, entities sampled, verbatim answer, paraphrase); {n} the entity's name, {v} the value,
# {d} the value as a written-out date.
ANSWERS = {
    "project_location": ("Project", 6, "{n} is located in {v}.", "The {n} site is in {v}."),
    "project_start": ("Project", 6, "{n} started on {v}.", "Work on {n} began on {d}."),
    "project_end": ("Project", 6, "{n} was completed on {v}.", "{n} was finished on {d}."),
    "project_client": ("Project", 6, "{n} was delivered for {v}.", "The client behind {n} was {v}."),
    "project_manager": ("Project", 6, "The project manager of {n} was {v}.", "{v} managed the {n} project."),
    "employee_title": ("Employee", 5, "{n} is the {v} at Aurp.", "At Aurp, {n} holds the role of {v}."),
    "employee_department": ("Employee", 5, "{n} works in the {v} department.", "{n} is part of the {v} team."),
    "employee_office": ("Employee", 5, "{n} is based in the {v} office.", "{n} works out of Aurp's {v} office."),
    "employee_manager": ("Employee", 5, "{n} reports to {v}.", "{n}'s line manager is {v}."),
    "client_industry": ("Client", 5, "{n} is a client of Aurp in the {v} industry.", "{n} operates in {v}."),
    "client_city": ("Client", 5, "{n} is based in {v}.", "{n} has its base in {v}."),
}
UNSUPPORTED = [
    "It won a national engineering award in 2022.",
    "The work was finished three months ahead of schedule.",
    "It was Aurp's largest contract that year.",
    "The team grew to forty engineers during the work.",
    "It was featured in an international design magazine.",
    "The budget was 12 million dollars.",
]
KEYS = {"Project": "ProjectID", "Employee": "EmployeeID", "Client": "ClientID"}


def load_db() -> sqlite3.Connection:
    """The Aurp database, from its SQL dump."""
    db = sqlite3.connect(":memory:")
    db.row_factory = sqlite3.Row
    db.executescript((HERE / "aurp.sql").read_text(encoding="utf-8"))
    return db


def written_date(iso: str) -> str:
    """``2019-03-04`` -> ``4 March 2019``."""
    day = datetime.date.fromisoformat(iso)
    return f"{day.day} {day.strftime('%B')} {day.year}"


def shifted_date(iso: str, rng: random.Random) -> str:
    """A wrong date: a year later and 1-20 days off."""
    day = datetime.date.fromisoformat(iso)
    return (day.replace(year=day.year + 1) + datetime.timedelta(days=rng.randint(1, 20))).isoformat()


def document(table: str, row: sqlite3.Row, layout: dict[str, str]) -> tuple[str, str]:
    """(document id, text) of the corpus document that states ``row``'s facts."""
    doc_id = layout[table].format(**{KEYS[table]: row[KEYS[table]]})
    return doc_id, (HERE / doc_id).read_text(encoding="utf-8").strip()


def truth(db: sqlite3.Connection, sql: str, table: str, name: str) -> str | None:
    """The template's answer for the entity ``name`` (None when the database has none, e.g. no manager)."""
    found = db.execute(sql.replace(f"[{table}.Name]", name.replace("'", "''"))).fetchall()
    return found[0][0] if len(found) == 1 else None


def question_rows(template: dict, db, layout, rng: random.Random) -> list[dict]:
    """The labelled answers of one template's questions."""
    table, count, verbatim, paraphrase = ANSWERS[template["id"]]
    rows = db.execute(f"SELECT * FROM {table} ORDER BY {KEYS[table]}").fetchall()
    text = template["texts"][0]["text"]
    out = []
    for row in rng.sample(rows, len(rows)):
        value = truth(db, template["sql"], table, row["Name"])
        if value is None:
            continue
        neighbour = rows[(rows.index(row) + 1) % len(rows)]
        qid = f"{template['id']}:{row[KEYS[table]]}"
        question = text.replace(f"[{table}.Name]", row["Name"])
        context = [document(table, row, layout), document(table, neighbour, layout)]
        out += answers(qid, question, context, row["Name"], value, (verbatim, paraphrase), db, template, rng)
        if len(out) >= 4 * count:
            break
    return out


def wrong_value(db, template: dict, table: str, name: str, value: str, neighbour_first: list) -> str:
    """Another entity's value for the same question, the context's neighbour first."""
    for other in neighbour_first:
        candidate = truth(db, template["sql"], table, other["Name"])
        if candidate is not None and candidate != value:
            return candidate
    raise ValueError(f"no wrong value for {template['id']} {name}")


def answers(qid, question, context, name, value, phrasing, db, template, rng) -> list[dict]:
    """The four labelled answers of one question."""
    table = ANSWERS[template["id"]][0]
    verbatim, paraphrase = phrasing
    is_date = template["id"] in ("project_start", "project_end")
    fill = {"n": name, "v": value, "d": written_date(value) if is_date else value}
    right = verbatim.format(**fill)
    if is_date:
        wrong_kind, wrong = "wrong_number", shifted_date(value, rng)
    else:
        rows = db.execute(f"SELECT * FROM {table} ORDER BY {KEYS[table]}").fetchall()
        start = next(i for i, r in enumerate(rows) if r["Name"] == name) + 1
        wrong_kind = "wrong_entity"
        wrong = wrong_value(db, template, table, name, value, rows[start:] + rows[:start])
    variants = [
        ("verbatim", right, True, "the document's own statement"),
        ("paraphrase", paraphrase.format(**fill), True, "the same fact in other words"),
        (wrong_kind, verbatim.format(**{**fill, "v": wrong}), False, f"says {wrong}; the database says {value}"),
        ("unsupported", f"{right} {rng.choice(UNSUPPORTED)}", False, "adds a claim no document supports"),
    ]
    return [
        {
            "question_id": qid,
            "system": kind,
            "question": question,
            "answer": answer,
            "context_ids": [doc_id for doc_id, _ in context],
            "context": [text for _, text in context],
            "reference_answer": value,
            "label": "correct" if correct else "incorrect",
            "note": note,
        }
        for kind, answer, correct, note in variants
    ]


def build() -> list[dict]:
    """Every labelled row, in a fixed order."""
    spec = yaml.safe_load((HERE / "templates.yaml").read_text(encoding="utf-8"))
    db = load_db()
    rng = random.Random(SEED)
    rows: list[dict] = []
    for template in spec["templates"]:
        if template["id"] in ANSWERS:
            rows += question_rows(template, db, spec["documents"], rng)
    return rows


def main() -> None:
    rows = build()
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"wrote {len(rows)} labelled answers ({len(rows) // 4} questions) to {OUT}")


if __name__ == "__main__":
    main()
