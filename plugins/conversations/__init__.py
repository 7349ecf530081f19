"""Conversations: multi-turn RAG evaluated turn by turn (docs/conversations.md).

A conversation's turns are ordinary samples (:class:`ragassay.Sample` with ``conversation_id``, ``turn``,
``history`` and ``answerability``). The modules of this package are plugins like any other, each registered
through its own ``ragassay`` entry point: dataset sources (MTRAG's published files, the user's own
conversations) and the conversation metrics.
"""
