"""Recall: the wrapper around Agent Zero's memory search and the stages of one recall (see pipeline.py)."""
