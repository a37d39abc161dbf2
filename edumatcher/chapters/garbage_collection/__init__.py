"""Chapter "Garbage collection" (pauses against heap size, the tail they make, the opening ramp's memory):
the code behind the chapter, in one place.

* ``figures``: Pictures of the cyclic collector: pause against live objects, memory over an opening, tails with and without the policy.
* ``gc_pauses``: The cyclic collector, observed: what reference counting frees, what only a collection frees, and what a pause costs.
* ``gc_tail``: Tail latency with the default collector and with ``GcPolicy``, as clients see it: a small ``bench gc``.
* ``opening_memory``: Memory over an opening: why the freeze waits until the book has filled.
* ``widget``: Chapter 09's control: choose how many resting orders to keep alive and see what a full collection costs.

The chapter itself is ``course/NN_garbage_collection.ipynb``; it imports the engine modules it teaches, ``edumatcher.kit``
and this package.
"""
