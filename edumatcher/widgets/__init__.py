"""Interactive controls for the course chapters; each function returns an ipywidgets widget."""
