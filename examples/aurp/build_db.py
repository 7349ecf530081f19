"""Build the Aurp database (GRAMMAR Appendix G, Table 5 scale) and write it as the SQL dump ``aurp.sql``.

Aurp is a fictitious structural-engineering consultancy. Three tables, 14 attributes, 49 rows:
Project (6 attributes, 10 rows), Employee (5 attributes, 29 rows), Client (3 attributes, 10 rows).
Everything is written out below, so the dump is byte-for-byte reproducible:

    python examples/aurp/build_db.py            # rewrites examples/aurp/aurp.sql
    python examples/aurp/build_db.py --db x.db  # also writes a SQLite file
"""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

HERE = Path(__file__).resolve().parent

SCHEMA = """
CREATE TABLE Client (
    ClientID INTEGER PRIMARY KEY,
    Name TEXT NOT NULL,
    Industry TEXT NOT NULL,
    City TEXT NOT NULL
);
CREATE TABLE Employee (
    EmployeeID INTEGER PRIMARY KEY,
    Name TEXT NOT NULL,
    JobTitle TEXT NOT NULL,
    Department TEXT NOT NULL,
    Office TEXT NOT NULL,
    ManagerID INTEGER REFERENCES Employee(EmployeeID)
);
CREATE TABLE Project (
    ProjectID INTEGER PRIMARY KEY,
    Name TEXT NOT NULL,
    Location TEXT NOT NULL,
    StartDate TEXT NOT NULL,
    EndDate TEXT NOT NULL,
    ClientID INTEGER NOT NULL REFERENCES Client(ClientID),
    ManagerID INTEGER NOT NULL REFERENCES Employee(EmployeeID)
);
"""

CLIENTS = [
    (1, "Northwind Technologies", "Technology", "Melbourne"),
    (2, "Harbourview Properties", "Real Estate", "Sydney"),
    (3, "Azure Coast Hotels", "Hospitality", "Gold Coast"),
    (4, "St Aurelia Health", "Healthcare", "Brisbane"),
    (5, "Kestrel Logistics", "Logistics", "Adelaide"),
    (6, "Alpenrose Holdings", "Finance", "Zürich"),
    (7, "Redgum Energy", "Energy", "Perth"),
    (8, "Bluewattle University", "Education", "Canberra"),
    (9, "Ironbark Mining", "Mining", "Kalgoorlie"),
    (10, "Silverleaf Retail", "Retail", "Hobart"),
]

EMPLOYEES = [
    (1, "Eleanor Vance", "Chief Executive Officer", "Executive", "Melbourne", None),
    (2, "Marcus Hale", "Chief Operating Officer", "Executive", "Melbourne", 1),
    (3, "Priya Raman", "Head of Structural Engineering", "Structural Engineering", "Melbourne", 1),
    (4, "Liam O'Brien", "Head of Project Management", "Project Management", "Sydney", 2),
    (5, "Sofía Martínez", "Head of Sustainability", "Sustainability", "Brisbane", 1),
    (6, "Daniel Okafor", "Head of Digital Engineering", "Digital Engineering", "Melbourne", 2),
    (7, "Grace Whitfield", "Operations Manager", "Operations", "Melbourne", 2),
    (8, "Tomas Novak", "Senior Structural Engineer", "Structural Engineering", "Melbourne", 3),
    (9, "Hannah Lindqvist", "Senior Structural Engineer", "Structural Engineering", "Sydney", 3),
    (10, "Arjun Mehta", "Structural Engineer", "Structural Engineering", "Melbourne", 8),
    (11, "Chloe Bennett", "Structural Engineer", "Structural Engineering", "Sydney", 9),
    (12, "Oliver Grant", "Graduate Engineer", "Structural Engineering", "Melbourne", 8),
    (13, "Mei Chen", "Senior Project Manager", "Project Management", "Sydney", 4),
    (14, "Jack Thornton", "Project Manager", "Project Management", "Melbourne", 4),
    (15, "Amelia Rossi", "Project Manager", "Project Management", "Brisbane", 4),
    (16, "Noah Williams", "Project Director", "Project Management", "Melbourne", 4),
    (17, "Isla Fraser", "Project Coordinator", "Project Management", "Sydney", 13),
    (18, "Ethan Clarke", "Sustainability Consultant", "Sustainability", "Brisbane", 5),
    (19, "Zara Ahmed", "Sustainability Analyst", "Sustainability", "Melbourne", 5),
    (20, "Lucas Moreau", "BIM Manager", "Digital Engineering", "Melbourne", 6),
    (21, "Ava Kowalski", "Structural Health Monitoring Specialist", "Digital Engineering", "Sydney", 6),
    (22, "Samuel Park", "Data Engineer", "Digital Engineering", "Melbourne", 20),
    (23, "Ruby Nguyen", "Urban Planner", "Sustainability", "Sydney", 5),
    (24, "Henry Adeyemi", "Geotechnical Engineer", "Structural Engineering", "Brisbane", 3),
    (25, "Charlotte Dubois", "Architectural Liaison", "Project Management", "Melbourne", 16),
    (26, "William Foster", "Finance Manager", "Operations", "Melbourne", 7),
    (27, "Emily Sato", "Human Resources Manager", "Operations", "Melbourne", 7),
    (28, "James McAllister", "IT Administrator", "Operations", "Sydney", 7),
    (29, "Olivia Brandt", "Office Administrator", "Operations", "Brisbane", 7),
]

PROJECTS = [
    (1, "Innovation Precinct Tower", "Carlton", "2019-03-04", "2021-08-27", 1, 14),
    (2, "Harbourside Residences", "Pyrmont", "2018-07-16", "2020-11-30", 2, 13),
    (3, "Coral Bay Resort Refurbishment", "Surfers Paradise", "2020-02-10", "2021-06-18", 3, 15),
    (4, "St Aurelia Hospital Wing", "South Brisbane", "2017-09-01", "2020-03-13", 4, 15),
    (5, "Kestrel Distribution Hub", "Port Adelaide", "2021-01-18", "2022-05-20", 5, 14),
    (6, "Alpenrose Headquarters Retrofit", "Zürich", "2019-10-07", "2022-02-25", 6, 13),
    (7, "Redgum Solar Farm Structures", "Geraldton", "2020-06-15", "2021-12-10", 7, 16),
    (8, "Bluewattle Library Extension", "Acton", "2018-02-26", "2019-09-06", 8, 13),
    (9, "Ironbark Processing Plant", "Kambalda", "2016-05-09", "2018-10-19", 9, 14),
    (10, "Silverleaf Flagship Store", "Hobart", "2022-03-07", "2023-04-14", 10, 15),
]


def build(connection: sqlite3.Connection) -> None:
    """Create the tables and insert every row."""
    connection.executescript(SCHEMA)
    connection.executemany("INSERT INTO Client VALUES (?, ?, ?, ?)", CLIENTS)
    connection.executemany("INSERT INTO Employee VALUES (?, ?, ?, ?, ?, ?)", EMPLOYEES)
    connection.executemany("INSERT INTO Project VALUES (?, ?, ?, ?, ?, ?, ?)", PROJECTS)
    connection.commit()


def dump() -> str:
    """The SQL text dump of the database (deterministic)."""
    connection = sqlite3.connect(":memory:")
    build(connection)
    header = "-- Aurp (GRAMMAR Appendix G): generated by examples/aurp/build_db.py; do not edit by hand.\n"
    return header + "\n".join(connection.iterdump()) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, help="Also write a SQLite database file here.")
    args = parser.parse_args()
    (HERE / "aurp.sql").write_text(dump(), encoding="utf-8")
    print(f"wrote {HERE / 'aurp.sql'}")
    if args.db:
        args.db.unlink(missing_ok=True)
        connection = sqlite3.connect(args.db)
        build(connection)
        connection.close()
        print(f"wrote {args.db}")


if __name__ == "__main__":
    main()
