"""Crowds: rounds open to every person, each unit answered by K of them, with known-answer
(gold) units mixed in, and what the organiser learns and decides about the workers.

The judging core knows none of this by name. Importing the package registers, with the core's
registries, the crowd queue policy and its may-judge extension (`queue_policy`: what a worker
is handed next, and that they answer only what was handed to them) and the aggregation rules
(`model_rules`: wawa, dawid-skene, gold-weighted); `pyproject.toml` declares it under each
registry's entry-point group, so the core loads it the first time a crowd round or a model
rule is asked for. The rest is read by the CLI and the pages: `quality` (workers' figures
against gold and each other), `decisions` (flags and withdrawals, append-only) and
`simulation` (simulated workers and gold drawn from an expert's qrels).
"""

from pooling.crowds import model_rules, queue_policy

__all__ = ["model_rules", "queue_policy"]
