"""Dispatch keys, key sets, thread-local state, operator entries, the dispatcher and Library."""
