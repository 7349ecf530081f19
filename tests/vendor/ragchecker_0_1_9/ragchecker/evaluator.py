# Vendored from amazon-science/RAGChecker 0.1.9 (commit 6091f08), ragchecker/evaluator.py, Apache-2.0 (../LICENSE,
# ../NOTICE). Trimmed (see ../README.md): the top-level imports of refchecker (the LLM extractor and checkers) and
# loguru are removed, and so are __init__ and the two model calls; extract_claims and check_claims keep their
# selection of what is still to compute and raise where RAGChecker would call a model. evaluate is unchanged.
from typing import List

import numpy as np

from .container import RAGResults, RAGResult
from .metrics import *
from .computation import METRIC_FUNC_MAP


class ModelCallNeeded(RuntimeError):
    """Raised where RAGChecker would call its extractor or checker (not vendored)."""


class RAGChecker():
    """
    RAGChecker class for evaluating RAG results (vendored: evaluate only; no extractor, no checker).
    """
    def __init__(self, **kwargs):
        self.kwargs = kwargs

    def extract_claims(self, results: List[RAGResult], extract_type="gt_answer"):
        assert extract_type in ["gt_answer", "response"], \
            "extract_type should be either 'gt_answer' or 'response'."

        if extract_type == "gt_answer":
            results = [ret for ret in results if ret.gt_answer_claims is None]
            texts = [result.gt_answer for result in results]
        else:
            results = [ret for ret in results if ret.response_claims is None]
            texts = [result.response for result in results]
        if not results:
            return
        raise ModelCallNeeded(f"extract claims for {extract_type} of {len(texts)} RAG results")

    def check_claims(self, results: RAGResults, check_type="answer2response"):
        match check_type:
            case "answer2response":
                results = [ret for ret in results.results if ret.answer2response is None]
                self.extract_claims(results, extract_type="response")
            case "response2answer":
                results = [ret for ret in results.results if ret.response2answer is None]
                self.extract_claims(results, extract_type="gt_answer")
            case "retrieved2answer":
                results = [ret for ret in results.results if ret.retrieved2answer is None]
                self.extract_claims(results, extract_type="gt_answer")
            case "retrieved2response":
                results = [ret for ret in results.results if ret.retrieved2response is None]
                self.extract_claims(results, extract_type="response")
            case _:
                raise ValueError(f"Invalid check_type: {check_type}")
        if not results:
            return
        raise ModelCallNeeded(f"check {check_type} for {len(results)} RAG results")

    def evaluate(self, results: RAGResults, metrics=all_metrics, save_path=None):
        """
        Evaluate the RAG results.

        Parameters
        ----------
        results : RAGResults
            RAGResults object.
        metrics : str | list[str], optional
            List of metrics to compute. Default: 'all'.
        save_path : str, optional
            Path to save the results. Default: None. Will perform progress checkpointing if provided.
        """ 
        # identify the metrics and required intermediate results
        if isinstance(metrics, str):
            metrics = [metrics]
        ret_metrics = set()
        requirements = set()
        for metric in metrics:
            if metric not in METRIC_REQUIREMENTS:
                if metric not in METRIC_GROUP_MAP:
                    raise ValueError(f"Invalid metric: {metric}.")
                ret_metrics.update(METRIC_GROUP_MAP[metric])
            else:
                ret_metrics.add(metric)
        for metric in ret_metrics:
            requirements.update(METRIC_REQUIREMENTS[metric])
        
        # compute the required intermediate results
        for requirement in requirements:
            self.check_claims(results, check_type=requirement)
            if save_path is not None:
                with open(save_path, "w") as f:
                    f.write(results.to_json(indent=2))

        # compute the metrics
        for metric in ret_metrics:
            for result in results.results:
                METRIC_FUNC_MAP[metric](result)
        
        # aggregate the metrics
        for group, group_metrics in METRIC_GROUP_MAP.items():
            if group == all_metrics:
                continue
            for metric in group_metrics:
                if metric in ret_metrics:
                    results.metrics[group][metric] = round(np.mean(
                        [result.metrics[metric] for result in results.results]
                    ) * 100, 1)
        
        # save the results            
        if save_path is not None:
                with open(save_path, "w") as f:
                    f.write(results.to_json(indent=2))

        return results.metrics
