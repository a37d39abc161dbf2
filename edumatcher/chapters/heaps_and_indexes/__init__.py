"""Chapter "Heaps and indexes" (lazy deletion in binary heaps, compaction, and the book's indexes):
the code behind the chapter, in one place.

* ``figures``: the chapter's figures, each returning a matplotlib Figure.
* ``heaps``: Chapter 07's experiments: lazy against eager deletion, compaction factors, and what features cost.
* ``widget``: Chapter 07's control: choose ``compact_factor`` and slack, watch the heaps of a cancel-heavy run.

The chapter itself is ``course/NN_heaps_and_indexes.ipynb``; it imports the engine modules it teaches, ``edumatcher.kit``
and this package.
"""
