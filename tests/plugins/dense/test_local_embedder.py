"""The local embedder: the real all-MiniLM-L6-v2 (semantics, normalisation, batching, truncation) and bad folders."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragassay.components import ComponentContext
from ragassay.errors import ConfigError
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.dense.local import LocalEmbedder, model_token_limit, read_encoder_config

from dense_support import minilm_folder

SENTENCES = [
    "A man is playing a guitar on stage.",
    "Someone performs music with a guitar in front of an audience.",
    "The central bank raised interest rates by half a point.",
    "Monetary policy was tightened as rates went up.",
    "Fresh snow covered the mountain village overnight.",
]


@pytest.fixture(scope="module")
def minilm():
    minilm_folder()
    embedder = LocalEmbedder(LocalEmbedder.Options(batch_size=2))
    return embedder, embedder.encode(SENTENCES)


def test_registered_through_entry_point():
    info = load_plugins().registry.get("embedder", "local")
    assert info.plugin == "dense" and info.cls is LocalEmbedder


@pytest.mark.slow
def test_paraphrases_are_closer_than_unrelated_sentences(minilm):
    _, encoded = minilm
    sims = encoded.vectors @ encoded.vectors.T
    assert sims[0, 1] > 0.5 and sims[2, 3] > 0.4  # paraphrase pairs
    for i, j in ((0, 2), (0, 4), (1, 3), (2, 4)):
        assert sims[i, j] < 0.25, (i, j, sims[i, j])
    assert sims[0, 1] > max(sims[0, 2], sims[0, 3], sims[0, 4]) + 0.3


@pytest.mark.slow
def test_vectors_are_unit_length_in_input_order_and_batching_independent(minilm):
    embedder, encoded = minilm
    assert encoded.vectors.shape == (5, 384) and encoded.vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(encoded.vectors, axis=1), 1.0, atol=1e-5)
    naive = LocalEmbedder(LocalEmbedder.Options(batch_size=3, sort_by_length=False)).encode(SENTENCES)
    assert np.allclose(naive.vectors, encoded.vectors, atol=1e-5)  # same vectors, same order
    single = embedder.encode([SENTENCES[3]]).vectors[0]
    assert np.allclose(single, encoded.vectors[3], atol=1e-5)
    assert embedder.embed(SENTENCES[:1])[0] == pytest.approx(encoded.vectors[0].tolist(), abs=1e-5)


@pytest.mark.slow
def test_long_input_is_truncated_and_recorded(minilm):
    embedder, _ = minilm
    assert embedder.max_tokens == 256  # sentence_bert_config.json max_seq_length, not the 512 positions
    long_text = "guitar " * 600
    encoded = embedder.encode(["short text", long_text])
    assert encoded.truncated == [False, True] and encoded.truncated_count == 1
    assert encoded.tokens[1] > 600 and encoded.max_tokens == 256
    # truncation means everything past the limit is ignored
    longer = embedder.encode([long_text + " stock market crash " * 50]).vectors[0]
    assert np.allclose(longer, encoded.vectors[1], atol=1e-5)
    shorter = LocalEmbedder(LocalEmbedder.Options(max_tokens=8)).encode(["one two three four five six seven eight"])
    assert shorter.truncated == [True] and shorter.max_tokens == 8


def test_dimension_and_limit_are_read_without_loading_the_model():
    embedder = LocalEmbedder()
    folder = minilm_folder()
    assert embedder.folder == folder and embedder.dimension == 384
    assert model_token_limit(folder, read_encoder_config(folder)) == 256


def test_cache_identity_ignores_batching_and_threads_but_not_truncation():
    base = LocalEmbedder().cache_identity()
    minilm_folder()
    assert LocalEmbedder(LocalEmbedder.Options(batch_size=7, threads=1, sort_by_length=False)).cache_identity() == base
    assert LocalEmbedder(LocalEmbedder.Options(max_tokens=64)).cache_identity() != base
    assert LocalEmbedder(LocalEmbedder.Options(normalize=False)).cache_identity() != base
    assert "model.safetensors" in base["weights"] and "config.json" in base["files"]


def test_missing_model_folder_is_a_clear_error(tmp_path):
    context = ComponentContext(project_dir=tmp_path)
    embedder = LocalEmbedder(LocalEmbedder.Options(model="models/nowhere"), context=context)
    with pytest.raises(ConfigError, match=r"models/nowhere does not exist"):
        embedder.encode(["x"])


def test_folder_without_config_is_not_a_model(tmp_path):
    (tmp_path / "model.gguf").write_bytes(b"GGUF")
    with pytest.raises(ConfigError, match="no config.json"):
        LocalEmbedder(LocalEmbedder.Options(model=str(tmp_path))).embed(["x"])


def test_decoder_model_folder_is_refused(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama"}))
    with pytest.raises(ConfigError, match="LlamaForCausalLM.*not an encoder"):
        LocalEmbedder(LocalEmbedder.Options(model=str(tmp_path))).embed(["x"])


@pytest.mark.slow
def test_broken_config_and_unloadable_weights_are_config_errors(tmp_path):
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        LocalEmbedder(LocalEmbedder.Options(model=str(tmp_path))).embed(["x"])
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert", "hidden_size": 8}))
    with pytest.raises(ConfigError, match="cannot load an encoder"):
        LocalEmbedder(LocalEmbedder.Options(model=str(tmp_path))).embed(["x"])


@pytest.mark.slow
def test_warm_loads_the_model_once_per_process(monkeypatch):
    """warm() loads the folder's tokenizer and model (what the first query would otherwise pay for), once."""
    from ragassay.plugins.dense import local

    minilm_folder()
    monkeypatch.setattr(local, "_MODELS", {})
    embedder = LocalEmbedder(LocalEmbedder.Options())
    embedder.warm()
    assert list(local._MODELS) == [str(embedder.folder)]
    loaded = local._MODELS[str(embedder.folder)]
    LocalEmbedder(LocalEmbedder.Options()).warm()
    assert local._MODELS[str(embedder.folder)] is loaded
