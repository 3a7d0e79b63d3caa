"""A real small cluster on one Linux machine: network namespaces as nodes, bridges as the fabric, tc as NICs.

See :mod:`.spec` (shape and commands), :mod:`.netns` (up/down/status), :mod:`.launch` (torchrun/mpirun
per node), :mod:`.model` (the α-β prediction for the emulated NIC) and :mod:`.cli`.
"""
