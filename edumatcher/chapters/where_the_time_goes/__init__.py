"""Chapter "Where the time goes" (profiling the message path: cProfile's report, the edited engine's differential, the latency histogram's control):
the code behind the chapter, in one place.

* ``engine_differential``: Differential testing one level up: a changed ``Engine`` against the naive reference, message by message.
* ``figures``: A profile's top entries as a bar chart of own-time share, with the 1 % gate drawn.
* ``profiling``: Profile the engine's message path with ``cProfile`` and read the result as a table.
* ``widget``: Chapter 01's control: book depth and message count, and the latency distribution they give.

The chapter itself is ``course/NN_where_the_time_goes.ipynb``; it imports the engine modules it teaches, ``edumatcher.kit``
and this package.
"""
