"""Chapter "The Java question" (object pooling, and what held values cost every full collection):
the code behind the chapter, in one place.

* ``figures``: the chapter's figures, each returning a matplotlib Figure.
* ``held_values``: What holding n values costs every full collection, timed in a fresh, light process.
* ``pooling``: The Java question, measured: pooling ``Order`` objects against allocating them, and what pooling risks.
* ``widget``: Chapter 11's control: how you hold n values decides what every full collection pays for them.

The chapter itself is ``course/NN_the_java_question.ipynb``; it imports the engine modules it teaches, ``edumatcher.kit``
and this package.
"""
