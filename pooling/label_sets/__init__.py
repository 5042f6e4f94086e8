"""Label sets read from a store, and what is measured between them.

A label set is what one source said about (topic, document) pairs: a qrels version, a
person's or a model judge's current judgments, a round's people as one set
(`sources`). `agreement` compares two of them pair by pair and over the runs they score
(`qrels_agreement`, `judge_agreement`); `triage` replays a triage strategy over a judge's
labels. The statistics themselves are `pooling.agreement`'s, which reads no store; this
package sits above the judging core and the model judges whose records it reads.
"""
