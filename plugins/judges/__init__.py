"""LLM judges and judge-based metrics, and their offline fact-checker (see docs/judges.md).

Modules: :mod:`.fact_check` (the fact-checker every groundedness-style metric uses: an LLM with the blog's
prompt, or the offline lexical checker).
"""

from __future__ import annotations
