"""Executors: where a plan's pieces run (:mod:`.base`: the interface and the registry;
:mod:`.local`, :mod:`.slurm`)."""
