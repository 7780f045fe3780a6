"""Executors: where cells run (in this process, or as a SLURM job array)."""
