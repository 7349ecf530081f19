"""Unitxt's RAG task: its JSONL layout and its lexical metrics, scored in bulk.

- :mod:`.records`: the JSONL layout (read, turn into samples, write back);
- :mod:`.scoring`: Unitxt 1.26's six lexical RAG metrics over a whole file, with Unitxt's bootstrap intervals;
- :mod:`.lexical_batch` and :mod:`.tokens_numpy`: the vectorised token overlap behind the scoring;
- :mod:`.project`: ``ragassay unitxt import`` (a project that evaluates a file) and ``export``.

The layout functions are part of the public facade (``from ragassay import read_unitxt``).
"""

from .records import UnitxtRecord, parse_record, read_unitxt, record_to_sample, sample_to_record

__all__ = ["UnitxtRecord", "parse_record", "read_unitxt", "record_to_sample", "sample_to_record"]
