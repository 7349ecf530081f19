#!/usr/bin/env python
# -*- coding: utf-8 -*-
#
# *****************************************************************
# (C) Copyright IBM Corp. 2023 All Rights Reserved.
#
# The source code for this program is not published or otherwise
# divested of its trade secrets, irrespective of what has been
# deposited with the U.S. Copyright Office.
# *****************************************************************
#
# Vendored for ragassay's tests from IBM/mt-rag-benchmark, scripts/evaluation/run_algorithmic.py at commit
# cc5b1d4 (the repository is Apache-2.0: LICENSE beside this file). The functions below are the script's own,
# unchanged (lines 29-57, 71-185 and 233-264 of the original). Changed, and only these:
# - the imports: the script's, less those of its command line (argparse, yaml, pandas, tqdm, datetime, os, sys,
#   json) and less `evaluate`;
# - its lines 58-69, which load Hugging Face `evaluate` metrics from the Hub at import (unreachable offline), are
#   replaced by `rouge_evaluator`, which computes what evaluate's `rouge` metric computes (evaluate,
#   metrics/rouge/rouge.py, `Rouge._compute`: rouge_score's RougeScorer, `scorer.score(reference, prediction)`,
#   the F-measure per pair when use_aggregator=False), and `bertscore_metric = None` (BERTScore needs a model
#   and is not one of the algorithmic metrics ragassay reproduces);
# - the logging set-up at import (lines 187-193) and the command line (parse_args, process, main) are left out.

import html
import logging
import re
import string
from collections import Counter
from typing import Dict, List, Tuple

from bs4 import BeautifulSoup
from rouge_score import rouge_scorer

class LABELS:
    ANSWERABLE = "ANSWERABLE"
    UNANSWERABLE = "UNANSWERABLE"

def remove_articles(text: str):
    return re.sub(r"\b(a|an|the)\b", " ", text)


def normalize_white_spaces(text):
    return " ".join([x for x in text.split() if x])


def remove_punc(text):
    exclude = set(string.punctuation)

    return "".join(ch for ch in text if ch not in exclude)

def normalize_text(txt: str) -> str:
    """Lower text and remove punctuation, articles and extra whitespace."""

    return normalize_white_spaces(remove_articles(remove_punc(txt.lower())))

def clean_html(text: str) -> str:
    return BeautifulSoup(html.unescape(text), features="lxml").get_text()

def strip_newline_words(text: str) -> str:
    text = text.replace("\n", " ")
    return re.sub(r"[^\w\s]", "", text).lower()

# ================================================
#                Third Party scorers
# ================================================
logging.getLogger("absl").setLevel(logging.ERROR)


class _EvaluateRouge:
    """What `evaluate.load("rouge").compute(...)` returns (evaluate, metrics/rouge/rouge.py, Rouge._compute)."""

    def compute(self, predictions, references, rouge_types=None, use_aggregator=True, use_stemmer=False):
        assert not use_aggregator, "the script calls it with use_aggregator=False"
        scorer = rouge_scorer.RougeScorer(rouge_types=rouge_types, use_stemmer=use_stemmer, tokenizer=None)
        scores = [scorer.score(ref, pred) for ref, pred in zip(references, predictions)]
        return {key: list(score[key].fmeasure for score in scores) for key in scores[0]}


bertscore_metric = None
rouge_evaluator = _EvaluateRouge()

# ================================================
#                   custom scorers
# ================================================

def recall(prediction: str, target: str, *args, **kwargs) -> float:
    # Tokenize
    prediction_tokens = normalize_text(prediction).split()
    target_tokens = normalize_text(target).split()

    # Identify common tokens
    common_token = Counter(prediction_tokens) & Counter(target_tokens)
    num_common_tokens = sum(common_token.values())

    # Calculate recall
    if num_common_tokens == 0:
        return 0

    return 1.0 * num_common_tokens / len(target_tokens)


def rouge_l(prediction: str, target: str, *args, use_stemmer=False, **kwargs) -> float:
    return rouge_evaluator.compute(
        predictions=[prediction],
        references=[target],
        rouge_types=["rougeL"],
        use_aggregator=False,
        use_stemmer=use_stemmer,
    )["rougeL"][0]


def bertscore(
    prediction: str,
    target: str,
    *args,
    lang: str = "en",
    **kwargs,
) -> Tuple[float, float, float]:

    score = bertscore_metric.compute(
        predictions=[prediction],
        references=[target],
        lang=lang,
        rescale_with_baseline=True,
        model_type="microsoft/deberta-xlarge-mnli",
    )
    return score["f1"][0], score["precision"][0], score["recall"][0]


def bert_prec(prediction: str, target: str, *args, lang: str = "en", **kwargs) -> float:
    _, p, _ = bertscore(prediction, target, lang=lang)
    return p


def bert_recall(
    prediction: str, target: str, *args, lang: str = "en", **kwargs
) -> float:
    _, _, r = bertscore(prediction, target, lang=lang)
    return r


def k_prec(prediction: str, target: str, *args, **kwargs) -> float:
    # Tokenize
    prediction_tokens = normalize_text(prediction).split()
    target_tokens = normalize_text(target).split()

    # Identify common tokens
    common_token = Counter(prediction_tokens) & Counter(target_tokens)
    num_common_tokens = sum(common_token.values())

    # Calculate F1
    if num_common_tokens == 0:
        return 0

    return 1.0 * num_common_tokens / len(prediction_tokens)


def extractiveness_rouge(text: str, target: str, *args, **kwargs) -> float:
    """
    RougeL based extractive measure between text and target

    Args:
        text (str): reference text
        target (str): reference target

    Returns:
        float: extractiveness score
    """
    text = clean_html(strip_newline_words(text))
    target = clean_html(strip_newline_words(target))
    if target.replace(" ", "") in text.replace(" ", ""):
        return 1
    else:
        return rouge_l(text, target)
    
def length(text: str, target: str, *args, **kwargs) -> int:
    return len(text)

def rb_agg(row):
    agg = 0
    
    try:
        recall = (row['metrics']['BertscoreR'][0]+1)/2 
    except:
        recall = row['metrics']['Recall'][0]
    rouge = row['metrics']['RougeL_stemFalse'][0]
    if 'BertKPrec' not in row['metrics']:
        extractiveness = 0
    else:
        extractiveness = (max([0 if value == None else value for value in row['metrics']['BertKPrec']])+1)/2
    if rouge == 0 or recall == 0 or extractiveness == 0:
        agg = 0
    else:
        agg = 3 * recall * rouge * extractiveness / ((recall * rouge) + (recall * extractiveness) + (rouge * extractiveness))    
    row['metrics']['RB_agg'] = [agg]

def score(instance: dict, metrics: Dict[str, dict]) -> List[dict]:

    if "metrics" not in instance:
        instance["metrics"] = {}

    for metric, scorer in metrics.items():
        

        if "target" in scorer["target"]:
            targets = instance["targets"]
        elif scorer["target"] == "passage":
            targets = instance["contexts"]

        if scorer["prediction"] == "prediction":
            prediction = instance["predictions"][0]["text"]
        
        for target in targets:
            if scorer["target"] == "target_label":
                target = target["enrichments"]["answerability"]
            else:
                target = target["text"]

            if metric not in instance["metrics"]:
                instance["metrics"][metric] = []
            if metric == 'RB_agg':
                scorer["func"](instance)
            else:
                instance["metrics"][metric].append(
                    scorer["func"](prediction, target, lang="en")
                )
