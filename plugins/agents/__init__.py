"""Agentic RAG: metrics of trajectories (docs/agents.md).

An agent's output carries its trajectory (:attr:`ragassay.RAGOutput.trajectory`: model calls, retrievals, tool
calls, the answer, nested agents) and a multi-hop sample its per-hop gold (:attr:`ragassay.Sample.hops`). The
modules of this package are plugins like any other, each registered through its own ``ragassay`` entry point:
per-hop retrieval metrics, trajectory metrics, and step-level blame.
"""
