#include "config.h"
#include "cli/cli.h"

#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>

static const char *command;
static const char *in_where;

void yb_cli_where(const char *where)
{
    in_where = where;
}

void yb_cli_set_command(const char *name)
{
    command = name;
}

void yb_errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (command)
        fprintf(stderr, "yangblast %s: ", command);
    else
        fputs("yangblast: ", stderr);
    if (in_where)
        fprintf(stderr, "%s: ", in_where);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int yb_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "yangblast %s: ", cmd);
    if (in_where)
        fprintf(stderr, "%s: ", in_where);
    vfprintf(stderr, fmt, ap);
    if (in_where)
        fputc('\n', stderr);
    else
        fprintf(stderr, "\nTry 'yangblast %s --help'.\n", cmd);
    va_end(ap);
    return YB_EXIT_USAGE;
}

int yb_bad_option(const char *cmd, int c, char **argv)
{
    const char *what = optind > 0 ? argv[optind - 1] : "?";
    if (c == ':')
        return yb_usage_error(cmd, "option '%s' needs a value", what);
    if (optopt && optopt < 256 && (what[0] != '-' || what[1] != '-'))
        return yb_usage_error(cmd, "unknown option '-%c'", optopt);
    return yb_usage_error(cmd, "unknown option '%s'", what);
}

void yb_cli_catch_stop(void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}
