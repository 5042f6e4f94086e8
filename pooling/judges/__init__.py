"""Model judges: automatic judges beside the people, built on the judging core.

A model judge is an assessor of kind `model` whose grades come from a backend
(`backends`: an OpenAI-compatible endpoint, any command, a learned classifier; pairs with
their texts in, verdicts out, never touching the store). `model_judges` keeps each judge's identity in the
store and runs the job that judges a round's pairs as the core's queue hands them out (here
or on Ray actors: `distributed`); `juries` asks several judges at once and aggregates their
grades by a recorded rule, `jury_report` measures a jury against gold, and `usage` counts
calls, tokens and cost; `grades_input` hands a judge's grades, on its backend's declared
scale, to the strategies that queue from them (registered with the core's
`STRATEGY_INPUTS`).

This package sits on the floor above `pooling.judging` and `pooling.crowds`
(tests/test_package_floors.py): it imports the core (rounds, queues, history, the one insert
of judgments) and the crowds' aggregation rules, and nothing of either imports it.
"""
