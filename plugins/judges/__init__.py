"""LLM judges and judge-based metrics, and their offline fact-checker (see docs/judges.md).

- :mod:`.fact_check`: the groundedness blog's LLM fact-checker and the offline lexical checker;
- :mod:`.segmentation` and :mod:`.groundedness`: ``citation_groundedness``;
- :mod:`.triad`: the INFO thesis' RAG triad, ``holistic_correctness`` and ``full_score`` (Eq. 5.1);
- :mod:`.correctness`: GRAMMAR's Correct/Incorrect ``correctness`` judge;
- :mod:`.baselines`: the reference-free baselines ``ragas_fact`` and ``selfcheck_qa``.

Each module registers its own components through its own entry point. The judge base they stand on
(explanation first, bounded re-asks, whole-word verdicts, identity) is public: :class:`ragassay.llm.LLMJudging`.
"""

from __future__ import annotations
