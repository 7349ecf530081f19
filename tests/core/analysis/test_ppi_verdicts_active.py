"""How a labelled comparison was drawn (:mod:`ragassay.analysis.ppi_verdicts`): a difference of two independently
drawn answers has probability pi_A pi_B, one label reused on both sides pi; random and active labels cannot mix."""

from __future__ import annotations

import pytest

from ragassay.analysis.ppi_labels import Matched
from ragassay.analysis.ppi_verdicts import Drawn, design_of, drawn_difference, turns_note
from ragassay.errors import ConfigError


def test_two_draws_multiply_and_one_draw_on_both_sides_does_not():
    a = Matched(1.0, 0.5, frozenset({("ann", 1.0, "d1")}))
    b = Matched(0.0, 0.4, frozenset({("ann", 2.0, "d2")}))
    assert drawn_difference(a, b) == Drawn(-1.0, pytest.approx(0.2), 2, 0)
    same = Matched(1.0, 0.4, frozenset({("ann", 2.0, "d2")}))
    assert drawn_difference(same, b).probability == 0.4  # the label reused on the other run: one draw
    random = Matched(1.0, None, frozenset({("ann", 3.0, "d3")}))
    assert drawn_difference(random, b) == Drawn(-1.0, None, 2, 1)


def test_designs_do_not_mix_in_one_estimate():
    assert design_of(("b", "m"), [Drawn(1.0, None, 2, 2)]) is None
    assert design_of(("b", "m"), [Drawn(1.0, 0.25, 2, 0), Drawn(0.0, 0.5, 1, 0)]) == [0.25, 0.5]
    with pytest.raises(ConfigError, match=r"m, b: 3 labelled answer\(s\) were drawn by an active queue .* and 1 in"):
        design_of(("b", "m"), [Drawn(1.0, 0.25, 2, 0), Drawn(0.0, 0.5, 1, 0), Drawn(0.0, None, 1, 1)])


def test_turns_of_conversations_get_one_warning_line():
    class Run:
        conversations = 4

    (line,) = turns_note(Run())
    assert line.startswith("the samples are turns of 4 conversations") and "independent" in line
    Run.conversations = None
    assert turns_note(Run()) == []
