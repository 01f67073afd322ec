/* libFuzzer target: the plan file parser (`run --plan FILE`).
 *
 * The input is the YAML text of a plan.  The parser must accept it or
 * refuse it (exit 2 with a message, never a crash, a leak or a hang); what
 * it accepts must hold its invariants: 1 to YB_PLAN_MAX_WORKLOADS
 * workloads with valid, distinct names, each with exactly one source (a
 * corpus or a synth spec), its targets all names or all URLs, and the load
 * options the plan gave applied through the one option table. */
#include "config.h"
#include "cli/cli.h"
#include "cli/plan.h"
#include "cli/runopts.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    yb_runopts base;
    yb_runopts_init(&base);
    yb_planfile pf;
    int rc = yb_planfile_parse("run", "f.yaml", data, size, &base, &pf);
    if (rc) {
        if (rc != YB_EXIT_USAGE || pf.n || pf.w || pf.root)
            abort();
        return 0;
    }
    if (!pf.n || pf.n > YB_PLAN_MAX_WORKLOADS || !pf.w)
        abort();
    for (size_t i = 0; i < pf.n; i++) {
        const yb_plan_workload *w = &pf.w[i];
        if (!w->name[0] || !w->line || (w->corpus != NULL) == (w->synth_argc != 0))
            abort();
        if (w->n_tnames > YB_PLAN_MAX_TARGETS || (w->urls && w->n_tnames > 2))
            abort();
        for (size_t j = 0; j < i; j++)
            if (!strcmp(pf.w[j].name, w->name))
                abort();
        for (size_t t = 0; t < w->n_tnames; t++)
            if ((strstr(w->tnames[t], "://") != NULL) != w->urls)
                abort();
    }
    yb_planfile_free(&pf);
    return 0;
}
