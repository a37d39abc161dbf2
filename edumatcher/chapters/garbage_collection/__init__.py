"""Chapter "Garbage collection: the collector and the freeze" (pauses against heap size, the freeze):
the code behind the chapter, in one place.

* ``figures``: A full collection's pause against live objects.
* ``gc_pauses``: The cyclic collector, observed: what reference counting frees, what only a collection frees, and what a pause costs.
* ``widget``: Chapter 09's control: choose how many resting orders to keep alive and see what a full collection costs.

The chapter itself is ``course/NN_garbage_collection.ipynb``; it imports the engine modules it teaches, ``edumatcher.kit``
and this package.
"""
