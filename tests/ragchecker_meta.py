"""RAGChecker's meta-evaluation data (tests/data/ragchecker_meta) as a ragassay project and a labels JSONL.

- :func:`write_project`: ``qa.jsonl`` (one sample per instance: ``question_id`` = the instance id, ``question`` =
  the query), one ``precomputed`` outputs file per RAG system under ``outputs/`` (a row per instance the system
  answered: ``answer`` = the digest of its response, ``trace.ragchecker_metrics`` = RAGChecker's precision,
  recall and F1 of it), two pairwise rubric files and two configs:

  - ``ragassay.toml``: one system per RAG system (8); a system has answers to the 70 instances it took part in,
    and each of the other 210 samples fails with the precomputed adapter's "no precomputed output" reason;
  - ``positions.toml``: two systems, ``model1`` and ``model2``, the instance's first and second response
    (every instance answered by both): the pooled question "is the second response preferred to the first?".

  Both score the three RAGChecker values with the ``trace_value`` metric (``ragchecker_precision``,
  ``ragchecker_recall``, ``ragchecker_f1``).
- :func:`write_labels`: both annotators' labels of a stored run as ragassay labels, ``systems`` = (model1,
  model2) (the RAG systems' names, or ``model1``/``model2`` for ``positions.toml``), the source's value
  unchanged: the source rates model2's response against model1's on -2..2, as a pairwise rubric rates the
  second system against the first. ``overall_label`` -> rubric ``preference`` (shipped, -2..2);
  ``correctness_label`` -> ``correctness_preference``; ``completeness_label`` -> ``completeness_preference``
  (the two rubric files :func:`write_project` writes). Annotators ``annotator1`` and ``annotator2``: the first
  and second human record of an instance (the source names nobody).

Run as a script, it writes the project (``python tests/ragchecker_meta.py DIR``) or, after ``ragassay run``, the
labels of a run (``python tests/ragchecker_meta.py DIR --labels RUN_ID``).
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "ragchecker_meta" / "instances.jsonl"
POSITIONS = ("model1", "model2")
#: instances.jsonl's label key -> (rubric name, rubric version); the RAGChecker value it is read against
RUBRICS = {
    "overall": ("preference", 1),
    "correctness": ("correctness_preference", 1),
    "completeness": ("completeness_preference", 1),
}
METRICS = {"overall": "ragchecker_f1", "correctness": "ragchecker_precision", "completeness": "ragchecker_recall"}
VALUES = {"ragchecker_precision": "precision", "ragchecker_recall": "recall", "ragchecker_f1": "f1"}
ANNOTATORS = ("annotator1", "annotator2")
LABELLED_AT = 1734096271.0  # the source commit's time (2024-12-13): labels of a file, not of a session
PROVENANCE = (
    "RAGChecker's {key} of the response (its {label}), data/meta_evaluation/baseline_ragchecker.json of "
    "amazon-science/RAGChecker at 6091f08 (tests/data/ragchecker_meta)"
)
SOURCE_KEYS = {"precision": "correctness_label", "recall": "completeness_label", "f1": "overall_label"}


def instances() -> list[dict]:
    """The 280 compact instances (tests/data/ragchecker_meta/README.md, 'Layout')."""
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]


def systems(items: list[dict]) -> list[str]:
    """The RAG systems' names, sorted."""
    return sorted({item[side]["name"] for item in items for side in POSITIONS})


def _row(item: dict, side: str) -> dict:
    return {
        "question_id": str(item["instance_id"]),
        "answer": f"sha256:{item[side]['response_sha256']}",
        "trace": {"ragchecker_metrics": item[side]["ragchecker"]},
    }


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def _rubric(name: str, aspect: str) -> str:
    return textwrap.dedent(f"""\
        name = "{name}"
        version = 1
        kind = "pairwise"
        prompt = "Compared with the first answer, how good is the second in {aspect}?"
        values = [-2, -1, 0, 1, 2]
        labels = ["much worse", "worse", "as good", "better", "much better"]
        descriptions = ["The second is much worse in {aspect}.", "The second is somewhat worse in {aspect}.",
            "Neither is better in {aspect}.", "The second is somewhat better in {aspect}.",
            "The second is much better in {aspect}."]
        """)


def _metrics_toml() -> str:
    lines = []
    for label, key in VALUES.items():
        provenance = PROVENANCE.format(key=key, label=SOURCE_KEYS[key])
        lines.append(
            f'    {{ name = "trace_value", label = "{label}", options = {{ path = ["ragchecker_metrics", "{key}"], '
            f"value_range = [0, 1], provenance = {json.dumps(provenance)} }} }},"
        )
    return "[evaluation]\nmetrics = [\n" + "\n".join(lines) + "\n]\n"


def _config(names: list[str], folder: str) -> str:
    head = '[project]\nname = "ragchecker-meta"\n\n[dataset]\noptions = { path = "qa.jsonl" }\n\n'
    body = "".join(
        f'[systems.{name}]\nrag = {{ name = "precomputed", options = {{ path = "{folder}/{name}.jsonl" }} }}\n\n'
        for name in names
    )
    return head + body + _metrics_toml()


def write_project(root: Path, items: list[dict] | None = None) -> Path:
    """Write the project under ``root`` (module docstring); returns the path of ``ragassay.toml``."""
    items = instances() if items is None else items
    root.mkdir(parents=True, exist_ok=True)
    _write_jsonl(root / "qa.jsonl", [{"question_id": str(i["instance_id"]), "question": i["query"]} for i in items])
    for name in systems(items):
        rows = [_row(item, side) for item in items for side in POSITIONS if item[side]["name"] == name]
        _write_jsonl(root / "outputs" / f"{name}.jsonl", rows)
    for side in POSITIONS:
        _write_jsonl(root / "positions" / f"{side}.jsonl", [_row(item, side) for item in items])
    for aspect in ("correctness", "completeness"):
        (root / f"{aspect}_preference.toml").write_text(_rubric(f"{aspect}_preference", aspect), encoding="utf-8")
    (root / "positions.toml").write_text(_config(list(POSITIONS), "positions"), encoding="utf-8")
    config = root / "ragassay.toml"
    config.write_text(_config(systems(items), "outputs"), encoding="utf-8")
    return config


def labels(run_id: str, items: list[dict] | None = None, *, positions: bool = False) -> list[dict]:
    """Both annotators' labels of the three aspects as ragassay labels of ``run_id`` (module docstring)."""
    items = instances() if items is None else items
    rows = []
    for item in items:
        pair = list(POSITIONS) if positions else [item[side]["name"] for side in POSITIONS]
        for annotator, given in zip(ANNOTATORS, item["labels"], strict=True):
            for aspect, (rubric, version) in RUBRICS.items():
                rows.append(
                    {
                        "run_id": run_id,
                        "sample_id": str(item["instance_id"]),
                        "systems": pair,
                        "rubric": rubric,
                        "rubric_version": version,
                        "annotator": annotator,
                        "value": float(given[aspect]),
                        "labelled_at": LABELLED_AT,
                    }
                )
    return rows


def write_labels(path: Path, run_id: str, *, positions: bool = False) -> int:
    """Write :func:`labels` of ``run_id`` to ``path`` (JSONL); returns how many."""
    rows = labels(run_id, positions=positions)
    _write_jsonl(path, rows)
    return len(rows)


if __name__ == "__main__":
    folder = Path(sys.argv[1])
    if "--labels" in sys.argv:
        run = sys.argv[sys.argv.index("--labels") + 1]
        count = write_labels(folder / "labels.jsonl", run, positions="--positions" in sys.argv)
        print(f"wrote {count} labels of run {run} to {folder / 'labels.jsonl'}")
    else:
        print(f"wrote {write_project(folder)}")
