"""Scoring: asking a reranker (a server, BM25, a local cross-encoder, the utility model) for scores, safely."""
