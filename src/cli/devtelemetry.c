/* --telemetry for run and experiment sweep (see devtelemetry.h). */
#include "config.h"
#include "cli/devtelemetry.h"
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

yb_telemetry *yb_telemetry_for(const char *cmd, uint64_t interval_ns, uint64_t baseline_ns,
                               const char *const *paths, size_t n_paths,
                               const yb_engine_opts *o, const char (*label)[80], size_t n,
                               int routed_single, yb_tm_target *tgs, yb_tm_cfg *cfg)
{
    size_t m = 0;
    memset(cfg, 0, sizeof *cfg);
    for (size_t i = 0; i < n; i++) {
        int gnmi = o[i].ops == &yb_h2_client_ops;
        size_t ll = strlen(label[i]);
        if (routed_single && !gnmi)
            continue;
        if (!gnmi && ll > 9 && !strcmp(label[i] + ll - 9, "/restconf")) {
            int sibling = 0;
            for (size_t j = 0; j < n && !sibling; j++)
                sibling = strlen(label[j]) == ll - 4 && !strncmp(label[j], label[i], ll - 9) &&
                          !strcmp(label[j] + ll - 9, "/gnmi");
            if (sibling)
                continue;
        }
        tgs[m] = (yb_tm_target){label[i], &o[i].target, gnmi, &o[i].tls, &o[i].codec};
        m++;
    }
    cfg->targets = tgs;
    cfg->n = m;
    cfg->interval_ns = interval_ns;
    cfg->baseline_ns = baseline_ns;
    for (size_t i = 0; i < n_paths && i < YB_TM_MAX_PATHS; i++)
        cfg->paths[cfg->n_paths++] = paths[i];
    char err[400];
    yb_telemetry *t = yb_telemetry_start(cfg, err, sizeof err);
    if (!t)
        yb_errorf("%s: %s", cmd, err);
    return t;
}

/* 1 when pair label p belongs to device label d: the same, or d is
 * "X/gnmi" and p "X/restconf". */
static int of_device(const char *p, const char *d)
{
    size_t ld = strlen(d), lp = strlen(p);
    if (!strcmp(p, d))
        return 1;
    return ld > 5 && !strcmp(d + ld - 5, "/gnmi") && lp == ld + 4 &&
           !strncmp(p, d, ld - 5) && !strcmp(p + lp - 9, "/restconf");
}

/* The recorder of the pairs of device d (of workload w, or every one when
 * w is -1): the pair's own when there is one, else merged into a new one
 * of l's; NULL when none (or *err on ENOMEM). */
static const yb_recorder *gather(yb_tm_loads *l, const char *d, long w, const char *const *label,
                                 const yb_recorder *rec, const size_t *wl, size_t n_pairs,
                                 int *err)
{
    const yb_recorder *one = NULL;
    size_t n = 0;
    for (size_t p = 0; p < n_pairs; p++)
        if ((w < 0 || wl[p] == (size_t)w) && of_device(label[p], d) && !n++)
            one = &rec[p];
    if (n < 2)
        return one;
    yb_recorder *m = &l->owned[l->n_owned];
    if (yb_recorder_init(m) < 0) {
        *err = 1;
        return NULL;
    }
    l->n_owned++;
    for (size_t p = 0; p < n_pairs; p++)
        if ((w < 0 || wl[p] == (size_t)w) && of_device(label[p], d) &&
            yb_recorder_merge(m, &rec[p]) < 0) {
            *err = 1;
            return NULL;
        }
    return m;
}

int yb_tm_loads_build(yb_tm_loads *l, const yb_telemetry *tm, const char *const *label,
                      const yb_recorder *rec, const size_t *wl, const char *const *wl_name,
                      size_t n_wl, size_t n_pairs, int one_device)
{
    const yb_tm_device *dev;
    size_t nd = yb_telemetry_devices(tm, &dev), n_cols = 0;
    int err = 0;
    memset(l, 0, sizeof *l);
    l->load = calloc(nd ? nd : 1, sizeof *l->load);
    l->owned = calloc(nd + n_pairs, sizeof *l->owned); /* each device and each pair once at most */
    l->names = calloc(n_pairs ? n_pairs : 1, sizeof *l->names);
    l->recs = calloc(n_pairs ? n_pairs : 1, sizeof *l->recs);
    if (!l->load || !l->owned || !l->names || !l->recs)
        goto fail;
    for (size_t k = 0; k < nd && !one_device; k++) {
        const char *d = dev[k].tg->label;
        l->load[k].rec = gather(l, d, -1, label, rec, wl, n_pairs, &err);
        l->load[k].col_name = &l->names[n_cols];
        l->load[k].col_rec = &l->recs[n_cols];
        for (size_t w = 0; wl && w < n_wl && !err; w++) { /* in the plan's order */
            const yb_recorder *r = gather(l, d, (long)w, label, rec, wl, n_pairs, &err);
            if (r && n_cols < n_pairs) {
                l->names[n_cols] = wl_name[w];
                l->recs[n_cols++] = r;
                l->load[k].n_cols++;
            }
        }
        if (err)
            goto fail;
    }
    return 0;
fail:
    yb_tm_loads_free(l);
    return -1;
}

void yb_tm_loads_free(yb_tm_loads *l)
{
    for (size_t i = 0; l->owned && i < l->n_owned; i++)
        yb_recorder_cleanup(&l->owned[i]);
    free(l->owned);
    free(l->load);
    free(l->names);
    free(l->recs);
    memset(l, 0, sizeof *l);
}
