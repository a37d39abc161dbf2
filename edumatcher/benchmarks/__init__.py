"""Benchmarks that print figures (never assert them): ``python -m edumatcher bench NAME``.

Every benchmark runs on the one ``edumatcher.measure`` harness, compares things
measured in the same process (ratios survive a noisy shared machine), and opens
its output with the method and the interpreter.
"""
