"""Chapter "The last nanoseconds": the code behind chapter 13, in one place.

* ``micro``: the Python engine notes' micro-optimisation pairs, each computing the same thing, so only the technique differs.
* ``widget``: chapter 13's control: the measured savings read against one message's time.

The chapter itself is ``course/13_the_last_nanoseconds.ipynb``; it imports the engine modules it teaches,
``edumatcher.kit``, this package, and ``chapters.the_standard_tools`` (the readers for ``dis``).
"""
