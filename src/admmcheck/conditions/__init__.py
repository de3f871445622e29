"""Exact convergence conditions of the papers, PSD certificates and lemma checks."""
