"""Gradient utilities used by training loops."""
