"""Text normalisation and tokenisation shared by lexical metrics and retrievers.

:func:`normalize_answer` is the SQuAD v1.1 evaluation script's normalisation (lower case, punctuation
removed, articles 'a', 'an', 'the' removed, whitespace collapsed), which Unitxt's token-overlap metrics use.
Also the small helpers every printed sentence shares: :func:`terminal_safe`, and :func:`counted` and :func:`listed`
for counts and lists in words.
"""

from __future__ import annotations

import functools
import re
import string
import unicodedata

MIB = 1024 * 1024

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = set(string.punctuation)
_DROP_PUNCTUATION = str.maketrans("", "", string.punctuation)
_WORD = re.compile(r"\w+", re.UNICODE)

#: A small English stop-word list (used only where a component's options ask for it).
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers herself him himself his how i if in into is it its itself just me more most my myself no
    nor not now of off on once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too under until up very
    was we were what when where which while who whom why will with would you your yours yourself yourselves
    tell give name list please""".split()
)


@functools.lru_cache(maxsize=16384)
def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower, drop punctuation, drop articles, collapse whitespace.

    Memoised: every lexical metric normalises the same answer and references of a unit.
    """
    text = text.lower().translate(_DROP_PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def answer_tokens(text: str) -> list[str]:
    """Tokens of the SQuAD-normalised text (what Unitxt's token overlap counts)."""
    return normalize_answer(text).split()


def words(text: str, *, drop_stopwords: bool = False) -> list[str]:
    """Lower-cased word tokens (``\\w+``, accents folded), optionally without stop words.

    Used by keyword matching and BM25 so that a query and a document are tokenised the same way.
    """
    folded = text.lower()
    if not folded.isascii():
        folded = unicodedata.normalize("NFKD", folded)
        folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    tokens = _WORD.findall(folded)
    if drop_stopwords:
        tokens = [tok for tok in tokens if tok not in STOPWORDS]
    return tokens


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])|\n{2,}|\n(?=[-*#])")


def sentences(text: str) -> list[str]:
    """Split text into sentences (rule-based; good enough for extractive answers)."""
    parts = (part.strip() for part in _SENTENCE_END.split(text))
    return [part for part in parts if part]


def text_bytes(texts: list[str], limit: int) -> int:
    """UTF-8 size of ``texts``, counted only up to just past ``limit`` (a huge string is not encoded whole)."""
    total = 0
    for text in texts:
        # a str of n characters is at least n bytes: one over the limit is known too large without encoding it
        total += len(text) if len(text) > limit else len(text.encode("utf-8", errors="replace"))
        if total > limit:
            return total
    return total


#: Control characters a terminal may act on: C0 except tab and newline, DEL, and the C1 range (U+0080-U+009F,
#: e.g. U+009B, an 8-bit CSI).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """``text`` with every control character but newline and tab replaced by a visible escape (``\\x1b`` for
    ESC, ``\\x07`` for BEL, ...), so that data, model replies and endpoint bodies cannot move the cursor, clear
    the screen, retitle the window or hide text on a terminal. A Windows line end (CR LF) becomes a newline.

    Every command passes such strings through this before printing (rich, markdown and csv output, failure
    lines, warnings, errors); json output escapes them the JSON way instead.
    """
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text.replace("\r\n", "\n"))


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` with ``noun`` in the number it takes: ``1 comparison``, ``0 comparisons``, ``1,200 samples``
    (``plural``: the plural when it is not ``noun + "s"``)."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def listed(items: list[str], last: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} {last} {items[-1]}"


#: json's terse messages (CPython's ``json.decoder``), in words a person can act on.
_JSON_PROBLEMS = {
    "Invalid control character": "a raw control character (a tab, a line break, ...) inside a string; write it "
    "escaped (\\t, \\n, \\u0001)",
    "Expecting property name enclosed in double quotes": "expected a key in double quotes (single quotes and a "
    "comma before '}' are not JSON)",
    "Expecting ':' delimiter": "expected ':' between a key and its value",
    "Expecting ',' delimiter": "expected ',' between two items, or a closing bracket",
    "Expecting value": "expected a value (a string in double quotes, a number, true, false, null, an object or "
    "an array; a comma before ']' is not JSON)",
    "Unterminated string starting at": "a string is not closed: its closing double quote is missing",
    "Invalid \\escape": "an invalid backslash escape in a string (write a backslash as \\\\)",
    "Invalid \\uXXXX escape": "an invalid \\uXXXX escape in a string (four hexadecimal digits)",
    "Extra data": "more text after the end of the JSON value (one value per file, or one object per line in JSONL)",
    "Illegal trailing comma before end of object": "a comma before '}'",
    "Illegal trailing comma before end of array": "a comma before ']'",
}


def describe_json_error(error: ValueError, *, column: bool = True) -> str:
    """``invalid JSON at column C: what is wrong``, in words, for a :class:`json.JSONDecodeError` (json's own
    message reads e.g. 'Invalid control character at'); the caller names the file and the line before it
    (``error.lineno`` for a whole file, the file's line for JSONL parsed line by line).

    ``column=False``: without the column (JSON in a CSV cell). A ValueError that is not a decode error (a file
    that is not UTF-8) gives ``not valid JSON (its text)``.
    """
    msg = getattr(error, "msg", None)
    if msg is None:
        return f"not valid JSON ({error})"
    known = next((words for start, words in _JSON_PROBLEMS.items() if msg.startswith(start)), None)
    what = known or msg.removesuffix(" at").rstrip(":")
    return f"invalid JSON at column {error.colno}: {what}" if column else f"invalid JSON: {what}"
