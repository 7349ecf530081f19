"""The sections of the HTML report and of ``ragassay serve``'s pages, as data (:mod:`ragassay.present.blocks`).

Each is a :class:`ragassay.RunSection` registered through ``register_sections``: ragassay's own in
:mod:`.shipped` (built by :mod:`.tables`, :mod:`.breakdowns`, :mod:`.robustness`, :mod:`.trend`; the failure
browser's data by :mod:`.browser`), a plugin's in its package; :mod:`.registered` orders them and computes them.
"""
