"""The NoC's side of the card: what reaches DRAM past the X280's cache while a thread runs
(a Tensix stand-in: sim.noc.agent)."""
