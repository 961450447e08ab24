"""Shared parts of the Python conformance adapters.

Import `remit_conformance.protocol` first in an adapter's entry module: it takes stdout for
protocol lines before any framework is imported (CrewAI prints panels to stdout).
"""
