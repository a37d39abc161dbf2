"""Chapter "Off the message path" (instrumentation by sampling, snapshots throttled, what the run loop does between messages):
the code behind the chapter, in one place.

* ``figures``: the chapter's figures, each returning a matplotlib Figure.
* ``instrumentation``: What measuring the engine costs the engine: sampled timing, and whether a sample can be trusted.
* ``snapshots``: Throttled snapshots: publishing the book on every change, against at most once per interval.
* ``widget``: Chapter 08's control: how rarely can the run loop time a message and still get the percentiles right?

The chapter itself is ``course/NN_off_the_message_path.ipynb``; it imports the engine modules it teaches, ``edumatcher.kit``
and this package.
"""
