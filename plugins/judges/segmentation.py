"""Answer segmentation for citation-segment groundedness (the groundedness blog, seeds/001, steps 1 and 2).

A pure function of the answer text and the citation pattern; no model is involved::

    >>> [(s.text, s.citations) for s in segment_answer("Apples lower LDL [1]. They taste good.")]
    [('Apples lower LDL', (1,)), ('They taste good.', ())]

**Step 1, paragraphs.** The answer is split into blocks: blank lines separate paragraphs, and every list item
(a line starting with ``-``, ``*``, ``+``, ``1.`` or ``1)``) starts a block of its own; other lines continue the
block above them. A block without a letter or digit (``...``) is not a paragraph. Headers are dropped:

- markdown headings (``# ...`` to ``###### ...``), setext underlines (``===``, ``---``) with the line above
  them, and horizontal rules;
- bold-only lines (``**Benefits**``, ``__Benefits__``, ``**Benefits:**``);
- a line ending in ``:`` only when it is a heading: at most two words (``Key points:``), or title case (at
  most eight words, the first capitalised and every word of four or more letters capitalised) without a
  sentence verb (``is``, ``are``, ``has``, ``can``, ...); a sentence that introduces a list (``Eating apples
  has various benefits for your health:``, ``Here is why:``) is kept;
- a title-case line by the same rule, without sentence punctuation at its end or citations
  (``Cardiovascular Benefits``), when more text follows it (an answer that is only ``Paris`` is not a
  heading, and neither is ``The Eiffel Tower is in Paris``).

**Step 2, segments.** Each paragraph is cut after every run of citation markers (markers separated only by
white space form one run: ``[1][2]``, ``[1] [2]``); the text before a run is a segment that cites the run's
source numbers, and text after the last run is an uncited segment. Segment text has the markers removed and
is stripped of surrounding white space and of the punctuation left at its start by the cut (``, and ...``);
a piece without a letter or digit (the ``.`` after ``[1]``) is not a segment.

The default marker is ``[n]``, ``[n, m]``, ``[n-m]`` (also with an en dash), and runs give ``[n][m]``; a
numbered list item ``1.`` is not a citation. Any other pattern is a regular expression matching one marker;
the source numbers are read from the matched text: every integer, with ``a-b`` expanded to ``a..b`` (a range
of more than :data:`MAX_RANGE` numbers keeps only its two ends).
"""

from __future__ import annotations

import dataclasses
import re
from functools import lru_cache

#: ``[1]``, ``[1, 2]``, ``[1-3]``, ``[1–3]``, ``[1,3-4]``.
DEFAULT_CITATION_PATTERN = r"\[\s*\d+(?:\s*[,\-–]\s*\d+)*\s*\]"
#: The largest citation range expanded number by number.
MAX_RANGE = 100
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_ATX_HEADING = re.compile(r"^\s{0,3}#{1,6}(?:\s|$)")
_RULE_OR_UNDERLINE = re.compile(r"^\s{0,3}(?:(?:[-*_]\s*){3,}|=+)\s*$")
_BOLD_ONLY = re.compile(r"^\s*(\*\*|__)(?P<inner>[^*_].*?)\1\s*:?\s*$")
_NUMBER_OR_RANGE = re.compile(r"(\d+)(?:\s*[-–]\s*(\d+))?")
_LEADING_JUNK = re.compile(r"^[\s.,;:!?)\]]+")
_WORD = re.compile(r"[^\W_]", re.UNICODE)
#: Words that make a short line a sentence rather than a heading.
_SENTENCE_VERBS = frozenset(
    "is are was were be been am has have had can could will would should may might must do does did".split()
)


@dataclasses.dataclass(frozen=True)
class Segment:
    """A piece of an answer: its text (markers removed), the source numbers it cites (as written, in order of
    first mention; empty when uncited) and the index of its paragraph."""

    text: str
    citations: tuple[int, ...]
    paragraph: int


def segment_answer(answer: str, pattern: str = DEFAULT_CITATION_PATTERN) -> list[Segment]:
    """The answer's segments, paragraph by paragraph (see the module docstring for the rules)."""
    marker = _compiled(pattern)
    return [
        segment
        for index, paragraph in enumerate(paragraphs(answer, pattern))
        for segment in split_segments(paragraph, marker, index)
    ]


def paragraphs(answer: str, pattern: str = DEFAULT_CITATION_PATTERN) -> list[str]:
    """The answer's paragraphs (blocks) with headers dropped; ``pattern`` tells a cited line from a heading."""
    marker = _compiled(pattern)
    lines = (answer or "").replace("\r\n", "\n").split("\n")
    headings = _heading_lines(lines, marker)
    blocks: list[list[str]] = []
    current: list[str] = []
    for number, line in enumerate(lines):
        if number in headings or not line.strip() or _LIST_ITEM.match(line):
            if current:
                blocks.append(current)
            current = [line.strip()] if number not in headings and line.strip() else []
            continue
        current.append(line.strip())
    if current:
        blocks.append(current)
    return [text for text in (" ".join(block) for block in blocks) if _WORD.search(text)]


def _heading_lines(lines: list[str], marker: re.Pattern[str]) -> set[int]:
    """Indexes of the lines that are headers (or header underlines)."""
    found: set[int] = set()
    last = max((n for n, line in enumerate(lines) if line.strip()), default=-1)
    for number, line in enumerate(lines):
        text = line.strip()
        if not text:
            continue
        if _RULE_OR_UNDERLINE.match(line):
            found.add(number)
            if number > 0 and lines[number - 1].strip() and text.strip("=-") == "" and number - 1 not in found:
                found.add(number - 1)  # a setext heading: the line above the underline
            continue
        followed = number < last
        if _ATX_HEADING.match(line) or _BOLD_ONLY.match(line) or (followed and _plain_heading(text, marker)):
            found.add(number)
    return found


def _plain_heading(text: str, marker: re.Pattern[str]) -> bool:
    """A line that reads as a heading without markup (only asked when text follows it)."""
    if marker.search(text) or _LIST_ITEM.match(text):
        return False
    if text.endswith(":"):
        words = text[:-1].split()
        return len(words) <= 2 or _title_case(words)
    if text[-1] in ".!?;,)\"'”’":
        return False
    return _title_case(text.split())


def _title_case(words: list[str]) -> bool:
    """At most eight words, the first and every word of four or more letters capitalised, no sentence verb."""
    if not words or len(words) > 8 or not words[0][0].isupper():
        return False
    if any(w.lower().strip(".,;:!?") in _SENTENCE_VERBS for w in words):
        return False
    return all(w[0].isupper() or len(w) < 4 or not w[0].isalpha() for w in words)


def split_segments(paragraph: str, marker: re.Pattern[str] | str, index: int = 0) -> list[Segment]:
    """Cut one paragraph after each run of citation markers (see the module docstring)."""
    marker = _compiled(marker) if isinstance(marker, str) else marker
    segments: list[Segment] = []
    start = 0
    for run_start, run_end, numbers in _marker_runs(paragraph, marker):
        _append(segments, paragraph[start:run_start], numbers, index)
        start = run_end
    _append(segments, paragraph[start:], (), index)
    return segments


def _marker_runs(text: str, marker: re.Pattern[str]) -> list[tuple[int, int, tuple[int, ...]]]:
    """(start, end, source numbers) of each run of markers separated only by white space."""
    runs: list[tuple[int, int, tuple[int, ...]]] = []
    for match in marker.finditer(text):
        numbers = citation_numbers(match.group(0))
        if runs and not text[runs[-1][1] : match.start()].strip():
            start, _, previous = runs[-1]
            runs[-1] = (start, match.end(), previous + tuple(n for n in numbers if n not in previous))
        else:
            runs.append((match.start(), match.end(), numbers))
    return runs


def citation_numbers(marker_text: str) -> tuple[int, ...]:
    """The source numbers in one marker's text: ``[1, 3-5]`` -> (1, 3, 4, 5); in order, without repeats."""
    numbers: list[int] = []
    for first, last in _NUMBER_OR_RANGE.findall(marker_text):
        low = int(first)
        if not last:
            span = [low]
        else:
            high = int(last)
            low, high = min(low, high), max(low, high)
            span = list(range(low, high + 1)) if high - low < MAX_RANGE else [low, high]
        numbers += [n for n in span if n not in numbers]
    return tuple(numbers)


def _append(segments: list[Segment], piece: str, numbers: tuple[int, ...], index: int) -> None:
    text = _LEADING_JUNK.sub("", piece).strip()
    if _WORD.search(text):
        segments.append(Segment(text, numbers, index))


@lru_cache(maxsize=32)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)
