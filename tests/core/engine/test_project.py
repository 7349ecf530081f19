"""Project: what it derives from a config; here the corpus and its size warnings."""

from __future__ import annotations

from ragassay.engine.project import Project

from conftest import BASIC_CONFIG, write_project


def test_a_document_over_max_document_bytes_is_warned_about(tmp_path, host):
    config = BASIC_CONFIG.replace('paths = ["corpus/*"]', 'paths = ["corpus/*"]\n    max_document_bytes = 2000')
    docs = {"big.md": "# Big\n\n" + "é" * 1500, "small.md": "# Small\n\nx" * 10}  # 'é' is 2 bytes: ~3,000 bytes
    project = Project.load(write_project(tmp_path, config, docs=docs), host.registry)
    corpus = project.corpus()
    assert len(corpus.documents) == 2  # still used: a warning, not an error
    warnings = [w for w in project.context.warnings if "max_document_bytes" in w]
    assert len(warnings) == 1 and "'corpus/big.md'" in warnings[0] and "max_document_bytes = 2,000" in warnings[0]


def test_max_document_bytes_defaults_to_10_mib(tmp_path, host):
    project = Project.load(write_project(tmp_path, BASIC_CONFIG, docs={"a.md": "# A\n\n" + "a" * 100_000}))
    project.corpus()
    assert project.config.corpus.max_document_bytes == 10 * 1024 * 1024
    assert not [w for w in project.context.warnings if "max_document_bytes" in w]
