"""The reference agents on examples/aurp at a scripted loopback model (issue 40, "Done when": the decomposing agent
finds every hop, a model that skips the second retrieval is blamed at that hop, the paired comparison of single-shot
vs decomposing vs iterative, and the same run under 20% injected faults).

- :func:`join_samples`: Aurp's two-hop join questions as the ``grammar`` source generates them (per-hop gold from
  the SQL), ``PER_TEMPLATE`` groups of each join template, one text per group (the texts in turn);
- :class:`AurpModel`: a model that follows the agents' prompts. It plans the sub-questions from the sample's hops
  (hop 1 names the placeholder's entity, hop 2 says ``#1`` where the entity read after hop 1 goes) and *reads* the
  sources it is given: the entity of the asked table is the first name of that table (its rows, from aurp.sql)
  that follows the known entity in one sentence of a source. It never looks an answer up. ``hops=1`` plans only
  the first sub-question and finishes a ReAct search after one search (a model that skips the second retrieval);
  ``fault_every=5`` answers the first asking of every request whose digest is 0 mod 5 with a fault, the kinds in
  turn by the digest: an HTTP 500, a body cut off mid-JSON, a 200 body that is not JSON;
- :func:`write_project`: a project in ``root`` (a copy of Aurp's corpus, the samples as qa.jsonl, the config).

Token counts are fixed per prompt kind (:data:`USAGE`), so usage and cost are exact and the same in every run.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sqlite3
import textwrap
import threading
from collections import Counter
from pathlib import Path

from servers.base import Reply
from servers.openai_chat import Turn, malformed, server_error

AURP = Path(__file__).resolve().parents[1] / "examples" / "aurp"
JOIN_TEMPLATES = ("project_client", "project_manager", "employee_manager")
PER_TEMPLATE = 10
USAGE = {"decompose": (60, 20, 0), "read": (90, 5, 0), "act": (130, 25, 0), "answer": (210, 8, 0)}
FAULTS = ("http_500", "cut_body", "not_json")
SYSTEMS = ("single_shot", "decomposing", "iterative")

CONFIG = """
    [project]
    concurrency = 4

    [corpus]
    paths = ["corpus/**/*.md"]

    [dataset]
    options = {{ path = "qa.jsonl" }}

    [defaults]
    chunker = {{ name = "recursive", options = {{ size = 400, overlap = 0, title_prefix = true }} }}
    retriever = "bm25"
    generator = {{ name = "openai", options = {{ model = "gpt-4o-mini", base_url = "{url}/v1", cache = false, \
backoff_s = 0.0 }} }}

    [systems.single_shot]
    description = "naive RAG: one retrieval with the question"
    rag = "naive"
    options = {{ top_k = 1 }}

    [systems.decomposing]
    description = "Self-Ask sub-questions, one retrieval per hop"
    rag = "decomposing_agent"
    options = {{ top_k = 1 }}

    [systems.iterative]
    description = "ReAct: search, read, search again or finish"
    rag = "iterative_agent"
    options = {{ top_k = 1, max_steps = 3 }}

    [evaluation]
    metrics = ["contains_answer", "hop_coverage", "hop_recall", "step_blame"]
    decide = {decide}
    frontier = {{ latency = "p95", cost = "tokens" }}
"""
# hop_coverage first: the frontier judges by it; then quality, and the costs of the extra hops
DECIDE = ["hop_coverage", "contains_answer", "tokens", "latency_s"]


def join_samples(tmp: Path) -> list:
    """The two-hop join questions of Aurp (module docstring), in question-id order."""
    from ragassay.components import ComponentContext
    from ragassay.plugins.grammar.source import GrammarSource

    context = ComponentContext(project_dir=AURP, cache_dir=tmp / ".cache")
    options = {"sql_dump": "aurp.sql", "documents": ["corpus/**/*.md"]}
    source = GrammarSource(GrammarSource.Options.model_validate(options), context=context)
    samples = sorted(source.samples(), key=lambda s: s.question_id)
    chosen = []
    for template in JOIN_TEMPLATES:
        groups = sorted({s.group_id for s in samples if s.sql_template_id == template})[:PER_TEMPLATE]
        for turn, group in enumerate(groups):
            texts = [s for s in samples if s.group_id == group]
            chosen.append(texts[turn % len(texts)])
    return chosen


def entity(sample) -> str:
    """The value the question names (the join questions have one placeholder)."""
    (value,) = sample.placeholders.values()
    return value


def tables(sample) -> tuple[str, str]:
    """The filtered table and the table the question asks for, from the hops' descriptions."""
    return sample.hops[0].description, sample.hops[-1].description.split("->")[-1].strip()


def sub_questions(sample) -> list[str]:
    """The follow-up questions the model plans: hop 1 names the question's entity, hop 2 the one read after hop 1."""
    first, asked = tables(sample)
    return [
        f"Which {asked.lower()} is linked to the {first.lower()} {entity(sample)}?",
        f"What is known about the {asked.lower()} #1?",
    ]


def table_names() -> dict[str, list[str]]:
    """Table (lower case) -> the Name of each of its rows, longest first, from aurp.sql."""
    db = sqlite3.connect(":memory:")
    db.executescript((AURP / "aurp.sql").read_text(encoding="utf-8"))
    names = {}
    for table in ("Client", "Employee", "Project"):
        rows = [r[0] for r in db.execute(f"SELECT Name FROM {table}")]
        names[table.lower()] = sorted(rows, key=lambda n: (-len(n), n))
    return names


def read(texts: list[str], known: str, names: list[str]) -> tuple[int, str] | None:
    """(1-based source, name): the first name of ``names`` that follows ``known`` in a sentence of a source."""
    for number, text in enumerate(texts, start=1):
        for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
            start = sentence.find(known)
            if start < 0:
                continue
            after = sentence[start + len(known) :]
            found = [(after.find(n), n) for n in names if n != known and n in after]
            if found:
                return number, min(found)[1]
    return None


def numbered_sources(block: str) -> list[str]:
    """The texts of ``[n] text`` sources (each up to the next ``[n]`` at a line start or inline)."""
    parts = re.split(r"(?:^|\s)\[\d+\] ", block)
    return [p.strip() for p in parts[1:]]


class AurpModel:
    """The scripted model (module docstring): a responder for :class:`servers.openai_chat.OpenAIChatServer`."""

    def __init__(self, samples: list, hops: int = 2, fault_every: int = 0):
        self.by_question = {s.question: s for s in samples}
        assert len(self.by_question) == len(samples), "two samples ask the same question"
        self.names = table_names()
        self.hops = hops
        self.fault_every = fault_every
        self.seen: set[str] = set()
        self.faults: Counter = Counter()
        self.requests: Counter = Counter()
        self.lock = threading.Lock()

    def __call__(self, request):
        messages = request.json["messages"]
        fault = self._fault(json.dumps(messages, sort_keys=True))
        if fault == "http_500":
            return server_error(500)
        if fault == "cut_body":
            return malformed()
        if fault == "not_json":
            return Reply(200, raw=b"<html><body>502 Bad Gateway: upstream sent garbage \x7f\x01</body></html>")
        prompt = messages[-1]["content"]
        if prompt.rstrip().endswith("Are follow up questions needed here:"):
            return self._plan(prompt)
        if prompt.rstrip().endswith("Intermediate answer:"):
            return self._read(prompt)
        if re.search(r"Thought \d+:\s*$", prompt):
            return self._act(prompt)
        return self._answer(prompt)

    def _fault(self, key: str) -> str | None:
        digest = int(hashlib.sha256(key.encode()).hexdigest(), 16)
        with self.lock:
            self.requests["all"] += 1
            if not self.fault_every or key in self.seen:
                return None
            self.seen.add(key)
            if digest % self.fault_every:
                return None
            kind = FAULTS[(digest // self.fault_every) % len(FAULTS)]
            self.faults[kind] += 1
            return kind

    def _sample(self, prompt: str):
        return self.by_question[re.findall(r"^Question: (.+)$", prompt, re.M)[-1].strip()]

    def _plan(self, prompt: str) -> Turn:
        lines = "\n".join(f"Follow up: {q}" for q in sub_questions(self._sample(prompt))[: self.hops])
        return Turn(text=f" Yes.\n{lines}", usage=USAGE["decompose"])

    def _read(self, prompt: str) -> Turn:
        asked = re.search(r"^Follow up: Which (\w+) is linked to the \w+ (.+)\?$", prompt, re.M)
        sources = numbered_sources(prompt.split("Sources:\n", 1)[1].rsplit("\n\nFollow up:", 1)[0])
        found = read(sources, asked.group(2), self.names[asked.group(1)]) if asked else None
        return Turn(text=found[1] if found else "unknown", usage=USAGE["read"])

    def _act(self, prompt: str) -> Turn:
        sample = self._sample(prompt)
        plan = sub_questions(sample)[: self.hops]
        observations = re.findall(r"^Observation \d+: (.*)$", prompt.split("Question: ")[-1], re.M)
        step = len(observations) + 1
        texts = [t for o in observations for t in numbered_sources(o)]
        found = read(texts, entity(sample), self.names[tables(sample)[1].lower()])
        if step == 1:
            text = f"I need the {tables(sample)[1].lower()} first.\nAction 1: Search[{plan[0]}]"
        elif step <= len(plan) and found:
            text = f"It is {found[1]}. I need to look it up.\nAction {step}: Search[{plan[1].replace('#1', found[1])}]"
        else:
            text = f"I have what I need.\nAction {step}: Finish[{found[1] if found else 'unknown'}]"
        return Turn(text=text, usage=USAGE["act"])

    def _answer(self, prompt: str) -> Turn:
        sample = self._sample(prompt)
        block = prompt.split("Sources:\n", 1)[1].rsplit("\n\nQuestion:", 1)[0] if "Sources:\n" in prompt else ""
        found = read(numbered_sources(block), entity(sample), self.names[tables(sample)[1].lower()])
        return Turn(text=f"{found[1]} [{found[0]}]." if found else "I don't know.", usage=USAGE["answer"])


def write_project(root: Path, url: str, samples: list, decide: list[str] = DECIDE) -> Path:
    """Aurp's corpus, the samples as qa.jsonl and the config (:data:`CONFIG`) under ``root``; the config path."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copytree(AURP / "corpus", root / "corpus")
    rows = [s.model_dump(mode="json", exclude_none=True) for s in samples]
    (root / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    path = root / "ragassay.toml"
    path.write_text(textwrap.dedent(CONFIG.format(url=url, decide=json.dumps(decide))), encoding="utf-8")
    return path
