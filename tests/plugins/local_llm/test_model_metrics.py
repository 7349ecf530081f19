"""Model-based Unitxt metrics: context_relevance_perplexity and answer_reward.

Tiny randomly initialised models of the real architectures (T5, DeBERTa-v2, Llama) with word-level tokenizers
are saved to disk, so the real loading, batching and scoring code runs; every number is compared with a direct
transformers computation written here, one pair at a time.
"""

from __future__ import annotations

import asyncio
import json
import math
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest

from ragassay import ConfigError, MetricResult, RAGOutput, Sample, Unscored
from ragassay.components import ComponentContext
from ragassay.plugin_manager import get_plugin_host

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytestmark = pytest.mark.slow  # every test here imports torch and transformers; most load a model

from ragassay.plugins.local_llm import (  # noqa: E402
    AnswerReward,
    ContextRelevancePerplexity,
    LocalGenerator,
    score_answers,
    score_pairs,
    teacher_force,
)
from ragassay.plugins.local_llm.relevance import DEFAULT_TEMPLATE  # noqa: E402

WORDS = (
    "the a of in on and to is was what who where when which how does do did question content generate based given "
    "salmon river fish reactor alpha beta gamma rays built steam energy photons decay radioactive answer good bad "
    "year city team project plant manager report labs lovelace ada come from fished spring there every very high"
).split()
QUESTION = "Who built the alpha reactor?"
CONTEXTS = [
    "The alpha reactor was built in 1999 by Ada Lovelace Labs. It produces steam.",
    "Beta is a river. Salmon fished there every spring.",
    "Gamma rays are photons of very high energy. They come from radioactive decay.",
    "The project manager of the plant wrote a report every year about the team and the city.",
    "Steam.",
    "Who built the beta river? The Ada team built the alpha plant on the river in the city of the reactor.",
]


# -- tiny models on disk --------------------------------------------------------------------------


def word_tokenizer(specials, single=None, pair=None, **names):
    """A lower-casing word-level tokenizer over WORDS, saved as a PreTrainedTokenizerFast (no sentencepiece)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {token: i for i, token in enumerate([*specials, *WORDS, ":", "?", ".", ","])}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token=names["unk_token"]))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    if single:
        used = [s for s in specials if s in f"{single} {pair}"]
        tokenizer.post_processor = processors.TemplateProcessing(
            single=single, pair=pair, special_tokens=[(s, vocab[s]) for s in used]
        )
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer, **names)


def save(folder: Path, tokenizer, model) -> Path:
    tokenizer.save_pretrained(folder)
    model.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> SimpleNamespace:
    """Folders with a tiny T5 (seq2seq), Llama and GPT-2 (causal), DeBERTa-v2 reward model and a 2-label DeBERTa-v2."""
    root = tmp_path_factory.mktemp("tiny-models")
    torch.manual_seed(0)
    t5_tok = word_tokenizer(
        ["<pad>", "</s>", "<unk>"], "$A </s>", "$A </s> $B </s>", pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
    t5 = transformers.T5ForConditionalGeneration(
        transformers.T5Config(
            vocab_size=len(t5_tok), d_model=32, d_ff=64, d_kv=8, num_layers=2, num_decoder_layers=2, num_heads=4,
            relative_attention_num_buckets=8, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0,
        )
    )  # fmt: skip
    llama_tok = word_tokenizer(["<unk>", "<|endoftext|>"], eos_token="<|endoftext|>", unk_token="<unk>")
    llama = transformers.LlamaForCausalLM(
        transformers.LlamaConfig(
            vocab_size=len(llama_tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64, eos_token_id=1,
            initializer_range=0.2,
        )
    )  # fmt: skip
    gpt2 = transformers.GPT2LMHeadModel(  # absolute positions: left padding needs the right position ids
        transformers.GPT2Config(
            vocab_size=len(llama_tok), n_positions=64, n_embd=32, n_layer=2, n_head=4, eos_token_id=1
        )
    )
    deberta_tok = word_tokenizer(
        ["[PAD]", "[CLS]", "[SEP]", "[UNK]"], "[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1",
        pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]", unk_token="[UNK]",
    )  # fmt: skip

    def deberta(labels: int):
        config = transformers.DebertaV2Config(
            vocab_size=len(deberta_tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=64, max_position_embeddings=64, num_labels=labels, pad_token_id=0,
            relative_attention=True, position_buckets=16, pos_att_type=["p2c", "c2p"], position_biased_input=False,
            type_vocab_size=0, initializer_range=0.2,
        )  # fmt: skip
        return transformers.DebertaV2ForSequenceClassification(config)

    return SimpleNamespace(
        t5=save(root / "t5", t5_tok, t5),
        llama=save(root / "llama", llama_tok, llama),
        gpt2=save(root / "gpt2", llama_tok, gpt2),
        reward=save(root / "reward", deberta_tok, deberta(1)),
        two_labels=save(root / "two-labels", deberta_tok, deberta(2)),
    )


# -- direct computations, one pair at a time ------------------------------------------------------


def direct_seq2seq(folder: Path, source: str, target: str) -> float:
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
    encoded = tokenizer(source, return_tensors="pt")
    labels = tokenizer(target, return_tensors="pt").input_ids
    with torch.no_grad():
        return math.exp(-model(**encoded, labels=labels).loss.item())


def direct_causal(folder: Path, source: str, target: str, max_source: int | None = None) -> float:
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModelForCausalLM.from_pretrained(folder).eval()
    src, tgt = tokenizer(source).input_ids[:max_source], tokenizer(target).input_ids
    with torch.no_grad():
        logits = model(torch.tensor([src + tgt])).logits[0]
    loss = torch.nn.functional.cross_entropy(logits[len(src) - 1 : -1], torch.tensor(tgt))
    return math.exp(-loss.item())


def direct_reward(folder: Path, question: str, answer: str, max_length: int | None = None) -> float:
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(folder).eval()
    kwargs = {"truncation": True, "max_length": max_length} if max_length else {}
    with torch.no_grad():
        logit = model(**tokenizer(question, answer, return_tensors="pt", **kwargs)).logits[0, 0].item()
    return 1 / (1 + math.exp(-logit))


# -- helpers ---------------------------------------------------------------------------------------


def context(tmp_path: Path) -> ComponentContext:
    return ComponentContext(registry=get_plugin_host().registry, project_dir=tmp_path, cache_dir=tmp_path / "cache")


def perplexity_metric(tmp_path, **options) -> ContextRelevancePerplexity:
    return ContextRelevancePerplexity(ContextRelevancePerplexity.Options(**options), context=context(tmp_path))


def reward_metric(tmp_path, **options) -> AnswerReward:
    return AnswerReward(AnswerReward.Options(**options), context=context(tmp_path))


def score(metric, question=QUESTION, contexts=CONTEXTS[:3], answer="The alpha reactor was built by Ada Lovelace Labs."):
    sample = Sample(question_id="q1", question=question)
    output = RAGOutput(answer=answer, contexts=list(contexts), context_ids=[f"c{i}" for i in range(len(contexts))])
    return asyncio.run(metric.ascore(sample, output))


def sources(contexts):
    return [DEFAULT_TEMPLATE.replace("{context}", c) for c in contexts]


# -- context_relevance_perplexity -----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["t5", "llama", "gpt2"])
def test_context_scores_equal_a_direct_teacher_forced_computation(tiny, tmp_path, kind):
    folder = getattr(tiny, kind)
    direct = direct_seq2seq if kind == "t5" else direct_causal
    result = score(perplexity_metric(tmp_path, model_path=str(folder), batch_size=2), contexts=CONTEXTS)
    assert isinstance(result, MetricResult)
    expected = [direct(folder, source, QUESTION) for source in sources(CONTEXTS)]
    assert result.details["context_scores"] == pytest.approx(expected, rel=1e-5)
    assert result.value == max(result.details["context_scores"]) and result.details["aggregate"] == "max"
    assert result.details["best_rank"] == expected.index(max(expected)) + 1
    assert result.details["context_ids"] == [f"c{i}" for i in range(len(CONTEXTS))]
    assert max(expected) > 1.05 * min(expected), "scores must depend on the context"


def test_model_kind_is_detected_from_the_config(tiny, tmp_path):
    assert perplexity_metric(tmp_path, model_path=str(tiny.t5)).loaded().kind == "seq2seq"
    assert perplexity_metric(tmp_path, model_path=str(tiny.llama)).loaded().kind == "causal"


def test_context_relevance_at_k_is_the_mean_of_the_top_k(tiny, tmp_path):
    scores = score(perplexity_metric(tmp_path, model_path=str(tiny.llama))).details["context_scores"]
    at_2 = score(perplexity_metric(tmp_path, model_path=str(tiny.llama), k=2))
    assert at_2.value == pytest.approx((scores[0] + scores[1]) / 2, abs=1e-12)
    assert at_2.details["aggregate"] == "mean of top 2" and at_2.details["contexts_used"] == 2
    at_5 = score(perplexity_metric(tmp_path, model_path=str(tiny.llama), k=5))  # only 3 retrieved
    assert at_5.value == pytest.approx(sum(scores) / 3, abs=1e-12) and at_5.details["contexts_used"] == 3


@pytest.mark.parametrize("kind", ["t5", "llama", "gpt2"])
def test_batched_scores_equal_one_by_one_scores(tiny, tmp_path, kind):
    loaded = perplexity_metric(tmp_path, model_path=str(getattr(tiny, kind))).loaded()
    questions = [QUESTION, "Where do gamma rays come from?", "Who fished salmon in the beta river every spring?"]
    pairs = [(s, q) for s in sources(CONTEXTS) for q in questions]
    with torch.inference_mode():
        batched = score_pairs(loaded.model, loaded.tokenizer, *zip(*pairs), batch_size=4)
        alone = score_pairs(loaded.model, loaded.tokenizer, *zip(*pairs), batch_size=1)
    assert batched == pytest.approx(alone, abs=1e-6)
    assert len(set(batched)) > len(pairs) // 2
    direct = direct_seq2seq if kind == "t5" else direct_causal
    for source, question in pairs[1:4]:  # several questions of different lengths
        assert batched[pairs.index((source, question))] == pytest.approx(
            direct(getattr(tiny, kind), source, question), rel=1e-5
        )


def test_long_sources_are_cut_and_reported(tiny, tmp_path):
    metric = perplexity_metric(tmp_path, model_path=str(tiny.llama), max_source_tokens=16)
    result = score(metric, contexts=[CONTEXTS[0], CONTEXTS[4]])
    assert result.details["truncated_ranks"] == [1]  # the template is 8 tokens; context 1 has 15, context 2 has 2
    expected = direct_causal(tiny.llama, sources(CONTEXTS[:1])[0], QUESTION, max_source=16)
    assert result.details["context_scores"][0] == pytest.approx(expected, abs=1e-5)
    assert any("max_source_tokens" in w for w in metric.context.warnings)


def test_unscored_without_contexts_or_question(tiny, tmp_path):
    metric = perplexity_metric(tmp_path, model_path=str(tiny.llama))
    assert "no retrieved contexts" in score(metric, contexts=[]).reason
    assert "empty question" in score(metric, question="  ").reason


def test_template_without_a_context_slot_is_refused():
    with pytest.raises(ValueError, match="must contain '{context}'"):
        ContextRelevancePerplexity.Options(template="Generate a question:")


def test_missing_model_folder_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="context_relevance_perplexity: option model_path = 'models/none'"):
        perplexity_metric(tmp_path, model_path="models/none")


def test_generator_and_metric_share_one_loaded_model(tiny, tmp_path):
    generator = LocalGenerator(LocalGenerator.Options(model_path=str(tiny.llama)), context=context(tmp_path))
    metric = perplexity_metric(tmp_path, model_path=str(tiny.llama))
    assert metric.loaded() is generator.client.backend.loaded()
    assert metric.loaded().model is generator.client.backend.loaded().model


def test_memo_returns_what_a_fresh_computation_gives(tiny, tmp_path):
    from ragassay.plugins.local_llm import relevance

    metric = perplexity_metric(tmp_path, model_path=str(tiny.t5))
    first = score(metric).details["context_scores"]
    assert len(relevance._memo) >= 1
    relevance._memo.clear()
    assert score(metric).details["context_scores"] == first  # exactly: same batches, same numbers


def test_concurrent_variants_of_one_output_share_one_computation(tiny, tmp_path, monkeypatch):
    from ragassay.plugins.local_llm import relevance

    calls = []

    def counted(*args, **kwargs):  # the real computation, counted
        calls.append(args[2])
        return teacher_force(*args, **kwargs)

    monkeypatch.setattr(relevance, "teacher_force", counted)
    relevance._memo.clear()
    variants = [perplexity_metric(tmp_path, model_path=str(tiny.gpt2), k=k) for k in (None, 1, 2, 3)]
    sample = Sample(question_id="q1", question=QUESTION)
    output = RAGOutput(answer="a", contexts=CONTEXTS[:3])

    async def all_variants():
        return await asyncio.gather(*(metric.ascore(sample, output) for metric in variants))

    best, at_1, at_2, at_3 = asyncio.run(all_variants())
    assert len(calls) == 1
    scores = best.details["context_scores"]
    assert (best.value, at_1.value) == (max(scores), scores[0])
    assert at_2.value == pytest.approx(sum(scores[:2]) / 2) and at_3.value == pytest.approx(sum(scores) / 3)


# -- answer_reward ----------------------------------------------------------------------------------


def test_reward_is_the_sigmoid_of_the_direct_logit(tiny, tmp_path):
    metric = reward_metric(tmp_path, model_path=str(tiny.reward))
    answers = ["The alpha reactor was built by Ada Lovelace Labs.", "Salmon.", "Gamma rays come from decay."]
    values = [score(metric, answer=a) for a in answers]
    expected = [direct_reward(tiny.reward, QUESTION, a) for a in answers]
    assert [v.value for v in values] == pytest.approx(expected, abs=1e-5)
    assert len({round(v.value, 6) for v in values}) == 3
    assert values[0].details["truncated"] is False and values[0].details["tokens"] > 10
    assert 1 / (1 + math.exp(-values[0].details["logit"])) == pytest.approx(values[0].value)


def test_reward_batches_equal_single_pairs_and_truncation_is_recorded(tiny, tmp_path):
    loaded = reward_metric(tmp_path, model_path=str(tiny.reward)).loaded()
    questions = [QUESTION, "Where do gamma rays come from?", "What is the beta river?"]
    with torch.inference_mode():
        batched = score_answers(loaded.model, loaded.tokenizer, questions * 2, CONTEXTS, batch_size=4)
        alone = score_answers(loaded.model, loaded.tokenizer, questions * 2, CONTEXTS, batch_size=1)
    assert [r.score for r in batched] == pytest.approx([r.score for r in alone], abs=1e-6)
    cut = score(reward_metric(tmp_path, model_path=str(tiny.reward), max_length=12), answer=CONTEXTS[5])
    assert cut.details["truncated"] is True and cut.details["tokens"] == 12
    assert cut.value == pytest.approx(direct_reward(tiny.reward, QUESTION, CONTEXTS[5], max_length=12), abs=1e-5)


def test_reward_unscored_for_empty_answer(tiny, tmp_path):
    assert isinstance(result := score(reward_metric(tmp_path, model_path=str(tiny.reward)), answer=" "), Unscored)
    assert "empty answer" in result.reason


def test_reward_model_folder_errors(tiny, tmp_path):
    with pytest.raises(ConfigError, match="option model_path = 'reward'.*OpenAssistant/reward-model-deberta-v3"):
        reward_metric(tmp_path, model_path="reward")
    with pytest.raises(ConfigError, match="has 2 labels"):
        reward_metric(tmp_path, model_path=str(tiny.two_labels))
    with pytest.raises(ValueError, match="model_path"):
        AnswerReward.Options()


# -- through the real runner -------------------------------------------------------------------------


def test_metrics_through_the_runner(tiny, tmp_path):
    from ragassay.testing import run_project

    samples = [
        {"question_id": "q1", "question": QUESTION, "reference_answers": ["Ada Lovelace Labs"]},
        {"question_id": "q2", "question": "Where do gamma rays come from?", "reference_answers": ["radioactive decay"]},
    ]
    metrics = [
        {"name": "context_relevance_perplexity", "options": {"model_path": str(tiny.t5)}},
        {"name": "context_relevance_perplexity", "options": {"model_path": str(tiny.t5), "k": 1}, "label": "cr@1"},
        {"name": "answer_reward", "options": {"model_path": str(tiny.reward)}},
    ]
    run = run_project(
        tmp_path,
        {"systems": {"bm25": {"retriever": "bm25", "generator": "extractive", "options": {"top_k": 2}}},
         "evaluation": {"metrics": metrics}},
        corpus={"alpha.md": CONTEXTS[0], "beta.md": CONTEXTS[1], "gamma.md": CONTEXTS[2]},
        samples=samples,
    )  # fmt: skip
    assert run.failed == 0
    con = sqlite3.connect(tmp_path / "ragassay-results.db")
    stored = con.execute(
        "select o.question_id, m.metric, m.value, m.details_json from metric_values m join outputs o "
        "on m.output_id = o.id"
    ).fetchall()
    by_key = {(qid, metric): (value, json.loads(details)) for qid, metric, value, details in stored}
    for sample in samples:
        output = run.outputs[("bm25", sample["question_id"])]
        expected = [direct_seq2seq(tiny.t5, s, sample["question"]) for s in sources(output.contexts)]
        value, details = by_key[(sample["question_id"], "context_relevance_perplexity")]
        assert value == pytest.approx(max(expected), abs=1e-5)
        assert details["context_scores"] == pytest.approx(expected, abs=1e-5)
        assert by_key[(sample["question_id"], "cr@1")][0] == pytest.approx(expected[0], abs=1e-5)
        reward, _ = by_key[(sample["question_id"], "answer_reward")]
        assert reward == pytest.approx(direct_reward(tiny.reward, sample["question"], output.answer), abs=1e-5)


# -- the packaged SmolLM2 ----------------------------------------------------------------------------


@pytest.mark.slow
def test_packaged_smollm2_prefers_the_relevant_context(tmp_path_factory):
    pytest.importorskip("gguf")
    cache = tmp_path_factory.getbasetemp().parent / "ragassay-model-cache"  # shared with the local LLM tests
    metric = ContextRelevancePerplexity(
        ContextRelevancePerplexity.Options(),
        context=ComponentContext(registry=get_plugin_host().registry, project_dir=cache, cache_dir=cache),
    )
    cases = [
        ("Who built the alpha reactor?", CONTEXTS[0], CONTEXTS[2]),
        ("Where do gamma rays come from?", CONTEXTS[2], CONTEXTS[1]),
    ]
    for question, relevant, unrelated in cases:
        result = score(metric, question=question, contexts=[unrelated, relevant])
        assert result.details["best_rank"] == 2, (question, result.details)
