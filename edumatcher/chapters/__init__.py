"""Each course chapter's own code, named after the chapter's topic: its experiments, figures and control.

A chapter ``course/NN_<topic>.ipynb`` has its support in ``edumatcher.chapters.<topic>`` (a package, or a
module for a small chapter). Code several chapters use lives in the measuring kit (``edumatcher.kit``:
timing, comparisons, the shared plotting style in ``kit.plots``, the side-by-side tables) or in the
engine itself, never here.
"""
