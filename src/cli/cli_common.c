#include "config.h"
#include "cli/cli.h"

#include <stdarg.h>

void yb_errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("yangblast: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int yb_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "yangblast %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'yangblast %s --help'.\n", cmd);
    va_end(ap);
    return YB_EXIT_USAGE;
}
