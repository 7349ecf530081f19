"""``[evaluation] compat = "unitxt"`` sets the compat option of every metric that has one, unless it is set."""

from __future__ import annotations

from ragassay.engine.systems import with_compat
from ragassay.plugin_manager import load_plugins
from ragassay.refs import ComponentRef


def test_project_compat_fills_unset_options_only():
    registry = load_plugins().registry
    filled = with_compat(ComponentRef(name="token_recall"), registry, "unitxt")
    assert filled.options == {"compat": "unitxt"}
    kept = with_compat(ComponentRef(name="context_mrr", options={"compat": "ragassay", "k": 3}), registry, "unitxt")
    assert kept.options == {"compat": "ragassay", "k": 3}
    other = with_compat(ComponentRef(name="exact_match"), registry, "unitxt")
    assert other.options == {}
    default = with_compat(ComponentRef(name="token_recall"), registry, "ragassay")
    assert default.options == {}
    unknown = with_compat(ComponentRef(name="no_such_metric"), registry, "unitxt")
    assert unknown.options == {}


def test_project_compat_covers_retrieval_at_k_and_the_ir_variants():
    registry = load_plugins().registry
    for name in ("recall_at_k", "precision_at_k"):
        assert with_compat(ComponentRef(name=name), registry, "unitxt").options == {"compat": "unitxt"}
    for name in ("ir_mrr", "ir_map", "ir_precision_at_k", "ir_recall_at_k", "hit_at_k"):
        assert with_compat(ComponentRef(name=name, options={"k": 3}), registry, "unitxt").options == {
            "k": 3,
            "variant": "unitxt",
        }
    explicit = ComponentRef(name="ir_map", options={"variant": "trec_eval"})
    assert with_compat(explicit, registry, "unitxt").options == {"variant": "trec_eval"}
    for name in ("ndcg_at_k", "r_precision"):  # no Unitxt definition
        assert with_compat(ComponentRef(name=name), registry, "unitxt").options == {}
    assert with_compat(ComponentRef(name="ir_map"), registry, "ragassay").options == {}
