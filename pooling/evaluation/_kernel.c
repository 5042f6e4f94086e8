/* The evaluator's hot path in C: a run's lines -> each judged document's place in
 * trec_eval's ranking (score descending, ties by doc_id descending in byte order).
 *
 * A run arrives as text (a clean run file, or a byte range of one) or as Arrow columns
 * (a stored run). Lines are taken topic by topic: when a topic's lines end, its judged
 * documents get their 0-based position (and the position under doc_id ascending ties, for
 * Judged(ties=asc)@k); nothing else of the topic is kept. The work runs without the GIL,
 * so two scanners (two halves of a file, or two runs) use two cores.
 *
 * Anything out of the ordinary stops a scan with a status instead of an answer, and the
 * caller takes the general path, which says what is wrong: a line that is not six fields
 * separated by single spaces, a score that is not a plain decimal number, a control byte,
 * a non-ASCII query_id, a doc_id twice in a topic, or a topic whose lines are not together.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    ST_OK = 0,
    ST_NOT_CLEAN = 1,  /* a line the general path must read */
    ST_DUPLICATE = 2,  /* a doc_id twice in a topic */
    ST_UNGROUPED = 3,  /* a topic's lines are not together */
};

/* ------------------------------------------------------------------ hashing */

static inline uint64_t mix(uint64_t h) {
    h ^= h >> 31;
    h *= 0xFF51AFD7ED558CCDULL;
    h ^= h >> 29;
    return h;
}

static inline uint64_t hash_bytes(const unsigned char *p, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)n * 0xC4CEB9FE1A85EC53ULL);
    const unsigned char *q = p;
    size_t m = n;
    while (m > 8) {
        uint64_t w;
        memcpy(&w, q, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
        h ^= h >> 32;
        q += 8;
        m -= 8;
    }
    /* the last 1-8 bytes in one or two loads (overlapping what was mixed in): a byte-wise
     * copy into a word would stall on the store-to-load forward */
    uint64_t w;
    if (n >= 8) {
        memcpy(&w, p + n - 8, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, p, 4);
        memcpy(&b, p + n - 4, 4);
        w = ((uint64_t)a << 32) | b;
    } else if (n > 0) {
        w = ((uint64_t)p[0] << 16) | ((uint64_t)p[n >> 1] << 8) | p[n - 1];
    } else {
        w = 0;
    }
    return mix((h ^ w) * 0xC4CEB9FE1A85EC53ULL);
}

static inline int bytes_cmp(const unsigned char *a, size_t na, const unsigned char *b, size_t nb) {
    int c = memcmp(a, b, na < nb ? na : nb);
    if (c)
        return c;
    return (na > nb) - (na < nb);
}

/* The i-th of Arrow's int32 (width 4) or int64 (width 8) offsets. */
static inline int64_t offset_at(const unsigned char *offsets, int width, int64_t i) {
    if (width == 8) {
        int64_t v;
        memcpy(&v, offsets + 8 * i, 8);
        return v;
    }
    int32_t v;
    memcpy(&v, offsets + 4 * i, 4);
    return v;
}

/* ------------------------------------------------------------------ qrels */

typedef struct {
    int64_t n_topics;
    unsigned char *topic_data; /* topic i: topic_data[topic_off[i] .. topic_off[i+1]) */
    int64_t *topic_off;
    uint64_t topic_mask;
    int32_t *topic_slot; /* open addressing over topic hashes: topic index or -1 */
    int64_t *topic_first; /* rows are grouped by topic: topic t's are [first, first+count) */
    int64_t *topic_count;
    int64_t n_rows;
    /* the doc_ids: the caller's Arrow buffers, held (not copied) while the table lives */
    Py_buffer doc_view, offset_view;
    int views; /* how many of the two views are held */
    const unsigned char *doc_data;
    const unsigned char *doc_offsets;
    int width;      /* bytes per offset: 4 or 8 */
    int64_t start;  /* the array's first offset */
    int64_t n_dups, cap_dups;
    int64_t *dups; /* rows whose (topic, doc_id) an earlier row already has */
} Qrels;

static void qrels_free(Qrels *q) {
    if (!q)
        return;
    free(q->topic_data);
    free(q->topic_off);
    free(q->topic_slot);
    free(q->topic_first);
    free(q->topic_count);
    free(q->dups);
    if (q->views > 0)
        PyBuffer_Release(&q->doc_view);
    if (q->views > 1)
        PyBuffer_Release(&q->offset_view);
    free(q);
}

/* Judgment row r's doc_id and its length. */
static inline const unsigned char *qrels_doc(const Qrels *q, int64_t r, size_t *n) {
    int64_t a = offset_at(q->doc_offsets, q->width, q->start + r);
    *n = (size_t)(offset_at(q->doc_offsets, q->width, q->start + r + 1) - a);
    return q->doc_data + a;
}

static void qrels_capsule_free(PyObject *cap) {
    qrels_free((Qrels *)PyCapsule_GetPointer(cap, "pooling.qrels"));
}

static uint64_t table_size(int64_t n) {
    uint64_t size = 16;
    while (size < (uint64_t)n * 2 + 1)
        size <<= 1;
    return size;
}

static int64_t find_topic(const Qrels *q, const unsigned char *p, size_t n) {
    uint64_t i = hash_bytes(p, n) & q->topic_mask;
    for (;;) {
        int32_t t = q->topic_slot[i];
        if (t < 0)
            return -1;
        size_t len = (size_t)(q->topic_off[t + 1] - q->topic_off[t]);
        if (len == n && memcmp(q->topic_data + q->topic_off[t], p, n) == 0)
            return t;
        i = (i + 1) & q->topic_mask;
    }
}

/* One topic's judgments as a small hash table (it stays in cache while the topic's lines
 * are looked up in it). */
typedef struct {
    uint64_t mask;
    uint64_t *hash;
    int32_t *row;
    size_t cap;
} TopicJudgments;

static inline int64_t topic_judgment(const TopicJudgments *tj, const Qrels *q,
                                     const unsigned char *p, size_t n, uint64_t h) {
    uint64_t i = h & tj->mask;
    for (;;) {
        int32_t r = tj->row[i];
        if (r < 0)
            return -1;
        if (tj->hash[i] == h) {
            size_t len;
            const unsigned char *doc = qrels_doc(q, r, &len);
            if (len == n && memcmp(doc, p, n) == 0)
                return r;
        }
        i = (i + 1) & tj->mask;
    }
}

/* An open-addressing table's slots (hashes beside int32 rows): at least `want` of them, a
 * power of two of 16 or more, every row cleared to -1. Returns the slot count, 0 when memory
 * runs out. */
static size_t slots_ready(uint64_t **hash, int32_t **row, size_t *cap, size_t want) {
    size_t size = 16;
    while (size < want)
        size <<= 1;
    if (*cap < size) {
        uint64_t *h = realloc(*hash, size * sizeof(uint64_t));
        if (h)
            *hash = h;
        int32_t *r = realloc(*row, size * sizeof(int32_t));
        if (r)
            *row = r;
        if (!h || !r)
            return 0;
        *cap = size;
    }
    memset(*row, 0xff, size * sizeof(int32_t));
    return size;
}

/* Fill the table with topic t's judgments; a (topic, doc_id) seen before goes to the
 * qrels' dups when `note_dups`. Returns -1 on memory exhaustion. */
static int topic_judgments_fill(TopicJudgments *tj, Qrels *q, int64_t t, int note_dups) {
    int64_t first = q->topic_first[t], count = q->topic_count[t];
    size_t size = slots_ready(&tj->hash, &tj->row, &tj->cap, (size_t)count * 4);
    if (!size)
        return -1;
    tj->mask = size - 1;
    for (int64_t r = first; r < first + count; r++) {
        size_t n;
        const unsigned char *p = qrels_doc(q, r, &n);
        uint64_t h = hash_bytes(p, n);
        if (topic_judgment(tj, q, p, n, h) >= 0) {
            if (note_dups) {
                if (q->n_dups == q->cap_dups) {
                    int64_t cap = q->cap_dups ? q->cap_dups * 2 : 16;
                    int64_t *d = realloc(q->dups, (size_t)cap * sizeof(int64_t));
                    if (!d)
                        return -1;
                    q->dups = d;
                    q->cap_dups = cap;
                }
                q->dups[q->n_dups++] = r;
            }
            continue;
        }
        uint64_t i = h & tj->mask;
        while (tj->row[i] >= 0)
            i = (i + 1) & tj->mask;
        tj->row[i] = (int32_t)r;
        tj->hash[i] = h;
    }
    return 0;
}

static unsigned char *copy_data(const Py_buffer *b) {
    unsigned char *out = malloc((size_t)b->len + 1);
    if (out)
        memcpy(out, b->buf, (size_t)b->len);
    return out;
}

/* qrels_table(topic_data, topic_offsets[T+1] int64, doc_data, doc_offsets, width, start,
 * row_topic[E] int64) -> capsule. The doc_ids are an Arrow binary array's buffers (offsets
 * of `width` bytes from index `start`), held by the table, not copied; rows are grouped by
 * topic in the topics' order (strcmp order). */
static PyObject *qrels_table(PyObject *self, PyObject *args) {
    Py_buffer td, to, rt;
    PyObject *doc_obj, *offsets_obj;
    int width;
    long long start;
    if (!PyArg_ParseTuple(args, "y*y*OOiLy*", &td, &to, &doc_obj, &offsets_obj, &width, &start,
                          &rt))
        return NULL;
    Qrels *q = calloc(1, sizeof(Qrels));
    PyObject *result = NULL;
    if (!q) {
        PyErr_NoMemory();
        goto done;
    }
    if (PyObject_GetBuffer(doc_obj, &q->doc_view, PyBUF_SIMPLE) < 0)
        goto done;
    q->views = 1;
    if (PyObject_GetBuffer(offsets_obj, &q->offset_view, PyBUF_SIMPLE) < 0)
        goto done;
    q->views = 2;
    q->n_topics = (int64_t)(to.len / 8) - 1;
    q->n_rows = (int64_t)(rt.len / 8);
    q->width = width;
    q->start = start;
    if (q->n_topics < 0 || (width != 4 && width != 8) || start < 0 ||
        q->offset_view.len < (Py_ssize_t)(width * (start + q->n_rows + 1))) {
        PyErr_SetString(PyExc_ValueError, "qrels_table: offsets do not match");
        goto done;
    }
    q->doc_data = q->doc_view.buf;
    q->doc_offsets = q->offset_view.buf;
    q->topic_data = copy_data(&td);
    q->topic_off = malloc(sizeof(int64_t) * (size_t)(q->n_topics + 1));
    uint64_t tsize = table_size(q->n_topics);
    q->topic_mask = tsize - 1;
    q->topic_slot = malloc(sizeof(int32_t) * tsize);
    size_t nt = (size_t)(q->n_topics > 0 ? q->n_topics : 1);
    q->topic_first = calloc(nt, sizeof(int64_t));
    q->topic_count = calloc(nt, sizeof(int64_t));
    if (!q->topic_data || !q->topic_off || !q->topic_slot || !q->topic_first || !q->topic_count) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(q->topic_off, to.buf, sizeof(int64_t) * (size_t)(q->n_topics + 1));
    memset(q->topic_slot, 0xff, sizeof(int32_t) * tsize);
    for (int64_t t = 0; t < q->n_topics; t++) {
        const unsigned char *p = q->topic_data + q->topic_off[t];
        size_t n = (size_t)(q->topic_off[t + 1] - q->topic_off[t]);
        uint64_t i = hash_bytes(p, n) & q->topic_mask;
        while (q->topic_slot[i] >= 0)
            i = (i + 1) & q->topic_mask;
        q->topic_slot[i] = (int32_t)t;
    }
    const int64_t *row_topic = rt.buf;
    for (int64_t r = 0; r < q->n_rows; r++) {
        int64_t t = row_topic[r];
        if (t < 0 || t >= q->n_topics || (r > 0 && t < row_topic[r - 1])) {
            PyErr_SetString(PyExc_ValueError,
                            "qrels_table: rows must be grouped by topic, in topic order");
            goto done;
        }
        if (q->topic_count[t]++ == 0)
            q->topic_first[t] = r;
    }
    TopicJudgments tj = {0};
    for (int64_t t = 0; t < q->n_topics; t++) {
        if (q->topic_count[t] && topic_judgments_fill(&tj, q, t, 1)) {
            free(tj.hash);
            free(tj.row);
            PyErr_NoMemory();
            goto done;
        }
    }
    free(tj.hash);
    free(tj.row);
    result = PyCapsule_New(q, "pooling.qrels", qrels_capsule_free);
    if (result)
        q = NULL;
done:
    qrels_free(q);
    PyBuffer_Release(&td);
    PyBuffer_Release(&to);
    PyBuffer_Release(&rt);
    return result;
}

/* qrels_duplicates(capsule) -> bytes of int64 rows judged a second time in their topic. */
static PyObject *qrels_duplicates(PyObject *self, PyObject *cap) {
    Qrels *q = PyCapsule_GetPointer(cap, "pooling.qrels");
    if (!q)
        return NULL;
    return PyBytes_FromStringAndSize((const char *)q->dups, (Py_ssize_t)(8 * q->n_dups));
}

/* ------------------------------------------------------------------ scanner */

typedef struct {
    double score;
    uint64_t hash;
    uint32_t doc_off; /* into the topic's arena */
    uint32_t doc_len;
    int32_t qrow;     /* judgment row, -1 if not judged */
    int32_t pad;
} Line;

typedef struct {
    int64_t *v;
    size_t n, cap;
} Vec;

static int vec_push(Vec *v, int64_t x) {
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 1024;
        int64_t *p = realloc(v->v, cap * sizeof(int64_t));
        if (!p)
            return -1;
        v->v = p;
        v->cap = cap;
    }
    v->v[v->n++] = x;
    return 0;
}

typedef struct {
    PyObject *qrels_ref; /* keeps the qrels capsule alive */
    const Qrels *q;
    int status;
    int64_t rows;       /* data lines seen */
    int64_t *num_ret;   /* lines per qrels topic */
    unsigned char *done; /* a qrels topic's lines have ended */
    /* the current topic */
    unsigned char cur_topic[256];
    size_t cur_len;     /* (size_t)-1: no topic yet; longer ids than 255 bytes: not clean */
    int64_t cur_index;  /* qrels topic index, -1 if the qrels lack it */
    Line *lines;
    size_t n_lines, cap_lines;
    unsigned char *arena;
    size_t arena_len, arena_cap;
    int sorted;         /* lines are in descending score order so far */
    int64_t n_judged_here;
    TopicJudgments judgments; /* the current topic's */
    /* output: one entry per judged retrieved document */
    Vec out_topic, out_pos, out_asc, out_qrow;
    /* scratch */
    int32_t *set;
    uint64_t *set_hash;
    size_t set_cap;
    int unique; /* the rows are known to hold no doc_id twice in a topic (a stored run) */
    uint32_t *order;
    size_t order_cap;
    unsigned char tag[256];
    size_t tag_len;     /* (size_t)-1: tag longer than 255 bytes */
} Scanner;

static void scanner_free(Scanner *s) {
    if (!s)
        return;
    Py_XDECREF(s->qrels_ref);
    free(s->num_ret);
    free(s->done);
    free(s->lines);
    free(s->arena);
    free(s->out_topic.v);
    free(s->out_pos.v);
    free(s->out_asc.v);
    free(s->out_qrow.v);
    free(s->set);
    free(s->set_hash);
    free(s->order);
    free(s->judgments.hash);
    free(s->judgments.row);
    free(s);
}

static void scanner_capsule_free(PyObject *cap) {
    scanner_free((Scanner *)PyCapsule_GetPointer(cap, "pooling.scanner"));
}

/* scanner(qrels, unique=False): unique skips the check for a doc_id twice in a topic. */
static PyObject *scanner_new(PyObject *self, PyObject *args) {
    PyObject *cap;
    int unique = 0;
    if (!PyArg_ParseTuple(args, "O|p", &cap, &unique))
        return NULL;
    const Qrels *q = PyCapsule_GetPointer(cap, "pooling.qrels");
    if (!q)
        return NULL;
    Scanner *s = calloc(1, sizeof(Scanner));
    if (!s)
        return PyErr_NoMemory();
    s->q = q;
    s->unique = unique;
    Py_INCREF(cap);
    s->qrels_ref = cap;
    s->num_ret = calloc((size_t)(q->n_topics > 0 ? q->n_topics : 1), sizeof(int64_t));
    s->done = calloc((size_t)(q->n_topics > 0 ? q->n_topics : 1), 1);
    s->cur_len = (size_t)-1;
    s->cur_index = -1;
    s->sorted = 1;
    if (!s->num_ret || !s->done) {
        scanner_free(s);
        return PyErr_NoMemory();
    }
    PyObject *result = PyCapsule_New(s, "pooling.scanner", scanner_capsule_free);
    if (!result)
        scanner_free(s);
    return result;
}

static __thread const Line *g_lines;
static __thread const unsigned char *g_arena;

static inline int doc_cmp(const Line *a, const Line *b, const unsigned char *arena) {
    return bytes_cmp(arena + a->doc_off, a->doc_len, arena + b->doc_off, b->doc_len);
}

/* trec_eval's order: score descending, then doc_id descending. */
static int order_cmp(const void *x, const void *y) {
    const Line *a = &g_lines[*(const uint32_t *)x], *b = &g_lines[*(const uint32_t *)y];
    if (a->score > b->score)
        return -1;
    if (a->score < b->score)
        return 1;
    return -doc_cmp(a, b, g_arena);
}

static int ensure_order(Scanner *s, size_t n) {
    if (s->order_cap < n) {
        uint32_t *p = realloc(s->order, n * sizeof(uint32_t));
        if (!p)
            return -1;
        s->order = p;
        s->order_cap = n;
    }
    return 0;
}

static int emit(Scanner *s, int64_t pos, int64_t asc, int32_t qrow) {
    if (vec_push(&s->out_topic, s->cur_index) || vec_push(&s->out_pos, pos) ||
        vec_push(&s->out_asc, asc) || vec_push(&s->out_qrow, qrow))
        return -1;
    return 0;
}

/* True when a doc_id appears twice among the topic's lines. The set holds the lines'
 * hashes beside their indices, so most probes never touch the lines themselves. */
static int has_duplicate(Scanner *s) {
    size_t n = s->n_lines;
    size_t size = slots_ready(&s->set_hash, &s->set, &s->set_cap, n * 2);
    if (!size)
        return -1;
    size_t mask = size - 1;
    for (size_t i = 0; i < n; i++) {
        const Line *l = &s->lines[i];
        size_t k = (size_t)l->hash & mask;
        while (s->set[k] >= 0) {
            if (s->set_hash[k] == l->hash) {
                const Line *o = &s->lines[s->set[k]];
                if (o->doc_len == l->doc_len &&
                    memcmp(s->arena + o->doc_off, s->arena + l->doc_off, l->doc_len) == 0)
                    return 1;
            }
            k = (k + 1) & mask;
        }
        s->set[k] = (int32_t)i;
        s->set_hash[k] = l->hash;
    }
    return 0;
}

/* The judged lines of the finished topic get their positions. */
static int finish_topic(Scanner *s) {
    size_t n = s->n_lines;
    if (s->cur_index < 0 || n == 0)
        goto reset;
    s->num_ret[s->cur_index] = (int64_t)n;
    int dup = s->unique ? 0 : has_duplicate(s);
    if (dup < 0)
        return -1;
    if (dup) {
        s->status = ST_DUPLICATE;
        goto reset;
    }
    if (s->n_judged_here == 0)
        goto reset;
    const Line *L = s->lines;
    if (!s->sorted) {
        if (ensure_order(s, n))
            return -1;
        for (size_t i = 0; i < n; i++)
            s->order[i] = (uint32_t)i;
        g_lines = L;
        g_arena = s->arena;
        qsort(s->order, n, sizeof(uint32_t), order_cmp);
        size_t gs = 0;
        for (size_t p = 0; p < n; p++) {
            if (p > 0 && L[s->order[p]].score != L[s->order[p - 1]].score)
                gs = p;
            const Line *l = &L[s->order[p]];
            if (l->qrow < 0)
                continue;
            size_t ge = p + 1;
            while (ge < n && L[s->order[ge]].score == l->score)
                ge++;
            if (emit(s, (int64_t)p, (int64_t)(gs + (ge - 1 - p)), l->qrow))
                return -1;
        }
        goto reset;
    }
    /* Sorted by score: only tie groups holding a judged document need their doc_ids. */
    for (size_t j = 0; j < n; j++) {
        if (L[j].qrow < 0)
            continue;
        size_t lo = j, hi = j + 1;
        while (lo > 0 && L[lo - 1].score == L[j].score)
            lo--;
        while (hi < n && L[hi].score == L[j].score)
            hi++;
        size_t size = hi - lo;
        if (size == 1) {
            if (emit(s, (int64_t)j, (int64_t)j, L[j].qrow))
                return -1;
            continue;
        }
        size_t judged = 0;
        for (size_t k = j; k < hi; k++)
            judged += L[k].qrow >= 0;
        if (judged * size <= 4096) { /* count the greater and the smaller doc_ids */
            for (size_t k = j; k < hi; k++) {
                if (L[k].qrow < 0)
                    continue;
                size_t above = 0, below = 0;
                for (size_t m = lo; m < hi; m++) {
                    if (m == k)
                        continue;
                    if (doc_cmp(&L[m], &L[k], s->arena) > 0)
                        above++;
                    else
                        below++;
                }
                if (emit(s, (int64_t)(lo + above), (int64_t)(lo + below), L[k].qrow))
                    return -1;
            }
        } else { /* a big group: sort it once */
            if (ensure_order(s, size))
                return -1;
            for (size_t k = 0; k < size; k++)
                s->order[k] = (uint32_t)(lo + k);
            g_lines = L;
            g_arena = s->arena;
            qsort(s->order, size, sizeof(uint32_t), order_cmp);
            for (size_t p = 0; p < size; p++) {
                const Line *l = &L[s->order[p]];
                if (l->qrow < 0 || s->order[p] < j)
                    continue;
                if (emit(s, (int64_t)(lo + p), (int64_t)(lo + size - 1 - p), l->qrow))
                    return -1;
            }
        }
        j = hi - 1;
    }
reset:
    if (s->cur_index >= 0)
        s->done[s->cur_index] = 1;
    s->n_lines = 0;
    s->arena_len = 0;
    s->sorted = 1;
    s->n_judged_here = 0;
    return 0;
}

/* A new topic starts (its id differs from the current one's). */
static int start_topic(Scanner *s, const unsigned char *qid, size_t qlen) {
    if (s->cur_len != (size_t)-1 && finish_topic(s))
        return -1;
    if (s->status != ST_OK)
        return 0;
    memcpy(s->cur_topic, qid, qlen);
    s->cur_len = qlen;
    s->cur_index = find_topic(s->q, qid, qlen);
    if (s->cur_index >= 0 && s->done[s->cur_index])
        s->status = ST_UNGROUPED;
    if (s->cur_index >= 0 && s->q->topic_count[s->cur_index] &&
        topic_judgments_fill(&s->judgments, (Qrels *)s->q, s->cur_index, 0))
        return -1;
    return 0;
}

/* a[0..n) == b[0..n) for the short ids of topics, without a call */
static inline int same_short(const unsigned char *a, const unsigned char *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

/* One data line. Returns -1 on memory exhaustion; sets s->status on anything unusual. */
static int add_line(Scanner *s, const unsigned char *qid, size_t qlen, const unsigned char *doc,
                    size_t dlen, double score) {
    if (qlen != s->cur_len || !same_short(qid, s->cur_topic, qlen)) {
        if (qlen > 255 || qlen == 0) {
            s->status = ST_NOT_CLEAN;
            return 0;
        }
        if (start_topic(s, qid, qlen))
            return -1;
        if (s->status != ST_OK)
            return 0;
    }
    s->rows++;
    if (s->cur_index < 0)
        return 0;
    if (s->n_lines == s->cap_lines) {
        size_t cap = s->cap_lines ? s->cap_lines * 2 : 4096;
        Line *p = realloc(s->lines, cap * sizeof(Line));
        if (!p)
            return -1;
        s->lines = p;
        s->cap_lines = cap;
    }
    if (s->arena_len + dlen > s->arena_cap) {
        size_t cap = s->arena_cap ? s->arena_cap : 1 << 16;
        while (cap < s->arena_len + dlen)
            cap *= 2;
        unsigned char *p = realloc(s->arena, cap);
        if (!p)
            return -1;
        s->arena = p;
        s->arena_cap = cap;
    }
    if (s->arena_len + dlen > UINT32_MAX || s->n_lines >= INT32_MAX) {
        s->status = ST_NOT_CLEAN; /* a topic beyond 4 GB of doc_ids: the general path */
        return 0;
    }
    Line *l = &s->lines[s->n_lines];
    if (s->n_lines && score > s->lines[s->n_lines - 1].score)
        s->sorted = 0;
    l->score = score;
    l->hash = hash_bytes(doc, dlen);
    l->doc_off = (uint32_t)s->arena_len;
    l->doc_len = (uint32_t)dlen;
    l->qrow = -1;
    memcpy(s->arena + s->arena_len, doc, dlen);
    s->arena_len += dlen;
    if (s->q->topic_count[s->cur_index]) {
        int64_t r = topic_judgment(&s->judgments, s->q, doc, dlen, l->hash);
        if (r >= 0) {
            l->qrow = (int32_t)r;
            s->n_judged_here++;
        }
    }
    s->n_lines++;
    return 0;
}

/* ------------------------------------------------------------------ scores */

static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A plain decimal number ([+-]digits[.digits][e[+-]digits], at least one digit) as C's
 * atof reads it: correctly rounded. Returns 0 when the text is anything else. */
static int parse_score(const unsigned char *p, const unsigned char *e, double *out) {
    const unsigned char *start = p;
    int neg = 0;
    if (p < e && (*p == '+' || *p == '-')) {
        neg = *p == '-';
        p++;
    }
    uint64_t m = 0;
    int sig = 0, digits = 0, exp10 = 0, exact = 1;
    for (; p < e && *p >= '0' && *p <= '9'; p++, digits++) {
        if (m == 0 && *p == '0')
            continue;
        if (sig < 19) {
            m = m * 10 + (uint64_t)(*p - '0');
            sig++;
        } else {
            exact = 0;
        }
    }
    if (p < e && *p == '.') {
        p++;
        for (; p < e && *p >= '0' && *p <= '9'; p++, digits++) {
            if (m == 0 && *p == '0') {
                exp10--;
                continue;
            }
            if (sig < 19) {
                m = m * 10 + (uint64_t)(*p - '0');
                sig++;
                exp10--;
            } else {
                exact = 0;
            }
        }
    }
    if (digits == 0)
        return 0;
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0, ed = 0;
        long ev = 0;
        if (p < e && (*p == '+' || *p == '-')) {
            eneg = *p == '-';
            p++;
        }
        for (; p < e && *p >= '0' && *p <= '9'; p++, ed++)
            if (ev < 100000)
                ev = ev * 10 + (*p - '0');
        if (ed == 0)
            return 0;
        exp10 += (int)(eneg ? -ev : ev);
    }
    if (p != e)
        return 0;
    if (exact && m < (1ULL << 53) && exp10 >= -22 && exp10 <= 22) {
        double v = (double)m;
        v = exp10 < 0 ? v / POW10[-exp10] : v * POW10[exp10];
        *out = neg ? -v : v;
        return 1;
    }
    char buf[128];
    size_t len = (size_t)(e - start);
    if (len >= sizeof buf)
        return 0;
    memcpy(buf, start, len);
    buf[len] = 0;
    char *end;
    errno = 0;
    *out = strtod(buf, &end);
    return end == buf + len;
}

/* ------------------------------------------------------------------ text */

/* Bytes that end a field or make a line unclean: space, control bytes (newline among
 * them) and DEL, as a bit mask of the 16 bytes at p. */
#ifdef __SSE2__
#include <emmintrin.h>
static inline unsigned special16(const unsigned char *p) {
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    __m128i space = _mm_cmpeq_epi8(v, _mm_set1_epi8(' '));
    __m128i ctrl = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
    __m128i del = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f));
    return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(space, ctrl), del));
}
#else
static inline unsigned special16(const unsigned char *p) {
    unsigned m = 0;
    for (int i = 0; i < 16; i++)
        m |= (unsigned)(p[i] == ' ' || p[i] < 0x20 || p[i] == 0x7f) << i;
    return m;
}
#endif

/* The line starting at buf[at]: its 6 fields' starts in f[0..5] (f[6] one past the end
 * plus one) and its end (the newline, or len for a last line without one when `final`).
 * Returns 1 for a line of six fields separated by single spaces, 0 when the line does not
 * end within buf[0..len) yet, -1 for any other line. buf has 16 readable bytes past len. */
static inline int split_line(const unsigned char *buf, size_t at, size_t len, int final,
                             size_t max_line, const unsigned char **f, size_t *end) {
    int k = 0;
    f[k++] = buf + at;
    for (size_t pos = at;; pos += 16) {
        if (pos >= len) {
            if (!final)
                return 0;
            *end = len;
            break;
        }
        if (pos - at > max_line)
            return -1;
        unsigned m = special16(buf + pos);
        if (len - pos < 16)
            m &= (1u << (len - pos)) - 1;
        while (m) {
            size_t i = pos + (size_t)__builtin_ctz(m);
            unsigned char c = buf[i];
            if (c == ' ') {
                if (k == 6)
                    return -1;
                f[k++] = buf + i + 1;
            } else if (c == '\n') {
                *end = i;
                goto done;
            } else {
                return -1;
            }
            m &= m - 1;
        }
    }
done:
    if (k != 6 || *end - at > max_line)
        return -1;
    f[6] = buf + *end + 1;
    return 1;
}

/* Whether p[0..n) is UTF-8 as Python's decoder and Arrow's string type take it: no stray
 * continuation byte, no overlong form, no surrogate, nothing past U+10FFFF. A doc_id or
 * tag that is not is no text: the line goes to the strict reader, which says where. */
static inline int utf8_valid(const unsigned char *p, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        unsigned cp;
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
            cp = c & 0x1Fu;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            cp = c & 0x0Fu;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            cp = c & 0x07u;
        } else {
            return 0;
        }
        if (n - i < len)
            return 0;
        for (size_t k = 1; k < len; k++) {
            if ((p[i + k] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (p[i + k] & 0x3Fu);
        }
        if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)))
            || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
            return 0;
        i += len;
    }
    return 1;
}

/* The lines of buf[0..len): each complete, clean line goes to add_line. Returns bytes used
 * (up to the last complete line; all of it when `final`), or -1 on memory exhaustion. */
static Py_ssize_t scan_lines(Scanner *s, const unsigned char *buf, size_t len, int final,
                             size_t max_line) {
    size_t at = 0;
    while (at < len && s->status == ST_OK) {
        const unsigned char *f[7];
        size_t end;
        int found = split_line(buf, at, len, final, max_line, f, &end);
        if (found == 0)
            break;
        if (found < 0) {
            s->status = ST_NOT_CLEAN;
            break;
        }
        const unsigned char *e = buf + end;
        /* no empty field; a query_id of ASCII, not a comment */
        for (int i = 0; i < 6; i++)
            if (f[i + 1] - f[i] < 2)
                goto unclean;
        if (f[0][0] == '#')
            goto unclean;
        for (const unsigned char *c = f[0]; c < f[1] - 1; c++)
            if (*c >= 0x80)
                goto unclean;
        /* doc_id and tag: text (UTF-8), as every reader of ids takes them */
        if (!utf8_valid(f[2], (size_t)(f[3] - 1 - f[2])) || !utf8_valid(f[5], (size_t)(e - f[5])))
            goto unclean;
        double score;
        if (!parse_score(f[4], f[5] - 1, &score))
            goto unclean;
        if (add_line(s, f[0], (size_t)(f[1] - 1 - f[0]), f[2], (size_t)(f[3] - 1 - f[2]), score))
            return -1;
        if (s->status != ST_OK)
            break;
        size_t tlen = (size_t)(e - f[5]);
        if (tlen < sizeof s->tag) {
            memcpy(s->tag, f[5], tlen);
            s->tag_len = tlen;
        } else {
            s->tag_len = (size_t)-1;
        }
        at = end + 1;
        continue;
    unclean:
        s->status = ST_NOT_CLEAN;
        break;
    }
    return (Py_ssize_t)(at < len ? at : len);
}

/* scan_file(scanner, path, begin, end, max_line) -> status.
 * Reads bytes [begin, end) of the file (end -1: to its end); begin must start a line. */
static PyObject *scan_file(PyObject *self, PyObject *args) {
    PyObject *cap, *path_obj;
    long long begin, end;
    Py_ssize_t max_line;
    if (!PyArg_ParseTuple(args, "OO&LLn", &cap, PyUnicode_FSConverter, &path_obj, &begin, &end,
                          &max_line))
        return NULL;
    Scanner *s = PyCapsule_GetPointer(cap, "pooling.scanner");
    if (!s) {
        Py_DECREF(path_obj);
        return NULL;
    }
    const char *path = PyBytes_AS_STRING(path_obj);
    int err = 0, nomem = 0;
    size_t cap_bytes = (size_t)1 << 22;
    unsigned char *buf = NULL;
    Py_BEGIN_ALLOW_THREADS
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        err = errno;
    } else {
#ifdef POSIX_FADV_SEQUENTIAL
        posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
        buf = malloc(cap_bytes + 16);
        if (!buf)
            nomem = 1;
        size_t have = 0;
        long long offset = begin;
        while (buf && s->status == ST_OK) {
            size_t want = cap_bytes - have;
            if (end >= 0 && (long long)want > end - offset)
                want = (size_t)(end - offset);
            ssize_t got = want ? pread(fd, buf + have, want, offset) : 0;
            if (got < 0) {
                if (errno == EINTR)
                    continue;
                err = errno;
                break;
            }
            offset += got;
            have += (size_t)got;
            int final = got == 0;
            Py_ssize_t used = scan_lines(s, buf, have, final, (size_t)max_line);
            if (used < 0) {
                nomem = 1;
                break;
            }
            if (final || s->status != ST_OK)
                break;
            memmove(buf, buf + used, have - (size_t)used);
            have -= (size_t)used;
            if (have == cap_bytes) { /* a line longer than the buffer */
                if (cap_bytes > (size_t)max_line + 2) {
                    s->status = ST_NOT_CLEAN;
                    break;
                }
                unsigned char *p = realloc(buf, cap_bytes * 2 + 16);
                if (!p) {
                    nomem = 1;
                    break;
                }
                buf = p;
                cap_bytes *= 2;
            }
        }
        close(fd);
        free(buf);
    }
    Py_END_ALLOW_THREADS
    if (err) {
        errno = err;
        PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, path_obj);
        Py_DECREF(path_obj);
        return NULL;
    }
    Py_DECREF(path_obj);
    if (nomem)
        return PyErr_NoMemory();
    return PyLong_FromLong(s->status);
}

/* ------------------------------------------------------------------ Arrow columns */

/* scan_columns(scanner, qid_offsets, qid_data, qid_width, qid_start, doc_offsets, doc_data,
 * doc_width, doc_start, scores, score_start, n) -> status: rows of Arrow string/binary
 * columns (no nulls) and a float64 column, `*_start` being the arrays' offsets. */
static PyObject *scan_columns(PyObject *self, PyObject *args) {
    PyObject *cap;
    Py_buffer qo, qd, dofs, dd, sc;
    int qw, dw;
    long long qs, ds, ss, n;
    if (!PyArg_ParseTuple(args, "Oy*y*iLy*y*iLy*LL", &cap, &qo, &qd, &qw, &qs, &dofs, &dd, &dw,
                          &ds, &sc, &ss, &n))
        return NULL;
    Scanner *s = PyCapsule_GetPointer(cap, "pooling.scanner");
    int nomem = 0;
    if (s) {
        const unsigned char *qoff = qo.buf, *qdata = qd.buf, *doff = dofs.buf, *ddata = dd.buf;
        const double *score = (const double *)sc.buf + ss;
        Py_BEGIN_ALLOW_THREADS
        for (long long i = 0; i < n && s->status == ST_OK; i++) {
            int64_t q0 = offset_at(qoff, qw, qs + i), q1 = offset_at(qoff, qw, qs + i + 1);
            int64_t d0 = offset_at(doff, dw, ds + i), d1 = offset_at(doff, dw, ds + i + 1);
            double v = score[i];
            if (v != v) {
                s->status = ST_NOT_CLEAN;
                break;
            }
            if (add_line(s, qdata + q0, (size_t)(q1 - q0), ddata + d0, (size_t)(d1 - d0), v)) {
                nomem = 1;
                break;
            }
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&qo);
    PyBuffer_Release(&qd);
    PyBuffer_Release(&dofs);
    PyBuffer_Release(&dd);
    PyBuffer_Release(&sc);
    if (!s)
        return NULL;
    if (nomem)
        return PyErr_NoMemory();
    return PyLong_FromLong(s->status);
}

/* ------------------------------------------------------------------ whole texts */

/* line_facts(data) -> (lines, longest, odd_whitespace): the number of lines (a last line
 * without a newline counts), the longest line's length in bytes without its newline, and
 * whether a tab, CR, VT or FF occurs anywhere: what decides, in one pass, whether a run file
 * can be handed to DuckDB's CSV reader as it is. */
static PyObject *line_facts(PyObject *self, PyObject *arg) {
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *p = b.buf;
    size_t n = (size_t)b.len;
    long long lines = 0;
    size_t longest = 0, start = 0;
    int odd = 0;
    Py_BEGIN_ALLOW_THREADS
    size_t i = 0;
#ifdef __SSE2__
    const __m128i nl = _mm_set1_epi8('\n');
    const __m128i lo = _mm_set1_epi8(0x09), hi = _mm_set1_epi8(0x0d);
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
        /* bytes 0x09..0x0d: tab, newline, VT, FF, CR */
        __m128i in = _mm_cmpeq_epi8(_mm_min_epu8(_mm_max_epu8(v, lo), hi), v);
        unsigned m = (unsigned)_mm_movemask_epi8(in);
        if (!m)
            continue;
        unsigned newlines = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl));
        if (m != newlines)
            odd = 1;
        while (newlines) {
            size_t at = i + (size_t)__builtin_ctz(newlines);
            if (at - start > longest)
                longest = at - start;
            start = at + 1;
            lines++;
            newlines &= newlines - 1;
        }
    }
#endif
    for (; i < n; i++) {
        unsigned char c = p[i];
        if (c == '\n') {
            if (i - start > longest)
                longest = i - start;
            start = i + 1;
            lines++;
        } else if (c == '\t' || c == '\r' || c == '\v' || c == '\f') {
            odd = 1;
        }
    }
    if (start < n) {
        lines++;
        if (n - start > longest)
            longest = n - start;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&b);
    return Py_BuildValue("LnO", lines, (Py_ssize_t)longest, odd ? Py_True : Py_False);
}

/* ------------------------------------------------------------------ results */

static PyObject *vec_bytes(const Vec *v) {
    return PyBytes_FromStringAndSize((const char *)v->v, (Py_ssize_t)(v->n * sizeof(int64_t)));
}

/* finish(scanner) -> (status, rows, num_ret, topic, pos, pos_asc, qrow, tag): the int64
 * arrays as bytes; tag is the last line's tag (None if there is none or it is too long). */
static PyObject *finish(PyObject *self, PyObject *cap) {
    Scanner *s = PyCapsule_GetPointer(cap, "pooling.scanner");
    if (!s)
        return NULL;
    if (s->status == ST_OK && s->cur_len != (size_t)-1) {
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = finish_topic(s);
        Py_END_ALLOW_THREADS
        if (rc)
            return PyErr_NoMemory();
        s->cur_len = (size_t)-1;
    }
    PyObject *tag;
    if (s->rows && s->tag_len != (size_t)-1) {
        tag = PyBytes_FromStringAndSize((const char *)s->tag, (Py_ssize_t)s->tag_len);
    } else {
        tag = Py_None;
        Py_INCREF(tag);
    }
    return Py_BuildValue(
        "iLNNNNNN", s->status, (long long)s->rows,
        PyBytes_FromStringAndSize((const char *)s->num_ret,
                                  (Py_ssize_t)(sizeof(int64_t) * (size_t)s->q->n_topics)),
        vec_bytes(&s->out_topic), vec_bytes(&s->out_pos), vec_bytes(&s->out_asc),
        vec_bytes(&s->out_qrow), tag);
}

static PyMethodDef methods[] = {
    {"qrels_table", qrels_table, METH_VARARGS, "Judgments prepared for scanning runs."},
    {"qrels_duplicates", qrels_duplicates, METH_O, "Rows judged twice in their topic."},
    {"scanner", scanner_new, METH_VARARGS, "A scanner of one run (or part of one) against qrels."},
    {"scan_file", scan_file, METH_VARARGS, "Scan a byte range of a clean run file."},
    {"scan_columns", scan_columns, METH_VARARGS, "Scan run rows given as Arrow columns."},
    {"line_facts", line_facts, METH_O, "Lines, the longest line and odd whitespace of a text."},
    {"finish", finish, METH_O, "End the scan and hand back the judged documents' places."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_kernel",
    "The evaluator's hot path: runs scanned against qrels into judged documents' ranks.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModule_Create(&module); }
