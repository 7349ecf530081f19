"""``compare --labelled`` on the labels that count on each run (:func:`ragassay.labels.reuse.reusable_labels`):
labels an active queue drew are estimated with ``ppi_active_mean``; a label whose answer changed is stale (not
used, counted); a run with the same answers decides on another run's labels; a labels file without digests works
for its own run only; random and active labels in one comparison are exit 2."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from ragassay.analysis.ppi import ppi_active_mean, ppi_mean
from ragassay.cli.main import cli
from ragassay.labels import Label, load_rubric, write_jsonl
from ragassay.labels.queue import run_items
from ragassay.results import read_labels, read_run
from ragassay.store import open_store, store_url

from written_runs import write_run

N, BUDGET, CHANGED = 80, 40, 10
ONE, SAME, OTHER = "run-one", "run-same", "run-changed"


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "80"})


def planted() -> dict[str, np.ndarray]:
    """People's truth per system (b better), the metric (a judge that errs), and which answers a judge scored."""
    rng = np.random.default_rng(11)
    truth = {"a": rng.random(N) < 0.5, "b": rng.random(N) < 0.75}
    metric = {s: np.where(rng.random(N) < 0.2, ~truth[s], truth[s]).astype(float) for s in truth}
    scored = {s: rng.random(N) < 0.5 for s in truth}  # the rest: unscored, most uncertain for the active queue
    return {"truth": truth, "metric": metric, "scored": scored}


def cells(values, system: str, answers=None) -> list[dict]:
    out = []
    for i in range(N):
        judge = bool(values["metric"][system][i]) if values["scored"][system][i] else None
        cell = {"metrics": {"m": float(values["metric"][system][i])}, "judges": {"j": judge}}
        if answers is not None:
            cell["answer"] = answers(i)
        out.append(cell)
    return out


def write_runs(path, values) -> None:
    """run-one; run-same (the same answers); run-changed (b's first CHANGED answers differ)."""
    for run_id, changed in ((ONE, 0), (SAME, 0), (OTHER, CHANGED)):
        systems = {
            "a": cells(values, "a"),
            "b": cells(values, "b", lambda i, c=changed: f"b says q{i:03d}" + (" (new)" if i < c else "")),
        }
        store, _ = write_run(path, systems, run_id=run_id)
        store.close()


def random_labels(values, count: int = 40) -> list[Label]:
    return [
        Label(run_id=ONE, sample_id=f"q{i:03d}", system=s, rubric="correct", rubric_version=1, annotator="ann",
              value=float(values["truth"][s][i]), labelled_at=float(i))
        for i in range(count) for s in ("a", "b")
    ]  # fmt: skip


@pytest.fixture
def random_db(tmp_path):
    values = planted()
    path = tmp_path / "r.db"
    write_runs(path, values)
    store = open_store(store_url(str(path), tmp_path))
    store.add_labels(random_labels(values))
    store.close()
    return str(path), values


def compare(db: str, run: str, *args: str) -> dict:
    result = invoke("compare", "--db", db, run, "--labelled", "m=correct", "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_active_labels_are_estimated_with_the_active_estimator(tmp_path):
    values = planted()
    path = tmp_path / "r.db"
    write_runs(path, values)
    url = store_url(str(path), tmp_path)
    store = open_store(url)
    items = run_items(read_run(store, ONE), load_rubric("correct"), sample=BUDGET, seed=5, order="active")
    store.close()
    assert len({round(x.probability, 9) for x in items}) > 1  # the queue drew with unequal probabilities
    drawn = [
        Label(run_id=ONE, sample_id=x.sample_id, system=x.system, rubric="correct", rubric_version=1, annotator="ann",
              value=float(values["truth"][x.system][int(x.sample_id[1:])]), labelled_at=float(k),
              probability=x.probability)
        for k, x in enumerate(items)
    ]  # fmt: skip
    write_jsonl(drawn, tmp_path / "active.jsonl")
    imported = invoke("labels", "import", str(tmp_path / "active.jsonl"), "--db", str(path))
    assert imported.exit_code == 0, imported.output
    data = compare(str(path), ONE)
    store = open_store(url)
    stored = {(x.system, x.sample_id): (x.value, x.probability) for x in read_labels(store, ONE)}
    store.close()
    f = values["metric"]["b"] - values["metric"]["a"]
    truth, probs = [], []
    for i in range(N):
        a, b = stored.get(("a", f"q{i:03d}")), stored.get(("b", f"q{i:03d}"))
        truth.append(None if a is None or b is None else b[0] - a[0])
        probs.append(1.0 if truth[-1] is None else a[1] * b[1])  # independent draws: pi_a pi_b
    want = ppi_active_mean(list(f), truth, probs)
    (pair,) = data["ppi"][0]["pairs"]
    assert pair["estimate"] == pytest.approx(want.estimate) and pair["lam"] == pytest.approx(want.lam)
    assert (pair["low"], pair["high"]) == pytest.approx((want.low, want.high))
    assert pair["labelled"] == want.labelled and pair["labels_mean"] == pytest.approx(want.labels_only.mean)
    uniform = ppi_mean([y for y in truth if y is not None], [v for v, y in zip(f, truth) if y is not None],
                       [v for v, y in zip(f, truth) if y is None])  # fmt: skip
    assert pair["estimate"] != pytest.approx(uniform.estimate)  # not the random-order estimate
    (sys_a,) = [s for s in data["ppi"][0]["systems"] if s["system"] == "a"]
    ya = [stored.get(("a", f"q{i:03d}")) for i in range(N)]
    want_a = ppi_active_mean(
        list(values["metric"]["a"]), [None if y is None else y[0] for y in ya], [1.0 if y is None else y[1] for y in ya]
    )
    assert sys_a["estimate"] == pytest.approx(want_a.estimate) and sys_a["high"] == pytest.approx(want_a.high)
    # one label drawn in random order among them: one clear error naming both counts
    extra = Label(run_id=ONE, sample_id="q079", system="a", rubric="correct", rubric_version=1, annotator="other",
                  value=1.0, labelled_at=1e9)  # fmt: skip
    extra_b = extra.model_copy(update={"system": "b"})
    if ("a", "q079") in stored or ("b", "q079") in stored:
        extra, extra_b = (x.model_copy(update={"sample_id": "q078"}) for x in (extra, extra_b))
    write_jsonl([*drawn, extra, extra_b], tmp_path / "mixed.jsonl")
    mixed = invoke(
        "compare", "--db", str(path), ONE, "--labelled", "m=correct", "--labels", str(tmp_path / "mixed.jsonl")
    )
    answers = 2 * want.labelled
    assert mixed.exit_code == 2, mixed.output
    assert f"{answers} labelled answer(s) were drawn by an active queue" in mixed.output
    assert "and 2 in random order" in mixed.output and "Traceback" not in mixed.output


def test_a_changed_answer_makes_its_label_stale_and_unused(random_db):
    db, values = random_db
    data = compare(db, OTHER)
    (counts,) = data["ppi_labels"]
    assert counts["stale"] == CHANGED and counts["used"] == 80 - CHANGED and counts["reused"] == 80 - CHANGED
    (pair,) = data["ppi"][0]["pairs"]
    f = values["metric"]["b"] - values["metric"]["a"]
    y = [float(values["truth"]["b"][i]) - float(values["truth"]["a"][i]) for i in range(CHANGED, 40)]
    want = ppi_mean(y, list(f[CHANGED:40]), [*f[:CHANGED], *f[40:]])
    assert pair["labelled"] == 40 - CHANGED and pair["estimate"] == pytest.approx(want.estimate)
    rich = invoke("compare", "--db", db, OTHER, "--labelled", "m=correct")
    text = " ".join(rich.output.split())
    assert rich.exit_code == 0, rich.output
    assert f"{CHANGED} stale (the answer changed since it was labelled; not used)" in text
    assert all(len(line) <= 80 for line in rich.output.splitlines())
    csv = invoke("compare", "--db", db, OTHER, "--labelled", "m=correct", "--format", "csv", "--table", "ppi")
    header, row = csv.stdout.splitlines()[:2]
    found = dict(zip(header.split(","), row.split(",")))
    assert found["labels_stale"] == str(CHANGED) and found["labels_used"] == str(80 - CHANGED)
    md = invoke("compare", "--db", db, OTHER, "--labelled", "m=correct", "--format", "markdown")
    assert f"{80 - CHANGED} label(s) used; {80 - CHANGED} reused from 1 other run(s)" in md.stdout


def test_a_run_with_the_same_answers_decides_on_the_first_runs_labels(random_db):
    db, _ = random_db
    first, same = compare(db, ONE), compare(db, SAME)
    assert same["ppi_labels"][0] | {"run_id": ONE, "reused": 0, "reused_from": {}} == first["ppi_labels"][0] | {
        "reused_from": {}
    }
    assert same["ppi_labels"][0]["reused"] == 80 and same["ppi_labels"][0]["reused_from"] == {ONE: 80}
    strip = ("run_id",)
    assert [{k: v for k, v in p.items() if k not in strip} for p in same["ppi"][0]["pairs"]] == [
        {k: v for k, v in p.items() if k not in strip} for p in first["ppi"][0]["pairs"]
    ]


def test_a_labels_file_without_digests_counts_for_its_own_run_only(random_db, tmp_path):
    db, values = random_db
    path = tmp_path / "plain.jsonl"
    rows = [label.model_dump(exclude={"output_digest", "probability"}) for label in random_labels(values)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    own = compare(db, ONE, "--labels", str(path))
    assert own["ppi_labels"][0]["used"] == 80 and own["ppi"][0]["pairs"] == compare(db, ONE)["ppi"][0]["pairs"]
    other = invoke("compare", "--db", db, SAME, "--labelled", "m=correct", "--labels", str(path))
    assert other.exit_code == 2, other.output
    assert "80 from other runs without an output digest (not used)" in " ".join(other.output.split())
