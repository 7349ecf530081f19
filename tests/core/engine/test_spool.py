"""``SampleSpool``: a run's samples on disk, read back in order, as given, as often as needed."""

from __future__ import annotations

from ragassay.engine.spool import SampleSpool
from ragassay.models import Sample

SAMPLES = [
    Sample(question_id="tab\there", question="line one\nline two\ttabbed", reference_answers=["Zürich — ✓"]),
    Sample(question_id="q2", question="plain?", group_id="g", extra_field={"nested": [1, 2]}),
    *[Sample(question_id=f"n{i}", question=f"question {i} " + "x" * (i % 7) * 300) for i in range(3000)],
]


def test_samples_come_back_in_order_and_equal():
    spool = SampleSpool.write(SAMPLES)
    assert len(spool) == len(SAMPLES)
    assert list(spool) == SAMPLES
    assert [qid for qid, _ in spool.records()] == [s.question_id for s in SAMPLES]


def test_the_spooled_json_is_the_samples_json_as_given():
    spool = SampleSpool.write(SAMPLES)
    assert list(spool.sample_bytes()) == [s.model_dump_json().encode() for s in SAMPLES]
    assert [raw for _, raw in spool.records()] == [s.model_dump_json() for s in SAMPLES]


def test_iterators_are_independent_and_the_observer_sees_every_sample():
    seen = []
    spool = SampleSpool.write(SAMPLES, observe=lambda s: seen.append(s.question_id))
    first, second = spool.records(), spool.records()
    assert next(first)[0] == "tab\there" and next(first)[0] == "q2"
    assert next(second)[0] == "tab\there"  # its own position
    assert len(list(first)) == len(SAMPLES) - 2
    assert seen == [s.question_id for s in SAMPLES]
    spool.close()


def test_shuffled_is_the_seeded_hash_order_for_any_size_and_keeps_every_sample():
    from ragassay.sampling import order_key

    for n in (0, 1, 3000):
        samples = [Sample(question=f"q{i}", question_id=f"id{i}") for i in range(n)]
        spool = SampleSpool.write(samples)
        shuffled = spool.shuffled(7)
        expected = sorted(samples, key=lambda s: order_key(7, s.question_id))
        assert [s.model_dump_json() for s in shuffled] == [s.model_dump_json() for s in expected]
        assert len(shuffled) == n
    ids = [q for q, _ in SampleSpool.write(samples).shuffled(8).records()]
    assert ids != [s.question_id for s in expected]  # another seed, another order
    subset = [s for s in samples if s.question_id.endswith("1")]  # the order of a subset is the same order
    assert [q for q, _ in SampleSpool.write(subset).shuffled(7).records()] == [
        s.question_id for s in expected if s.question_id.endswith("1")
    ]


def test_shuffled_keeps_the_turns_of_a_conversation_together_in_the_replay_order():
    from ragassay.sampling import seeded_order

    samples = [Sample(question=f"single {i}", question_id=f"s{i}") for i in range(40)]
    for c in range(300):  # conversations of 1 to 5 turns, their turns spread through the file
        samples += [
            Sample(question=f"turn {t}", question_id=f"c{c}::{t}", conversation_id=f"c{c}", turn=t)
            for t in range(1, 2 + c % 5)
        ]
    samples = samples[::2] + samples[1::2]
    shuffled = [s for s in SampleSpool.write(samples).shuffled(3)]
    clusters = [s.conversation_id for s in shuffled if s.conversation_id]
    runs = [c for i, c in enumerate(clusters) if i == 0 or clusters[i - 1] != c]
    assert len(runs) == len(set(clusters)) == 300  # every conversation in one stretch
    assert sorted(c for c in runs) != runs  # in a seeded random order, not by name
    order = seeded_order(3, [s.question_id for s in samples], [s.cluster for s in samples])
    assert [s.question_id for s in shuffled] == [samples[i].question_id for i in order]  # the replay's order
    singles = [s.question_id for s in shuffled if s.conversation_id is None]
    alone = [s.question_id for s in SampleSpool.write([s for s in samples if not s.conversation_id]).shuffled(3)]
    assert singles == alone  # single questions keep their order among themselves


def test_parts_cut_the_spool_into_consecutive_batches_in_one_pass():
    spool = SampleSpool.write(SAMPLES)
    ends = [1, 2, 1500, 2800, len(SAMPLES)]
    parts = list(spool.parts(ends))
    starts = [0, *ends[:-1]]
    assert [list(p.records()) for p in parts] == [list(spool.part(a, b).records()) for a, b in zip(starts, ends)]
    assert [len(p) for p in parts] == [1, 1, 1498, 1300, len(SAMPLES) - 2800]
    for part in parts:
        part.close()
