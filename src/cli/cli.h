/* Command entry points (one file per command, thin: parse options, call
 * the owning module, print) and the helpers they share. */
#ifndef YB_CLI_H
#define YB_CLI_H

#include <stdio.h>

/* Exit codes, documented in yangblast(1). */
enum {
    YB_EXIT_OK = 0,        /* success */
    YB_EXIT_THRESHOLD = 1, /* a run failed --max-errors or a --threshold; compare: a regression */
    YB_EXIT_USAGE = 2,     /* usage or input error */
    YB_EXIT_RUNTIME = 3,   /* runtime failure */
    YB_EXIT_INTERRUPTED = 4, /* SIGINT/SIGTERM stopped a run early; reports written */
};

/* Each returns an exit code.  argv[0] is the command name. */
int yb_cmd_synth(int argc, char **argv);
int yb_cmd_corpus(int argc, char **argv);
int yb_cmd_run(int argc, char **argv);
int yb_cmd_serve(int argc, char **argv);
int yb_cmd_experiment(int argc, char **argv);
/* experiment sweep (src/cli/sweep.c): argv[0] is "sweep". */
int yb_cmd_sweep(int argc, char **argv);
int yb_cmd_capture(int argc, char **argv);
int yb_cmd_compare(int argc, char **argv);
int yb_cmd_report(int argc, char **argv);
int yb_cmd_merge(int argc, char **argv);

/* Names the command being run, for the prefix of yb_errorf's messages. */
void yb_cli_set_command(const char *name);
/* Prints "yangblast COMMAND: " (or "yangblast: " before a command is
 * known) + message + newline to stderr. */
void yb_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Names where the input being read comes from ("plan.yaml:12: workload
 * 'w'"), NULL = none: while set, yb_errorf and yb_usage_error print
 * "yangblast COMMAND: WHERE: message" (and no --help hint), so that the
 * checks shared with the command line name the file, line and key. */
void yb_cli_where(const char *where);
/* Prints a usage error and the hint to run --help; returns YB_EXIT_USAGE. */
int yb_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Installs handler for SIGINT and SIGTERM (a run's stop: reports are still
 * written) and ignores SIGPIPE (a closed output or peer is an error where it
 * is written, never a death). */
void yb_cli_catch_stop(void (*handler)(int));

/* Reports what getopt_long (with opterr = 0 and a short-option string
 * starting with ':') returned as c for a bad option: an unknown option or
 * one missing its value.  Returns YB_EXIT_USAGE. */
int yb_bad_option(const char *cmd, int c, char **argv);

#endif
