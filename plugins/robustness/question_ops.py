"""Question operators: typos, letter case, and a paraphrase from the sample's GRAMMAR text templates.

They change the question before the wrapped system sees it (retrieval included), so they wrap any rag.

- ``typos`` (``rate``): each word of 4 letters or more gets, with probability ``rate``, one typo (two letters
  swapped, one dropped, one doubled). Robustness to misspelled queries (Sidiropoulos & Kanoulas 2022,
  "Analysing the Robustness of Dual Encoders for Dense Retrieval Against Misspellings").
- ``case`` (``mode = "lower" | "upper" | "random"``): the question in another letter case.
- ``paraphrase`` (``templates``, ``attribute``, ``value``): the question rendered from another text template of
  the sample's GRAMMAR SQL template with the sample's placeholder values (same semantic group, same answer); with
  ``attribute``/``value``, only texts with that attribute value (e.g. ``query_length = "long"``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Chunk, ComponentContext, ConfigError

from .base import Case, Operator, Outcome, register_operator
from .grammar_db import value_text


class TypoOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rate: float = Field(0.2, ge=0.0, le=1.0, description="Probability that a word of 4+ letters gets one typo.")


@register_operator
class Typos(Operator):
    """Introduce seeded typos (swap, drop or double a letter) in the question's words."""

    name = "typos"
    target = "question"
    Options = TypoOptions

    def apply(self, case: Case) -> Outcome:
        changed: list[str] = []

        def typo(match: re.Match) -> str:
            word = match.group(0)
            if len(word) < 4 or case.rng.random() >= self.options.rate:
                return word
            i = case.rng.randrange(1, len(word) - 1)
            kind = case.rng.choice(("swap", "drop", "double"))
            new = {
                "swap": word[:i] + word[i + 1] + word[i] + word[i + 2 :],
                "drop": word[:i] + word[i + 1 :],
                "double": word[:i] + word[i] + word[i:],
            }[kind]
            if new != word:
                changed.append(f"{word}->{new}")
            return new

        question = re.sub(r"\w+", typo, case.sample.question)
        return Outcome(bool(changed), question=question, details={"typos": changed})


class CaseOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: Literal["lower", "upper", "random"] = Field("lower", description="The letter case of the question.")


@register_operator
class LetterCase(Operator):
    """Change the question's letter case (lower, upper, or each letter at random)."""

    name = "case"
    target = "question"
    Options = CaseOptions

    def apply(self, case: Case) -> Outcome:
        text = case.sample.question
        if self.options.mode == "lower":
            question = text.lower()
        elif self.options.mode == "upper":
            question = text.upper()
        else:
            question = "".join(c.upper() if case.rng.random() < 0.5 else c.lower() for c in text)
        return Outcome(question != text, question=question, details={"mode": self.options.mode})


class ParaphraseOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    templates: str = Field(description="The GRAMMAR templates file of the samples (relative to the project folder).")
    attribute: str | None = Field(None, description="Only texts whose attribute (e.g. 'query_length') ...")
    value: str | None = Field(None, description="... has this value (e.g. 'long').")


_PLACEHOLDER = re.compile(r"\[([^\[\]]+?)\.([^\[\]]+?)\]")


@register_operator
class Paraphrase(Operator):
    """Rewrite the question from another text template of its GRAMMAR SQL template (same group, same answer)."""

    name = "paraphrase"
    target = "question"
    Options = ParaphraseOptions

    def prepare(self, chunks: Sequence[Chunk], context: ComponentContext) -> None:
        import yaml

        path = context.resolve(self.options.templates)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"paraphrase: cannot read the templates file {path}: {exc}") from None
        self.texts: dict[str, list[dict[str, Any]]] = {t["id"]: t.get("texts", []) for t in data.get("templates", [])}

    def apply(self, case: Case) -> Outcome:
        attrs = case.sample.attributes
        texts = getattr(self, "texts", {}).get(attrs.get("sql_template_id", ""), [])
        options = [t for t in texts if t.get("id") != attrs.get("text_template_id") and self._wanted(t)]
        if not options:
            return Outcome(False, question=case.sample.question, details={"reason": "no other GRAMMAR text template"})
        text = case.rng.choice(options)
        values = {k.lower(): v for k, v in (attrs.get("placeholders") or {}).items()}
        missing = [m.group(0) for m in _PLACEHOLDER.finditer(text["text"]) if _key(m) not in values]
        if missing:
            return Outcome(False, question=case.sample.question, details={"reason": f"no value for {missing[0]}"})
        rendered = _PLACEHOLDER.sub(lambda m: value_text(values[_key(m)]), text["text"])
        question = re.sub(r"\s+", " ", rendered).strip()
        details = {"text_template_id": text.get("id"), "attributes": text.get("attributes", {})}
        return Outcome(question != case.sample.question, question=question, details=details)

    def _wanted(self, text: dict[str, Any]) -> bool:
        if self.options.attribute is None:
            return True
        return str((text.get("attributes") or {}).get(self.options.attribute)) == str(self.options.value)


def _key(match: re.Match) -> str:
    return f"{match.group(1).strip()}.{match.group(2).strip()}".lower()
