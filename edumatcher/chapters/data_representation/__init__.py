"""Chapter "Data representation" (exact prices as integer ticks, ``__slots__`` and inline values, what each field costs in memory):
the code behind the chapter, in one place.

* ``exact_prices``: Why prices are integer ticks: a float price is an unreliable dictionary key.
* ``figures``: Plain against slotted instances: one class's memory, construction and read; memory against field count.
* ``inline_values``: Where a plain instance keeps its attributes, and why its size jumps at about 30 fields.
* ``slots``: What ``__slots__`` buys on this interpreter: memory, construction and attribute reads.
* ``widget``: Chapter 04's control: how many fields? Memory, construction and reads, plain against slotted.

The chapter itself is ``course/NN_data_representation.ipynb``; it imports the engine modules it teaches, ``edumatcher.kit``
and this package.
"""
