"""Spark entry points of shingling (run them with spark-submit) and the transforms they chain."""
