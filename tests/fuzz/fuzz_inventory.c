/* libFuzzer target: the inventory parser (`--targets FILE`).
 *
 * The input is the YAML text of an inventory.  The parser must accept it
 * or refuse it with a message naming the file and a line; what it accepts
 * must hold its invariants: every target has a valid name and at least
 * one URL, and a message never repeats a literal secret.  What it accepts
 * also builds the --route authority map (or is refused naming the file),
 * which answers a target or none for each name, alias, and the input's
 * last line taken as a recorded authority. */
#include "config.h"
#include "engine/inventory.h"
#include "engine/route.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int once;
    if (!once) { /* what password-env names in the seeds */
        setenv("YB_FUZZ_PW", "fuzz-secret", 1);
        once = 1;
    }
    yb_inventory inv;
    char err[512];
    err[0] = 0;
    if (yb_inventory_parse("f.yaml", data, size, &inv, err, sizeof err) < 0) {
        if (strncmp(err, "f.yaml:", 7) || inv.n || inv.target)
            abort();
        /* the environment's secret never reaches a message (unless the
         * input itself spells it) */
        if (strstr(err, "fuzz-secret") && !memmem(data, size, "fuzz-secret", 11))
            abort();
        return 0;
    }
    if (!inv.n)
        abort();
    for (size_t i = 0; i < inv.n; i++) {
        const yb_inv_target *t = &inv.target[i];
        if (!t->name || !t->name[0] || (!t->restconf && !t->gnmi) || !t->line)
            abort();
        if (yb_inventory_find(&inv, t->name) != t)
            abort();
    }
    yb_authmap *m = yb_authmap_new(&inv, "f.yaml", err, sizeof err);
    if (!m && strncmp(err, "f.yaml:", 7) && strcmp(err, "out of memory"))
        abort();
    if (m) {
        char a[300];
        const uint8_t *nl = memrchr(data, '\n', size);
        size_t off = nl ? (size_t)(nl - data) + 1 : 0, len = size - off;
        if (len >= sizeof a)
            len = sizeof a - 1;
        memcpy(a, data + off, len);
        a[len] = 0; /* an embedded NUL only shortens it */
        for (int s = 0; s < 2; s++) {
            int t = yb_authmap_find(m, s ? "https" : "http", a);
            if (t < -1 || t >= (int)inv.n)
                abort();
        }
        for (size_t i = 0; i < inv.n; i++)
            for (size_t k = 0; k < inv.target[i].n_aliases; k++) {
                int t = yb_authmap_find(m, "http", inv.target[i].aliases[k]);
                if (t < -1 || t >= (int)inv.n)
                    abort();
            }
        yb_authmap_free(m);
    }
    yb_inventory_free(&inv);
    return 0;
}
