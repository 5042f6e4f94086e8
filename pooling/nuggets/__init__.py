"""Generated answers judged by nuggets: the item types, assignment rounds over a frozen
nugget version, assignment versions derived from them, and runs scored from the store.

An answer for a topic is a unit of the judging core, like a document; its parts are the
nuggets of the version the round judges. The core's machinery (batches, the JSON API,
judgments with parts, derivation rules, agreement) therefore applies to answers as it does
to documents' subtopics; this package adds what is particular to nuggets and registers its
item type with the core (`pooling.judging.item_types`).
"""

from pooling.nuggets.item_types import NUGGET_ASSIGNMENT  # noqa: F401  (registers the type)
