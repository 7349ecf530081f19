"""Qrels files: TREC's four columns written and read back, BEIR's TSV read, bad lines refused with the place."""

from __future__ import annotations

import pytest

from ragassay.errors import ConfigError
from ragassay.labels.qrels import read_qrels, write_qrels


def test_trec_round_trip_sorted(tmp_path):
    qrels = {"q2": {"d9": 0, "d1": 3}, "q1": {"d5": 2}}
    assert write_qrels(qrels, tmp_path / "x.qrels") == 3
    assert (tmp_path / "x.qrels").read_text().splitlines() == ["q1 0 d5 2", "q2 0 d1 3", "q2 0 d9 0"]
    assert read_qrels(tmp_path / "x.qrels") == qrels


def test_beir_tsv_is_read(tmp_path):
    (tmp_path / "t.tsv").write_text("query-id\tcorpus-id\tscore\nq1\t1001\t2\nq1\t1003\t0\n")
    assert read_qrels(tmp_path / "t.tsv") == {"q1": {"1001": 2, "1003": 0}}


@pytest.mark.parametrize(
    "text, message",
    [
        ("q1 0 d1\n", "line 1: a qrels line has 4 fields"),
        ("q1 0 d1 x\n", "line 1: the grade must be an integer"),
        ("q1 0 d1 1\nq1 0 d1 2\n", "line 2: query 'q1' judges document 'd1' twice"),
        ("\n", "holds no judgement"),
    ],
)
def test_bad_files_are_one_clear_error(tmp_path, text, message):
    (tmp_path / "bad.qrels").write_text(text)
    with pytest.raises(ConfigError, match=message):
        read_qrels(tmp_path / "bad.qrels")


def test_ids_with_blanks_cannot_be_written(tmp_path):
    with pytest.raises(ConfigError, match="ids need no blanks"):
        write_qrels({"q 1": {"d": 1}}, tmp_path / "x.qrels")
