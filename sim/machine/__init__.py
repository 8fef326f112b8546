"""The machine that runs threads: the card (card.py: its DRAM banks, its clusters and the
host threads that run them), a cluster running one thread (cluster.py: its layout, cores,
cache and calls), and whose turn it is (schedule.py). The top of the machine's layers: it
puts together every part below it, and nothing below it imports it (docs/simulator.md,
"The layers")."""
