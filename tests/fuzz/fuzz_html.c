/* libFuzzer target: the HTML report's JSON input (report/html.c).
 *
 * The input is parsed as JSON and rendered as `yangblast report` renders
 * a saved file.  The renderer either refuses it with a message naming the
 * input ("fuzz.json: KEY: ...") or writes a whole page; and whatever the
 * input's strings hold, the page has no <script> (every string is
 * escaped).  Anything else aborts. */
#include "config.h"
#include "report/html.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t je;
    json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
    if (!j)
        return 0;
    char *page = NULL, err[1024] = "";
    size_t len = 0;
    FILE *f = open_memstream(&page, &len);
    if (!f)
        abort();
    const char *name = "fuzz.json";
    int rc = yb_html_write(f, &j, &name, 1, NULL, err, sizeof err);
    fclose(f);
    if (rc < 0 && strncmp(err, "fuzz.json: ", 11) && strcmp(err, "out of memory")) {
        fprintf(stderr, "message does not name the input: %s\n", err);
        abort();
    }
    if (rc == 0) {
        if (len < 8 || strcmp(page + len - 8, "</html>\n")) {
            fprintf(stderr, "page not complete\n");
            abort();
        }
        if (strstr(page, "<script")) {
            fprintf(stderr, "unescaped markup in the page\n");
            abort();
        }
    }
    free(page);
    json_decref(j);
    return 0;
}
