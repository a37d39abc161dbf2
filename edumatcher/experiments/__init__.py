"""Experiments the course chapters run; each module returns plain data or Measurements."""
