"""Chapter "Construction and conversion" (what building an ``Order`` costs, by constructor and by enum lookup):
the code behind the chapter, in one place.

* ``construction``: The cost of turning data into objects and back: ``from_dict``, enums, builders, ids.
* ``widget``: Chapter 05's control: how many fields, which keys? ``S(**d)`` against ``__new__`` plus direct slot writes.

The chapter itself is ``course/NN_construction_and_conversion.ipynb``; it imports the engine modules it teaches, ``edumatcher.kit``
and this package.
"""
