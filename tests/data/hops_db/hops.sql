-- A small database with 2- and 3-hop joins for the per-hop gold and metrics tests (issue 40):
-- Employee -> Department -> Site. Hand-written; the tests compute their expected values by hand from it.
CREATE TABLE Site (
    SiteID INTEGER PRIMARY KEY,
    Name TEXT NOT NULL,
    City TEXT NOT NULL
);
INSERT INTO Site VALUES (1, 'Harbour Works', 'Sydney');
INSERT INTO Site VALUES (2, 'Ridge Campus', 'Melbourne');
CREATE TABLE Department (
    DepartmentID INTEGER PRIMARY KEY,
    Name TEXT NOT NULL,
    SiteID INTEGER NOT NULL REFERENCES Site(SiteID)
);
INSERT INTO Department VALUES (10, 'Design', 1);
INSERT INTO Department VALUES (11, 'Build', 2);
INSERT INTO Department VALUES (12, 'Audit', 2);
CREATE TABLE Employee (
    EmployeeID INTEGER PRIMARY KEY,
    Name TEXT NOT NULL,
    Title TEXT NOT NULL,
    DepartmentID INTEGER NOT NULL REFERENCES Department(DepartmentID)
);
INSERT INTO Employee VALUES (100, 'Ana Silva', 'Architect', 10);
INSERT INTO Employee VALUES (101, 'Ben Okoro', 'Foreman', 11);
INSERT INTO Employee VALUES (102, 'Cy Park', 'Welder', 11);
INSERT INTO Employee VALUES (103, 'Dee Lund', 'Auditor', 12);
