"""``ragassay estimate``: the model calls, tokens and cost of a run before it makes any (:mod:`.rows`), less what
is stored already (:mod:`.stored`) or answered by the response cache (:mod:`.cache`), with ranges measured on a
seeded pilot (:mod:`.pilot`)."""
