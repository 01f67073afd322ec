/* libFuzzer target: gNMI path strings (yb_gnmi_path_parse, as given to
 * synth and in corpora) with a round-trip oracle: a path that parses,
 * formatted and parsed again, gives the same Path (compared packed) and
 * the same text. */
#include "config.h"
#include "gnmi/gnmi_msg.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what, const char *s)
{
    fprintf(stderr, "gnmi path oracle: %s: \"%s\"\n", what, s);
    abort();
}

/* Formats p into a malloc'd string (never truncated). */
static char *format(const Gnmi__Path *p)
{
    size_t n = yb_gnmi_path_format(p, NULL, 0);
    char *b = malloc(n + 1);
    if (!b || yb_gnmi_path_format(p, b, n + 1) != n || strlen(b) != n)
        abort();
    return b;
}

static uint8_t *pack(const Gnmi__Path *p, size_t *n)
{
    *n = gnmi__path__get_packed_size(p);
    uint8_t *b = malloc(*n + 1);
    if (!b)
        abort();
    gnmi__path__pack(p, b);
    return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = 0;
    Gnmi__Path *p1, *p2;
    if (yb_gnmi_path_parse(s, &p1) == 0) {
        char *t1 = format(p1);
        if (yb_gnmi_path_parse(t1, &p2) != 0)
            fail("a formatted path does not parse", t1);
        char *t2 = format(p2);
        size_t n1, n2;
        uint8_t *b1 = pack(p1, &n1), *b2 = pack(p2, &n2);
        if (strcmp(t1, t2) || n1 != n2 || memcmp(b1, b2, n1))
            fail("parse(format(path)) is another path", s);
        free(b1);
        free(b2);
        free(t1);
        free(t2);
        yb_gnmi_path_free(p1);
        yb_gnmi_path_free(p2);
    }
    free(s);
    return 0;
}
