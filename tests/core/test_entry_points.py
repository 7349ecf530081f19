"""Installed entry points are read once per process, and again when sys.path changes."""

from __future__ import annotations

from ragassay import entry_points


def test_read_once_and_again_when_sys_path_changes(tmp_path, monkeypatch):
    calls = []
    real = entry_points.metadata.entry_points
    monkeypatch.setattr(entry_points.metadata, "entry_points", lambda: calls.append(1) or real())
    monkeypatch.setattr(entry_points, "_read", None)
    assert {ep.name for ep in entry_points.installed("ragassay")} >= {"bm25", "keyword"}
    assert [ep.value for ep in entry_points.installed("ragassay", "bm25")] == ["ragassay.plugins.bm25"]
    assert entry_points.installed("ragassay.test_group") == [] and len(calls) == 1

    dist = tmp_path / "ragassay_test_dist-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ragassay-test-dist\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[ragassay.test_group]\nthing = some_module:thing\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert [ep.value for ep in entry_points.installed("ragassay.test_group")] == ["some_module:thing"]
    assert len(calls) == 2
