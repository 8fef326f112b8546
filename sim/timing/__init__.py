"""The timing model: the X280's cycles (km.Session(timing="x280"); docs/timing.md).

x280.py holds the model's parameters, each with its value and where it comes from; the
model itself is C (sim/native/timing.c); model.py holds its state, a cluster's and each
core's, and reads what it counted."""
