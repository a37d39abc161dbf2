"""Chapter "Serialisation" (json against orjson, cached topics and timestamps on the message path):
the code behind the chapter, in one place.

* ``serialisation``: Serialisation costs of the message path: the JSON codec, topics, and macro against micro savings.
* ``timestamps``: Timestamps that never repeat or go backwards, and what they cost per read.
* ``widget``: Chapter 06's control: how big is the message? json against orjson as the payload grows.

The chapter itself is ``course/NN_serialisation.ipynb``; it imports the engine modules it teaches, ``edumatcher.kit``
and this package.
"""
