/* --telemetry for run and experiment sweep (see devtelemetry.h). */
#include "config.h"
#include "cli/devtelemetry.h"
#include "cli/cli.h"

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
