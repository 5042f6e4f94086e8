"""The measure registry: every measure, its parameters, trec_eval name and ir_measures spelling.

Entries are in trec_eval's fixed output order (measures.c), extras last; `-q` blocks and the
summary print measures in this order, not in the order they were asked for.
"""

from __future__ import annotations

from pooling.measures import average_precision as ap
from pooling.measures import counts, gain, incomplete, precision, user_models
from pooling.measures import intent_aware as ia
from pooling.measures import preferences as prefs
from pooling.measures.spec import Kind, MeasureSpec, Params

CUTOFFS = "5,10,15,20,30,100,200,500,1000"
RECALL_POINTS = "0.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0"


def _none(*_args: object) -> None:  # runid / num_q are filled in by the engine
    return None


SPECS: tuple[MeasureSpec, ...] = (
    MeasureSpec("runid", "counts", "Run tag of the last line of the run file.", _none,
                kind=Kind.RUNID, uses_level=False, rel_info=None),
    MeasureSpec("num_q", "counts", "Number of topics evaluated.", _none, kind=Kind.NUM_Q,
                uses_level=False, ir_name="NumQ", rel_info=None),
    MeasureSpec("num_ret", "counts", "Documents retrieved (after -M).", counts.num_ret,
                kind=Kind.COUNT, uses_level=False, ir_name="NumRet"),
    MeasureSpec("num_rel", "counts", "Relevant judgments (grade >= level), retrieved or not.",
                counts.num_rel, kind=Kind.COUNT, ir_name="NumRel"),
    MeasureSpec("num_rel_ret", "counts", "Relevant documents retrieved.", counts.num_rel_ret,
                kind=Kind.COUNT, ir_name="NumRelRet"),
    MeasureSpec("map", "average_precision", "Average precision (over R), mean over topics.",
                ap.average_precision, ir_name="AP"),
    MeasureSpec("gm_map", "average_precision",
                "Geometric mean of average precision, each floored at 1e-5.",
                ap.gm_average_precision, kind=Kind.GEO),
    MeasureSpec("Rprec", "precision", "Precision at rank R (divided by R).",
                precision.r_precision, ir_name="Rprec"),
    MeasureSpec("bpref", "incomplete", "Binary preference: unjudged documents are skipped.",
                incomplete.bpref, ir_name="Bpref"),
    MeasureSpec("recip_rank", "precision", "Reciprocal rank of the first relevant document.",
                precision.recip_rank, ir_name="RR"),
    MeasureSpec("iprec_at_recall", "average_precision",
                "Interpolated precision at recall levels (lround(p R)-th relevant doc).",
                ap.iprec_at_recall, Params.FRACTIONS, RECALL_POINTS, ir_name="IPrec@k"),
    MeasureSpec("P", "precision", "Precision at cutoff k (divided by k).", precision.precision,
                Params.CUTOFFS, CUTOFFS, ir_name="P@k"),
    MeasureSpec("relstring", "counts",
                "Relevance of the top N docs as text: digit, '-' non-pool, '.' unjudged.",
                counts.relstring, Params.DEPTH, "10", kind=Kind.TEXT),
    MeasureSpec("recall", "precision", "Recall at cutoff k.", precision.recall,
                Params.CUTOFFS, CUTOFFS, ir_name="R@k"),
    MeasureSpec("infAP", "incomplete", "Inferred average precision (Yilmaz & Aslam).",
                incomplete.inf_ap, ir_name="infAP"),
    MeasureSpec("gm_bpref", "incomplete", "Geometric mean of bpref, each floored at 1e-5.",
                incomplete.gm_bpref, kind=Kind.GEO),
    MeasureSpec("Rprec_mult", "precision", "Precision at trunc(x R + 0.9).",
                precision.r_precision_mult, Params.FRACTIONS,
                "0.2,0.4,0.6,0.8,1.0,1.2,1.4,1.6,1.8,2.0"),
    MeasureSpec("utility", "counts", "Contingency utility a*A + b*B + c*C + d*D.",
                counts.utility, Params.UTILITY, "1,-1,0,0"),
    MeasureSpec("11pt_avg", "average_precision",
                "Mean interpolated precision at the recall levels listed (ascending).",
                ap.eleven_point_average, Params.FRACTION_LIST, RECALL_POINTS),
    MeasureSpec("binG", "gain", "Binary G: relevant docs discounted by non-relevant above.",
                gain.bin_g),
    MeasureSpec("G", "gain", "trec_eval's G (gain over ideal cumulative gain).", gain.gain_g,
                Params.GAINS, uses_level=False),
    MeasureSpec("ndcg", "gain", "nDCG over the whole ranking; linear gain = grade.", gain.ndcg,
                Params.GAINS, uses_level=False, ir_name="nDCG"),
    MeasureSpec("ndcg_rel", "gain", "nDCG averaged over the relevant documents.",
                gain.ndcg_rel, Params.GAINS, uses_level=False),
    MeasureSpec("Rndcg", "gain", "nDCG averaged at the end of each ideal gain level.",
                gain.rndcg, Params.GAINS),
    MeasureSpec("ndcg_cut", "gain", "nDCG at cutoff k; linear gain = grade.", gain.ndcg_cut,
                Params.CUTOFFS, CUTOFFS, uses_level=False, ir_name="nDCG@k"),
    MeasureSpec("map_cut", "average_precision", "Average precision over the top k (over R).",
                ap.average_precision_cut, Params.CUTOFFS, CUTOFFS, ir_name="AP@k"),
    MeasureSpec("relative_P", "precision", "Relevant in the top k over min(k, R).",
                precision.relative_precision, Params.CUTOFFS, CUTOFFS),
    MeasureSpec("success", "precision", "1 if a relevant doc is in the top k.",
                precision.success, Params.CUTOFFS, "1,5,10", ir_name="Success@k"),
    MeasureSpec("set_P", "counts", "Precision of the whole retrieved set.", counts.set_p,
                ir_name="SetP"),
    MeasureSpec("set_relative_P", "counts", "num_rel_ret over min(num_ret, R).",
                counts.set_relative_p),
    MeasureSpec("set_recall", "counts", "Recall of the whole retrieved set.",
                counts.set_recall, ir_name="SetR"),
    MeasureSpec("set_map", "counts", "set_P times set_recall.", counts.set_map,
                ir_name="SetAP"),
    MeasureSpec("set_F", "counts", "F of the retrieved set, (b+1)PR/(bP+R).", counts.set_f,
                Params.NUMBER, "1.0", ir_name="SetF"),
    MeasureSpec("num_nonrel_judged_ret", "counts", "Retrieved documents judged non-relevant.",
                counts.num_nonrel_judged_ret, kind=Kind.COUNT),
    # ---- preference judgments (-R prefs or -R qrels_prefs), measures.c's order
    *(MeasureSpec(name, "preferences", text, fn, kind=kind, uses_level=False, rel_info="prefs")
      for name, text, fn, kind in (
        ("prefs_num_prefs_poss", "Preferences possible, retrieved or not (summed).",
         prefs.num_prefs_possible, Kind.COUNT),
        ("prefs_num_prefs_ful", "Preferences fulfilled, implied ones included (summed).",
         prefs.num_prefs_fulfilled, Kind.COUNT),
        ("prefs_num_prefs_ful_ret", "Preferences fulfilled between retrieved docs (summed).",
         prefs.num_prefs_fulfilled_ret, Kind.COUNT),
        ("prefs_simp", "Preferences fulfilled over possible (an unretrieved pair fails).",
         prefs.simple, Kind.FLOAT),
        ("prefs_pair", "Mean over doc pairs of the share of their preferences fulfilled.",
         prefs.pairs, Kind.FLOAT),
        ("prefs_avgjg", "prefs_simp per judgment group, averaged over the groups.",
         prefs.avg_over_groups, Kind.FLOAT),
        ("prefs_avgjg_Rnonrel", "prefs_avgjg with as many non-relevant docs as relevant.",
         prefs.avg_over_groups_rnonrel, Kind.FLOAT),
        ("prefs_simp_ret", "prefs_simp over pairs of retrieved docs only.",
         prefs.simple_ret, Kind.FLOAT),
        ("prefs_pair_ret", "prefs_pair over pairs of retrieved docs only.",
         prefs.pairs_ret, Kind.FLOAT),
        ("prefs_avgjg_ret", "prefs_avgjg over pairs of retrieved docs only.",
         prefs.avg_over_groups_ret, Kind.FLOAT),
        ("prefs_avgjg_Rnonrel_ret", "prefs_avgjg_Rnonrel over retrieved docs only.",
         prefs.avg_over_groups_rnonrel_ret, Kind.FLOAT),
        ("prefs_simp_imp", "prefs_simp ignoring pairs with neither doc retrieved.",
         prefs.simple_imp, Kind.FLOAT),
        ("prefs_pair_imp", "prefs_pair ignoring pairs with neither doc retrieved.",
         prefs.pairs_imp, Kind.FLOAT),
        ("prefs_avgjg_imp", "prefs_avgjg ignoring pairs with neither doc retrieved.",
         prefs.avg_over_groups_imp, Kind.FLOAT),
      )),
    # ---- several judgment groups per topic (-R qrels_jg): averaged over the groups
    MeasureSpec("map_avgjg", "judgment_groups", "map per judgment group, averaged over them.",
                ap.average_precision, rel_info="qrels_jg"),
    MeasureSpec("P_avgjg", "judgment_groups", "P at cutoff k per judgment group, averaged.",
                precision.precision, Params.CUTOFFS, CUTOFFS, rel_info="qrels_jg"),
    MeasureSpec("Rprec_mult_avgjg", "judgment_groups",
                "Rprec_mult per judgment group, averaged over them.", precision.r_precision_mult,
                Params.FRACTIONS, "0.2,0.4,0.6,0.8,1.0,1.2,1.4,1.6,1.8,2.0", rel_info="qrels_jg"),
    MeasureSpec("rbp", "user_models", "Rank-biased precision (Moffat & Zobel), p = 0.9.",
                user_models.rbp, Params.RBP, "p=0.9", uses_level=False, ir_name="RBP"),
    MeasureSpec("rbp_resid", "user_models", "RBP residual: how much unjudged docs could add.",
                user_models.rbp_resid, Params.RBP, "p=0.9", uses_level=False),
    MeasureSpec("unj", "incomplete", "Share of the top k without a judgment (-1 or -2).",
                incomplete.unjudged, Params.CUTOFFS, "5,10,20", uses_level=False),
    # ---- beyond trec_eval (docs/trec_eval-semantics.md#measures-beyond-trec_eval):
    # identity is the ir_measures name
    MeasureSpec("Judged", "incomplete",
                "Judged share of the top min(k, n) in trec_eval's and the pool's order "
                "(score ties: doc_id descending).",
                incomplete.judged, Params.CUTOFFS, "10", uses_level=False,
                ir_name="Judged@k", trec=False),
    MeasureSpec("Judged_ties_asc", "incomplete",
                "ir_measures' own Judged@k: as Judged@k, but score ties by doc_id ascending, "
                "so with ties it can differ from the pool's view.",
                incomplete.judged_ties_ascending, Params.CUTOFFS, "10", uses_level=False,
                ir_name="Judged(ties=asc)@k", trec=False),
    MeasureSpec("RR", "precision", "Reciprocal rank of the first relevant doc in the top k.",
                precision.recip_rank_cut, Params.CUTOFFS, "10", ir_name="RR@k", trec=False),
    MeasureSpec("AP_minrk", "average_precision",
                "AP over the top k divided by min(R, k) (recommender-systems AP@k).",
                ap.average_precision_min_cut, Params.CUTOFFS, "10",
                ir_name="AP(denom=minrk)@k", trec=False),
    MeasureSpec("ERR", "user_models", "Expected reciprocal rank at k, gdeval (g_max = 4).",
                user_models.err, Params.CUTOFFS, "20", uses_level=False, ir_name="ERR@k",
                trec=False),
    MeasureSpec("nDCG_exp", "user_models",
                "nDCG at k as gdeval computes it: gain 2^g - 1, ideal from all judgments.",
                user_models.gdeval_ndcg, Params.CUTOFFS, "20", uses_level=False,
                ir_name="nDCG(dcg='exp-log2')@k", trec=False),
    MeasureSpec("CG", "gain", "Cumulative gain at k (sum of grades > 0).", gain.cg_cut,
                Params.CUTOFFS, "10", uses_level=False, ir_name="CG@k", trec=False),
    MeasureSpec("DCG", "gain", "Discounted cumulative gain at k (ndcg_cut's numerator).",
                gain.dcg_cut, Params.CUTOFFS, "10", uses_level=False, ir_name="DCG@k",
                trec=False),
    MeasureSpec("Fallout", "precision",
                "Non-relevant docs in the top k over the collection's non-relevant docs, "
                "N - R (N: the collection size, -N).", precision.fallout, Params.CUTOFFS, "10",
                ir_name="Fallout@k", trec=False),
    MeasureSpec("set_fallout", "counts",
                "Non-relevant docs retrieved over the collection's non-relevant docs, N - R.",
                counts.set_fallout, ir_name="set_fallout", trec=False),
    # ---- diversity, from subtopic qrels (-R subtopics), in ndeval's column order; identity is
    # ndeval's name, the ir_measures spelling reads as the same measure (docs/diversity.md)
    *(MeasureSpec(name, "intent_aware", text, fn, Params.CUTOFFS if cut else Params.NONE,
                  "5,10,20" if cut else "", ir_name=ir + ("@k" if cut else ""), trec=False,
                  rel_info="subtopics", settings=settings,
                  column=name + ("@k" if cut else ""))
      for name, ir, cut, settings, fn, text in (
        ("ERR-IA", "ERR_IA", True, ("alpha",), ia.err_ia,
         "ndeval's ERR-IA@k: α-discounted gain over rank, over an ideal-ideal."),
        ("nERR-IA", "nERR_IA", True, ("alpha",), ia.nerr_ia,
         "ndeval's nERR-IA@k: ERR-IA@k over that of the greedy ideal ranking."),
        ("alpha-DCG", "alpha_DCG", True, ("alpha",), ia.alpha_dcg,
         "ndeval's alpha-DCG@k: α-DCG over an ideal-ideal (each rank relevant to all)."),
        ("alpha-nDCG", "alpha_nDCG", True, ("alpha",), ia.alpha_ndcg,
         "ndeval's alpha-nDCG@k: α-DCG@k over that of the greedy ideal ranking."),
        ("NRBP", "NRBP", False, ("alpha", "beta"), ia.nrbp,
         "ndeval's NRBP: novelty- and rank-biased precision (α, patience β)."),
        ("nNRBP", "nNRBP", False, ("alpha", "beta"), ia.nnrbp,
         "ndeval's nNRBP: NRBP over that of the greedy ideal ranking."),
        ("MAP-IA", "AP_IA", False, (), ia.map_ia,
         "ndeval's MAP-IA: each subtopic's AP, averaged over the topic's subtopics."),
        ("P-IA", "P_IA", True, (), ia.p_ia,
         "ndeval's P-IA@k: relevant (doc, subtopic) pairs in the top k over k x subtopics."),
        ("strec", "StRecall", True, (), ia.subtopic_recall,
         "ndeval's strec@k: share of the subtopics with a relevant doc in the top k."),
      )),
)

REGISTRY: dict[str, MeasureSpec] = {spec.name: spec for spec in SPECS}
ORDER: dict[str, int] = {spec.name: i for i, spec in enumerate(SPECS)}

_OFFICIAL = "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P"
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": tuple(_OFFICIAL.split()),
    "all_trec": tuple(
        (
            _OFFICIAL + " relstring recall unj rbp rbp_resid infAP gm_bpref utility 11pt_avg ndcg"
            " relative_P Rprec_mult success map_cut ndcg_cut ndcg_rel Rndcg binG G set_P"
            " set_recall set_relative_P set_map set_F num_nonrel_judged_ret"
        ).split()
    ),
    "set": tuple(
        "runid num_q num_ret num_rel num_rel_ret utility set_P set_recall set_relative_P"
        " set_map set_F".split()
    ),
    "all_prefs": ("runid", "num_q", *(s.name for s in SPECS if s.family == "preferences")),
    "prefs": tuple(
        "runid num_q prefs_num_prefs_poss prefs_num_prefs_ful prefs_num_prefs_ful_ret prefs_simp"
        " prefs_pair prefs_avgjg".split()
    ),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
    "ndeval": tuple(s.name for s in SPECS if s.family == "intent_aware"),
}
