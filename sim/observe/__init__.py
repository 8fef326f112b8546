"""Who watches a thread run: the probe points and their listeners (observers.py), the
cache's story (story.py), the trace's timeline (timeline.py) and the profile (profile.py).
The cluster makes them and says what happens; they read the thread through a Protocol
(observers.Thread), and nothing they watch imports them (docs/simulator.md, "The layers")."""
