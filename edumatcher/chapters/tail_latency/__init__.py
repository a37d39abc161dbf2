"""Chapter "Tail latency: the policy and the pause": the code behind chapter 10, in one place.

* ``figures``: memory over an opening, the rush message by message, response time over the stream, service-time histograms.
* ``gc_tail``: tail latency with the default collector and with ``GcPolicy``, as clients see it: a small ``bench gc``.
* ``opening_memory``: memory over an opening: why the freeze waits until the book has filled.
* ``widget``: chapter 10's control: slide along the percentiles of the stream the chapter ran.

The chapter itself is ``course/10_tail_latency.ipynb``; it imports the engine modules it teaches, ``edumatcher.kit``,
this package, and ``chapters.garbage_collection`` (the policy walkthrough) and ``chapters.heaps_and_indexes``
(the heap-entry layouts).
"""
