from .container import RAGResult, RAGResults
from .evaluator import RAGChecker