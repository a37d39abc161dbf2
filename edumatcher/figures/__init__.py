"""Figures the course chapters draw; each function returns a matplotlib Figure."""
