"""Conformance of the dispatcher against torch 2.13 (issue 3, sections 6-7)."""
