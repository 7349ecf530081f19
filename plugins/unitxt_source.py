"""The ``unitxt`` dataset source: samples from a JSONL file in Unitxt's RAG task layout.

Each line holds Unitxt's RAG task fields (seeds/004, "RAG Task Definition"): ``question``, ``question_id``,
``metadata_field``, the references ``reference_answers``, ``reference_contexts``, ``reference_context_ids``,
``is_answerable_label``, and usually the predictions ``contexts``, ``contexts_ids``, ``answer``. This source reads
the questions and references; the ``precomputed`` system pointed at the same file replays the predictions, so a
Unitxt dataset with its predictions is evaluated by ``ragassay run`` (``ragassay unitxt import`` writes such a
project). There is no corpus: the contexts come with the predictions.

Example::

    [dataset]
    source = "unitxt"
    options = { path = "rag.jsonl" }

    [systems.mine]
    rag = { name = "precomputed", options = { path = "rag.jsonl" } }
"""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import BaseModel, ConfigDict, Field

from ragassay import DatasetSource, Sample, hookimpl, read_unitxt, record_to_sample


class UnitxtSourceOptions(BaseModel):
    """Options of the ``unitxt`` dataset source."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="JSONL file in Unitxt's RAG task layout, relative to the config's folder.")


class UnitxtSource(DatasetSource):
    """Questions and references from a JSONL file in Unitxt's RAG task layout (predictions: ``precomputed``)."""

    name = "unitxt"
    Options = UnitxtSourceOptions

    def samples(self) -> Iterator[Sample]:
        for record in read_unitxt(self.context.resolve(self.options.path)):
            yield record_to_sample(record)


@hookimpl
def register_dataset_sources(register):
    register(UnitxtSource)
