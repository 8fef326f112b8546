"""A debugger's view of a running thread: gdb's remote serial protocol (remote.py), the
registers it sees (registers.py), and the run control that stops the cores for it
(stub.py)."""
