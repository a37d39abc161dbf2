"""Chapter "Measuring honestly" (the traps of timing (bimodal runs, kept frames, hand-offs, a noisy machine) and the checklist):
the code behind the chapter, in one place.

* ``bimodal``: The bimodal benchmark, reproduced: a big long-lived heap, a benchmark that keeps what it makes, the collector.
* ``checklist``: The checklist before touching a hot path, as a flow of yes/no questions a reader can walk.
* ``differential_coverage``: How often a differential test catches a planted bug, depending on the prices it draws.
* ``environment``: What a benchmark's environment looks like here, and which parts of it Python can set.
* ``figures``: Run-to-run pictures for chapter 03: the bimodal trap run by run, every run of every configuration, a before/after pair.
* ``handoff``: Handing messages from one thread to another: a consumer that polls against one that blocks.
* ``kept_frames``: What keeping every published frame costs the engine with the collector off: heap growth, measured.
* ``pitfalls``: Benchmark pitfalls, each as something that runs: one run against a median, cold against warm, alone against a neighbour.
* ``widget``: Chapter 03's control: walk the checklist before touching a hot path, one yes/no answer at a time.

The chapter itself is ``course/NN_measuring_honestly.ipynb``; it imports the engine modules it teaches, ``edumatcher.kit``
and this package.
"""
