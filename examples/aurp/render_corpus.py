"""Render the Aurp document corpus from the database rows (GRAMMAR Appendix G, steps 1-6), deterministically.

- ``corpus/company-profile.md``: the company profile (founding, headquarters, CEO, staff, services);
- ``corpus/employees/employee-<id>.md``: one page per employee (title, department, office, manager);
- ``corpus/clients/client-<id>.md``: one page per client (industry, city, projects by name only);
- ``corpus/projects/project-<id>.md``: one report per project. Some facts appear only here: where the
  project is, when it started and ended, and who managed it.

    python examples/aurp/render_corpus.py       # rewrites examples/aurp/corpus/ from aurp.sql
"""

from __future__ import annotations

import shutil
import sqlite3
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent

PROGRESS = [
    "The structural design went through three review rounds with the client before construction began.",
    "Site conditions required additional geotechnical investigation during the early works.",
    "The team used a federated BIM model so that engineering and architecture changes stayed coordinated.",
    "Sustainability targets were tracked monthly and reported to the client steering group.",
    "A structural health monitoring system was installed to record loads during the first year of use.",
]
OUTCOMES = [
    "The client reported that the handover was smooth and the defects list was short.",
    "Lessons learned were shared with the wider engineering team at the quarterly review.",
    "The project was recognised internally for its close collaboration with local contractors.",
]


def load(dump: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:")
    connection.row_factory = sqlite3.Row
    connection.executescript(dump.read_text(encoding="utf-8"))
    return connection


def company_profile(db: sqlite3.Connection) -> str:
    ceo = db.execute("SELECT Name FROM Employee WHERE ManagerID IS NULL").fetchone()["Name"]
    staff = db.execute("SELECT COUNT(*) FROM Employee").fetchone()[0]
    offices = [r[0] for r in db.execute("SELECT DISTINCT Office FROM Employee ORDER BY Office")]
    departments = [r[0] for r in db.execute("SELECT DISTINCT Department FROM Employee ORDER BY Department")]
    industries = [r[0].lower() for r in db.execute("SELECT DISTINCT Industry FROM Client ORDER BY Industry")]
    return (
        f"# Aurp company profile\n\nAurp is a structural engineering consultancy founded in 2009 and "
        f"headquartered in Melbourne, Australia. Aurp is led by {ceo} and employs {staff} people in offices "
        f"in {', '.join(offices[:-1])} and {offices[-1]}.\n\nAurp offers bespoke architectural solutions, "
        "sustainable urban planning, structural health monitoring, geotechnical advice and digital "
        f"engineering. Its clients work in {', '.join(industries[:-1])} and {industries[-1]}.\n\n"
        f"Aurp is organised around projects. Its departments are {', '.join(departments[:-1])} and "
        f"{departments[-1]}.\n"
    )


def employee_page(db: sqlite3.Connection, row: sqlite3.Row, title_counts: Counter) -> str:
    name = row["Name"]
    article = "a" if title_counts[row["JobTitle"]] > 1 else "the"
    lines = [
        f"# {name}",
        "",
        f"{name} is {article} {row['JobTitle']} at Aurp. {name} works in the "
        f"{row['Department']} department. {name} is based in the {row['Office']} office.",
    ]
    if row["ManagerID"] is None:
        lines[-1] += f" {name} reports to the board of Aurp."
    else:
        manager = db.execute("SELECT Name FROM Employee WHERE EmployeeID = ?", (row["ManagerID"],)).fetchone()
        lines[-1] += f" {name} reports to {manager['Name']}."
    return "\n".join(lines) + "\n"


def client_page(db: sqlite3.Connection, row: sqlite3.Row) -> str:
    name = row["Name"]
    projects = [
        r[0] for r in db.execute("SELECT Name FROM Project WHERE ClientID = ? ORDER BY ProjectID", (row["ClientID"],))
    ]
    delivered = " ".join(f"Aurp delivered {p} for {name}." for p in projects)
    return (
        f"# {name}\n\n{name} is a client of Aurp in the {row['Industry']} industry. {name} is based in "
        f"{row['City']}. {delivered}\n"
    )


def project_report(db: sqlite3.Connection, row: sqlite3.Row) -> str:
    name, pid = row["Name"], row["ProjectID"]
    client = db.execute("SELECT Name FROM Client WHERE ClientID = ?", (row["ClientID"],)).fetchone()["Name"]
    manager = db.execute("SELECT Name FROM Employee WHERE EmployeeID = ?", (row["ManagerID"],)).fetchone()["Name"]
    progress = " ".join(PROGRESS[(pid + i) % len(PROGRESS)] for i in range(2))
    return (
        f"# Project report: {name}\n\n## Summary\n\n{name} was delivered for {client}. {name} is located in "
        f"{row['Location']}. {name} started on {row['StartDate']}. {name} was completed on {row['EndDate']}. "
        f"The project manager of {name} was {manager}.\n\n## Progress\n\n{progress}\n\n## Outcome\n\n"
        f"{OUTCOMES[pid % len(OUTCOMES)]}\n"
    )


def render(dump: Path, out: Path) -> int:
    """Write every document under ``out`` (replacing it); returns how many."""
    db = load(dump)
    if out.exists():
        shutil.rmtree(out)
    files: dict[str, str] = {"company-profile.md": company_profile(db)}
    titles = Counter(r[0] for r in db.execute("SELECT JobTitle FROM Employee"))
    for row in db.execute("SELECT * FROM Employee ORDER BY EmployeeID"):
        files[f"employees/employee-{row['EmployeeID']}.md"] = employee_page(db, row, titles)
    for row in db.execute("SELECT * FROM Client ORDER BY ClientID"):
        files[f"clients/client-{row['ClientID']}.md"] = client_page(db, row)
    for row in db.execute("SELECT * FROM Project ORDER BY ProjectID"):
        files[f"projects/project-{row['ProjectID']}.md"] = project_report(db, row)
    for name, text in files.items():
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return len(files)


if __name__ == "__main__":
    count = render(HERE / "aurp.sql", HERE / "corpus")
    print(f"wrote {count} documents to {HERE / 'corpus'}")
