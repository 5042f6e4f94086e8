"""Judging: rounds (pools and their queues), assessors and assignments, judgments as an
append-only history, and the rules that make qrels versions from them.

Every rule of a judgment lives here, once, and the CLI, the batches, crowds
(`pooling.crowds`) and automatic judges (`pooling.judges`), on the floors above, and the web
pages (`pooling.web`, which keeps pages, sessions, caching and group commits) ask it:
who may judge what (`assignments`), whether a judgment is valid (`validation`), what to judge
next (`queue`: static and adaptive rounds behind one interface, and the queue policies of
packages above), storing and undoing (`judgments`: the one insert). What is judged is an item
type's unit or its parts (`item_types`); packages above plug in through the registries of
`plugins` (item types, queue policies, may-judge extensions, derivation rules).

Layers, each importing only those before it (so there is no import cycle):
`history` (a judgment, current grades) → `rounds` (strategies' queues) → `assignments`
(who may judge what) and `validation` (is it valid) → `queue` (what is next) and `judgments`
(recording, undo) → `assessors` (people), `batches` (offline CSV/JSONL) and `rules`
(qrels).
"""
