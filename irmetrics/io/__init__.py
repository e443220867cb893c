"""Readers and writers for evaluation input files."""

from .prefs import JudgmentGroups, Prefs, read_prefs, read_qrels_jg, read_qrels_prefs

__all__ = ["JudgmentGroups", "Prefs", "read_prefs", "read_qrels_jg", "read_qrels_prefs"]
