/* yangblast compare: two JSON reports (yangblast-report(5), from run
 * --json or a merge of shards) side by side.  Reads and checks them
 * (every key it uses, with a message naming the file and the key), lists
 * the run settings that differ (load-defining ones make the runs
 * "unlike"), and compares rate, errors, each phase's percentiles and the
 * generator's CPU with absolute and relative deltas; a figure that got
 * worse by more than its --max-regression limit is a regression. */
#ifndef YB_COMPARE_H
#define YB_COMPARE_H

#include <jansson.h>
#include <stdio.h>

#define YB_CMP_MAX_LIMITS 32

typedef struct {
    double global_pct;        /* --max-regression P%; < 0 = none */
    struct {
        char name[48];        /* a figure's name: "e2e.p99", "rate", "cpu" */
        double pct;
    } per[YB_CMP_MAX_LIMITS];
    size_t n_per;
} yb_compare_opts;

/* Sets no limits. */
void yb_compare_opts_init(yb_compare_opts *o);

/* Adds one --max-regression value: "P%" (every gated figure) or
 * "FIGURE=P%".  Returns 0, or -1 with what is accepted in err. */
int yb_compare_add_limit(yb_compare_opts *o, const char *arg, char *err, size_t errlen);

/* Reads the report at path (report/reader.h: at most YB_REPORT_MAX_BYTES) and checks what
 * compare uses of it.  Returns the document (caller json_decref's), or
 * NULL with a message naming path and the offending key (or line and
 * column) in err. */
json_t *yb_compare_load(const char *path, char *err, size_t errlen);

/* The checks of yb_compare_load on a parsed document j named name.
 * Returns 0, or -1 with the message in err. */
int yb_compare_check(const char *name, const json_t *j, char *err, size_t errlen);

typedef struct yb_comparison yb_comparison;

/* Compares base with new (both from yb_compare_load; names as the user
 * gave them, kept by pointer).  Returns the comparison (yb_compare_free)
 * or NULL when memory ran out. */
yb_comparison *yb_compare_new(const json_t *base, const json_t *new, const char *base_name,
                              const char *new_name, const yb_compare_opts *o);

/* Returns how many load-defining settings differ (0 = like runs) and, in
 * buf, "key: base vs new; ..." for them. */
size_t yb_compare_unlike(const yb_comparison *c, char *buf, size_t len);

/* Returns how many figures regressed beyond their limit. */
size_t yb_compare_regressions(const yb_comparison *c);

/* Prints the differing settings, any warning, the table and the verdict.
 * Returns 0 or -1 on a write error. */
int yb_compare_text(FILE *f, const yb_comparison *c);

/* The comparison as JSON (schema yangblast-compare/1, documented in
 * yangblast-compare(1)); caller json_decref's; NULL when memory ran out. */
json_t *yb_compare_json(const yb_comparison *c);

void yb_compare_free(yb_comparison *c);

#endif
