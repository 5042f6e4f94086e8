"""Model judges: automatic judges beside the people, built on the judging core.

A model judge is an assessor of kind `model` whose grades come from a backend
(`pooling.judge_backends`: an OpenAI-compatible endpoint, any command, a learned classifier;
pairs with their texts in, verdicts out, never touching the store). `model_judges` keeps each judge's identity in the
store and runs the job that judges a round's pairs as the core's queue hands them out (here
or on Ray actors: `distributed`); `juries` asks several judges at once and aggregates their
grades by a recorded rule, `jury_report` measures a jury against gold, and `usage` counts
calls, tokens and cost.

This package sits on the floor above `pooling.judging` (tests/test_package_floors.py): it
imports the core (rounds, queues, history, the one insert of judgments), and nothing of the
core imports it. The backends are a package of their own below the core (they import no
judging module and no store), so that the core can read a backend's declared grade scale.
"""
