"""The natural order of topic ids, as the judging pages list them; the rule lives in
`pooling.formats.topic_order`, beside the other rules about topic ids."""

from pooling.formats.topic_order import in_topic_order, topic_key

__all__ = ["in_topic_order", "topic_key"]
