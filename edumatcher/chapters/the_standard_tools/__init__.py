"""Chapter "The standard tools" (cProfile, line_profiler, py-spy and pyperf on the engine, and flame graphs):
the code behind the chapter, in one place.

* ``figures``: Flame graphs and icicles drawn with matplotlib, from py-spy's folded stacks or from ``pstats``.
* ``micro``: The Python engine notes, "interpreter-level micro-optimisations", as pairs of small functions to time.
* ``out_of_process``: The two standard tools that measure from *another* process: pyperf and py-spy.
* ``tools``: Readers for the standard tools' raw output: pstats, line_profiler, tracemalloc and dis.
* ``widget``: Chapter 02's control: one cProfile, read three ways (sort key, rows, icicle root).

The chapter itself is ``course/NN_the_standard_tools.ipynb``; it imports the engine modules it teaches, ``edumatcher.kit``
and this package.
"""
