"""Chapter "Beyond heaps" (an array-backed book, compiled forms, and the egress queue's memory):
the code behind the chapter, in one place.

* ``array_book``: Beyond heaps: price levels in parallel arrays, what that costs from Python, and what it costs in memory.
* ``compiled``: When to compile: one hot loop of a matching engine as Python, as NumPy, and compiled with Cython.
* ``egress``: An egress queue under overload: bounded by entries against bounded by bytes.
* ``figures``: the chapter's figures, each returning a matplotlib Figure.
* ``frame_memory``: What published frames really occupy: ``len``, ``sys.getsizeof`` and ``tracemalloc`` compared (chapter 12).
* ``widget``: Chapter 12's control: how big can a frame get, and what does each kind of bound then hold?

The chapter itself is ``course/NN_beyond_heaps.ipynb``; it imports the engine modules it teaches, ``edumatcher.kit``
and this package.
"""
