"""Running past one machine: the Ray executor and the cluster-wide LLM budget.

Ray is an optional dependency (``pip install 'ragassay[ray]'``), imported on first use only.
"""
