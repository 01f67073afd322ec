/* Several targets in one `run`: a mixed corpus routed to one --target per
 * kind of record (HTTP/1.1 records to the http(s):// URL, HTTP/2 ones to
 * the grpc(s):// URL), or an inventory's fan-out (--targets FILE
 * --fan-out: every target gets the workload).  Builds one workload per
 * (target, kind of record), checks all of them before any traffic, and
 * reports per target. */
#ifndef YB_FLEET_H
#define YB_FLEET_H

#include <jansson.h>
#include <stdio.h>
#include "cli/runcommon.h"
#include "cli/runopts.h"
#include "engine/inventory.h"

typedef struct {
    size_t n, cap;            /* pairs, and room for them */
    yb_engine_opts *o;        /* per pair: the run's options, its target, route, TLS, load */
    char (*label)[80];        /* per pair: the target's name (inventory) or URL */
    const char **url;         /* per pair: its URL (in the inventory or argv) */
    yb_credentials *cred;     /* per pair */
    yb_recorder *rec;         /* per pair, filled by the run */
    size_t n_rec;             /* recorders initialised */
    yb_inventory inv;
    struct yb_authmap *authmap; /* --route authority (engine/route.h), or NULL */
    char desc[160];           /* what the report calls the target */
    const char *proto;        /* the corpus' protocol (static), or "mixed" */
} yb_fleet;

/* 1 when the run's options ask for several targets (--targets or more
 * than one --target). */
int yb_fleet_wanted(const yb_runopts *ro);

/* Builds the fleet from ro (its corpus in ro->o.corpus_path): reads and
 * validates the inventory, counts the corpus' records per kind, assigns
 * each kind to a target, loads every target's credentials.  Nothing is
 * sent.  Returns 0, or YB_EXIT_USAGE with a message printed (the fleet is
 * then freed). */
int yb_fleet_prepare(const char *cmd, yb_runopts *ro, yb_fleet *f);

/* Adds the fleet's pairs to plan (zeroed, or holding other fleets'
 * pairs), first copying into each the settings
 * that belong to the run as a whole (stop flag, progress, reasons, stream,
 * extra headers) from base.  Returns 0 or -1 (out of memory). */
int yb_fleet_plan(yb_fleet *f, const yb_engine_opts *base, yb_plan *plan);

/* The per-target table after the text report, and the "targets" array of
 * the JSON report (yangblast-report(5)). */
void yb_fleet_report_text(FILE *out, const yb_fleet *f);
int yb_fleet_report_json(json_t *report, const yb_fleet *f);

void yb_fleet_free(yb_fleet *f);

/* For commands that study each device on its own (experiment): refuses
 * the command line's TLS and credential options, reads and validates the
 * inventory ro->inventory into *inv (free it with yb_inventory_free),
 * checking that every target with a user has a password reference; each
 * target's TLS settings, concurrency and credentials are then the
 * caller's to apply.  Returns 0, or YB_EXIT_USAGE with a message printed
 * (*inv then empty). */
int yb_fleet_devices(const char *cmd, yb_runopts *ro, yb_inventory *inv);
/* Loads target t's credentials from their references into c.  Returns 0,
 * or -1 with a message printed. */
int yb_fleet_credentials(const yb_inv_target *t, yb_credentials *c);

#endif
