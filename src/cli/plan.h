/* `run --plan FILE`: several workloads at once, on one clock, in one
 * report.  A plan file (YAML; yangblast-inventory(5), PLAN) lists
 * workloads; each has a name, a source (a corpus, or a synth spec that is
 * synthesized before the run), the load model and session policy of the
 * command line's options (the same names and values: rate, concurrency,
 * subscriptions, sessions, ...), a start offset, a duration and its
 * targets (names from the --targets inventory, or URLs).  Each workload
 * becomes a fleet of (workload, target) pairs (fleet.h); the plan is all
 * of them.  Every error is found before any traffic and names the file,
 * the line and the key. */
#ifndef YB_CLI_PLAN_H
#define YB_CLI_PLAN_H

#include <jansson.h>
#include <stdio.h>
#include "cli/fleet.h"
#include "cli/runopts.h"
#include "util/yamltree.h"

#define YB_PLAN_MAX_WORKLOADS 64
#define YB_PLAN_MAX_BYTES (1u << 20)
#define YB_PLAN_MAX_TARGETS 256 /* targets a workload names */

/* One workload of a plan file. */
typedef struct {
    char name[65];
    unsigned line;          /* where it starts */
    yb_runopts ro;          /* the command line's options with its own keys */
    const char *corpus;     /* its corpus (the plan's own synthesized file for synth) */
    char *owned[3];         /* paths resolved against the plan's directory */
    int n_owned;
    char source[300];       /* "corpus FILE" or "synth acl --proto gnmi ..." */
    const char *tnames[YB_PLAN_MAX_TARGETS]; /* targets: names or URLs */
    unsigned tlines[YB_PLAN_MAX_TARGETS];
    size_t n_tnames;
    int urls;               /* tnames are URLs (else inventory names) */
    char *synth_argv[48];   /* synth ACL|gnmi ... -o FILE (strings in the tree) */
    int synth_argc;
    unsigned synth_line;
    uint64_t start_ns;
    yb_fleet fleet;         /* its pairs, each workload's own */
    yb_recorder rec;        /* its figures, merged after the run */
    int rec_ok;
} yb_plan_workload;

typedef struct {
    const char *path;
    yb_ynode *root;         /* kept: the options point into it */
    size_t n;
    yb_plan_workload *w;
    char tmpdir[256];       /* synthesized corpora ("" = none) */
    size_t n_pairs;
    yb_recorder *pair_rec;  /* per pair of the plan, in workload order */
    size_t *pair_wl, *pair_tgt;
    yb_fleet targets;       /* the distinct targets, for the per-target table */
    uint64_t planned_ns;    /* the latest end among workloads with a duration */
    const char *proto;      /* the workloads' protocol, or "mixed" */
    char desc[160];         /* what the report calls the target */
} yb_planfile;

/* Reads, validates and prepares the plan ro->plan with the command line's
 * options ro (cmd names the command): every workload's options checked,
 * synth specs synthesized into a private directory, targets resolved,
 * corpora checked against them, credentials loaded.  Nothing is sent.
 * Returns 0, or YB_EXIT_USAGE with a message naming file, line and key
 * printed (pf then freed). */
int yb_planfile_prepare(const char *cmd, const yb_runopts *ro, yb_planfile *pf);

/* Fills plan (zeroed here) with every workload's pairs, the run-wide
 * settings copied from base.  Returns 0 or -1 (out of memory / too many
 * pairs). */
int yb_planfile_plan(yb_planfile *pf, const yb_engine_opts *base, yb_plan *plan);

/* After the run: adds each pair's figures (pf->pair_rec) to its workload
 * and its target.  Returns 0 or -1 (out of memory). */
int yb_planfile_merge(yb_planfile *pf);

/* The options of a pair going to the plan's distinct target t
 * (pf->targets), a gNMI one when there is one: what --telemetry watches
 * the device with (one session per device, over gNMI when any workload
 * speaks it there).  Returns NULL when t is out of range. */
const yb_engine_opts *yb_planfile_target_opts(const yb_planfile *pf, size_t t);

/* 1 when any workload is an open loop (a rate or original timing). */
int yb_planfile_open_loop(const yb_planfile *pf);

/* The per-workload table after the text report, and the "workloads"
 * array of the JSON report (yangblast-report(5)). */
void yb_planfile_report_text(FILE *out, const yb_planfile *pf);
int yb_planfile_report_json(json_t *report, const yb_planfile *pf);

/* Frees everything and removes the synthesized corpora. */
void yb_planfile_free(yb_planfile *pf);

/* Parses the plan file's text (named name) into pf's workloads, each
 * with base's options and its own keys applied, without touching anything
 * outside (no file is read or written): the first step of
 * yb_planfile_prepare, and the fuzz target's entry.  Returns 0, or
 * YB_EXIT_USAGE with a message "NAME:LINE: ..." printed (pf then freed). */
int yb_planfile_parse(const char *cmd, const char *name, const uint8_t *buf, size_t len,
                      const yb_runopts *base, yb_planfile *pf);

#endif
