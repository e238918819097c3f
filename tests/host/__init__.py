"""Stand-in Agent Zero host for the a0_reranker tests (see harness.py)."""
