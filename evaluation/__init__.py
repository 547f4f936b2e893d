"""Evaluation: tournaments with duplicate deals, ratings and the benchmark protocol."""
