"""Eval suites and scorers: questions asked through the real engine, scored against figures a
ground-truth query computes from the ERP at eval time (never typed into the suite)."""

from erp_agent.evals.runner import EvalRun, run_suites
from erp_agent.evals.spec import Case, Suite, load_suites

__all__ = ["Case", "EvalRun", "Suite", "load_suites", "run_suites"]
