"""Tensor parallelism: the process group, its collectives and the worker processes."""
