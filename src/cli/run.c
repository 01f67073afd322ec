/* yangblast run: replay a corpus against a target. */
#include "config.h"
#include "cli/cli.h"
#include "cli/fleet.h"
#include "cli/plan.h"
#include "cli/devtelemetry.h"
#include "cli/runcommon.h"
#include "cli/runid.h"
#include "cli/runopts.h"
#include "engine/engine.h"
#include "report/html.h"
#include "report/metrics.h"
#include "report/report.h"
#include "report/stream.h"
#include "report/threshold.h"
#include "util/outfile.h"
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Points of run.target_rate_curve: a ramp or steps sampled finely enough
 * for a plot 200 points wide. */
#define RATE_CURVE_POINTS 200

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    stop_flag = sig; /* non-zero: stop; which signal, for the report */
}

/* The live progress line (stderr, a TTY only). */
static void show_progress(const yb_progress *p, void *ud)
{
    (void)ud;
    char target[48] = "";
    if (p->target_rate > 0)
        snprintf(target, sizeof target, " (target %.0f)", p->target_rate);
    fprintf(stderr,
            "\r\033[K%7.1fs  %7llu req/s%s  p50 %.2f ms  p99 %.2f ms  errors %llu  backlog %llu",
            p->elapsed_s, (unsigned long long)p->last_completed, target, p->p50_ms, p->p99_ms,
            (unsigned long long)p->errors, (unsigned long long)p->backlog);
    fflush(stderr);
}

/* -v: a new distinct error reason (stderr; clears the live line, which
 * the next progress tick redraws). */
static void show_reason(double t_s, yb_err_class cls, const char *reason, void *ud)
{
    const int *live = ud;
    fprintf(stderr, "%s[+%.3f s] new error reason (%s): %s\n", *live ? "\r\033[K" : "", t_s,
            yb_err_name(cls), reason);
    fflush(stderr);
}

/* The fleet's per-pair options (outside main, where `o` is a macro). */
static const yb_engine_opts *fleet_opts(const yb_fleet *f) { return f->o; }

/* The load of each device --telemetry watched, from the fleet's or the
 * plan's pairs.  Returns 0 or -1 (out of memory). */
static int tm_loads_of(yb_tm_loads *l, const yb_telemetry *tm, const yb_runopts *ro,
                       const yb_fleet *fl, const yb_planfile *pf)
{
    size_t n = ro->plan ? pf->n_pairs : fl->n;
    const char **label = calloc(n ? n : 1, sizeof *label), **names = NULL;
    int rc = -1;
    if (!label)
        return -1;
    for (size_t p = 0; p < n; p++)
        label[p] = ro->plan ? pf->targets.label[pf->pair_tgt[p]] : fl->label[p];
    if (ro->plan && !(names = calloc(pf->n, sizeof *names)))
        goto out;
    for (size_t i = 0; ro->plan && i < pf->n; i++)
        names[i] = pf->w[i].name;
    rc = yb_tm_loads_build(l, tm, label, ro->plan ? pf->pair_rec : fl->rec,
                           ro->plan ? pf->pair_wl : NULL, names, ro->plan ? pf->n : 0, n,
                           !ro->plan && !ro->inventory);
out:
    free(label);
    free(names);
    return rc;
}

static void help(void)
{
    printf("Usage: yangblast run CORPUS --target URL [OPTIONS]\n"
           "       yangblast run CORPUS --targets FILE --fan-out [--split] [OPTIONS]\n"
           "       yangblast run CORPUS --targets FILE --route authority [OPTIONS]\n"
           "       yangblast run --plan FILE [--targets FILE | --target URL] [OPTIONS]\n\n"
           "Replay CORPUS against URL (http://, https://; grpc://, grpcs:// for gNMI; a gNMI\n"
           "corpus over http:// is HTTP/2 without TLS, over https:// TLS with ALPN h2)\n"
           "and report where the time goes.\n\n");
    yb_runopts_help(stdout, YB_RO_RUN);
    printf("  -h, --help              this help\n\n"
           "Durations take units h, m, s, ms, us, ns and compounds (1m30s); sizes k, M, G\n"
           "(powers of 1024); rates k (x1000).  See yangblast(1).\n");
}

/* Refuses what a run would otherwise silently ignore: options of the
 * outputs and thresholds that do not apply (those of the load model:
 * yb_runopts_load_model).  Returns 0 or YB_EXIT_USAGE with the reason
 * printed. */
static int check_applies(const yb_runopts *r)
{
    if (r->given[YB_RO_LOG_FORMAT] && !r->log)
        return yb_usage_error("run", "--log-format goes with --log");
    if (r->th.abort_on_fail && !r->th.n)
        return yb_usage_error("run", "--abort-on-fail goes with --threshold");
    if (r->th.abort_on_fail && !yb_thresholds_checked_per_second(&r->th))
        return yb_usage_error("run", "--abort-on-fail: none of the thresholds can be checked "
                              "before the end (each second: e2e.*, errors as a percentage or "
                              "an upper bound, rate; unscoped)");
    return 0;
}

/* Ends the streamed outputs after the run: says what went wrong (a write
 * error, log lines dropped because the disk could not keep up) and
 * returns YB_EXIT_RUNTIME for it, else YB_EXIT_OK. */
static int close_stream(yb_stream *s, const char *log)
{
    yb_stream_stats st;
    char err[600];
    int ret = YB_EXIT_OK;
    if (yb_stream_close(s, &st, err, sizeof err) < 0) {
        yb_errorf("%s", err);
        ret = YB_EXIT_RUNTIME;
    }
    if (st.log_dropped) {
        yb_errorf("--log %s: %llu of %llu request lines DROPPED: the writer could not keep up "
                  "(the report's figures count every request)", log,
                  (unsigned long long)st.log_dropped,
                  (unsigned long long)(st.log_dropped + st.log_lines));
        ret = YB_EXIT_RUNTIME;
    }
    return ret;
}

/* run --plan FILE: the workloads' options live in the plan, so the
 * command line gives none of them (nor a CORPUS); it gives the run's
 * (threads, outputs, thresholds) and the targets' (--targets, or --target
 * with TLS and credentials).  Returns 0 or YB_EXIT_USAGE. */
static int plan_applies(const yb_runopts *r, int n_args)
{
    if (n_args)
        return yb_usage_error("run", "--plan takes no CORPUS: each workload names its corpus or "
                              "synth spec");
    if (r->fan_out || r->split || r->route_authority)
        return yb_usage_error("run", "%s does not apply with --plan: a workload without "
                              "'targets' goes to every target of --targets FILE, with the "
                              "whole load model", r->fan_out ? "--fan-out" : r->split ? "--split"
                                                                               : "--route");
    if (r->inventory && r->n_targets)
        return yb_usage_error("run", "--targets and --target exclude each other (a workload "
                              "names URLs in its 'targets')");
    for (int id = 0; id < YB_RO_END; id++)
        if (r->given[id] && yb_runopts_applies(YB_RO_PLAN, id))
            return yb_usage_error("run", "%s does not apply with --plan: it is a key of each "
                                  "workload (or of the plan's defaults)", yb_runopts_name(id));
    return 0;
}

/* The run id of a plan (cli/runid.h): its options and the content of
 * the plan file, the inventory and every corpus a workload names (a
 * synthesized one is made from the plan file's own spec).  Returns 0 or
 * YB_EXIT_USAGE with the reason printed. */
static int plan_run_id(const yb_runopts *r, const yb_planfile *pf, char *run_id)
{
    const char *files[2 + YB_PLAN_MAX_WORKLOADS];
    size_t n = 0;
    char err[512];
    files[n++] = r->plan;
    files[n++] = r->inventory;
    for (size_t i = 0; i < pf->n && n < sizeof files / sizeof files[0]; i++)
        files[n++] = pf->w[i].synth_argc ? NULL : pf->w[i].corpus;
    if (yb_run_id(r, files, n, run_id, err, sizeof err) < 0) {
        yb_errorf("%s", err);
        return YB_EXIT_USAGE;
    }
    return 0;
}

/* Refuses the pairs of a fleet or plan that cannot be divided among the
 * shards (yb_check_shard_load; a --fan-out's pairs are whole, their
 * targets divided instead).  Returns 0 or YB_EXIT_USAGE. */
static int check_shard_pairs(const yb_runopts *r, const yb_fleet *fl, const yb_planfile *pf)
{
    int rc = 0;
    if (r->plan)
        for (size_t i = 0; i < pf->n && !rc; i++)
            for (size_t k = 0; k < pf->w[i].fleet.n && !rc; k++) {
                char what[100];
                snprintf(what, sizeof what, "%s: workload '%s'", r->plan, pf->w[i].name);
                rc = yb_check_shard_load("run", r, &pf->w[i].fleet.o[k], what);
            }
    else
        for (size_t i = 0; i < fl->n && !rc; i++)
            rc = yb_check_shard_load("run", r, &fl->o[i], fl->label[i]);
    return rc;
}

static int has_scope(const yb_th_scope *sc, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(sc[i].name, name))
            return 1;
    return 0;
}

/* Appends to sc (n used, room for n + 5 per inventory target) a scope
 * for each name of the inventory's targets that this shard does not run
 * (NAME, NAME/restconf, NAME/gnmi, its URLs), marked as another shard's;
 * names (3 per target) holds the composed names.  Returns how many it
 * appended. */
static size_t away_scopes(const yb_fleet *fl, char (*names)[80], yb_th_scope *sc, size_t n)
{
    static const char AWAY[] = "another shard's target: judged by yangblast merge "
                               "--threshold over every shard's report";
    size_t n0 = n;
    for (size_t t = 0; names && t < fl->inv.n; t++) {
        const yb_inv_target *it = &fl->inv.target[t];
        if (has_scope(sc, n0, it->name))
            continue;
        for (int k = 0; k < 3; k++)
            if (!k || (k == 1 && it->restconf) || (k == 2 && it->gnmi)) {
                char *nm = names[3 * t + (size_t)k];
                snprintf(nm, 80, "%s%s", it->name, !k ? "" : k == 1 ? "/restconf" : "/gnmi");
                sc[n++] = (yb_th_scope){"target", nm, NULL, AWAY};
            }
        if (it->restconf)
            sc[n++] = (yb_th_scope){"target", it->restconf, NULL, AWAY};
        if (it->gnmi)
            sc[n++] = (yb_th_scope){"target", it->gnmi, NULL, AWAY};
    }
    return n - n0;
}

static void free_targets(const yb_runopts *r, yb_fleet *fl, yb_planfile *pf)
{
    if (r->plan)
        yb_planfile_free(pf);
    else if (yb_fleet_wanted(r))
        yb_fleet_free(fl);
}

int yb_cmd_run(int argc, char **argv)
{
    static const struct option own[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    struct option opts[128];
    char shortopts[64];
    if (yb_runopts_getopt(YB_RO_RUN, own, "h", opts, sizeof opts / sizeof opts[0], shortopts,
                          sizeof shortopts) < 0) {
        yb_errorf("internal error: the option table outgrew %s's getopt table", "run");
        return YB_EXIT_RUNTIME;
    }
    yb_runopts ro;
    yb_runopts_init(&ro);
    yb_engine_opts *const op = &ro.o;
#define o (*op)
    int c, rc, ret = YB_EXIT_OK;
    optind = 1;
    opterr = 0; /* option errors are worded by yb_bad_option */
    while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
        if (c == 'h') {
            help();
            return YB_EXIT_OK;
        }
        if (c == '?' || c == ':')
            return yb_bad_option("run", c, argv);
        if ((rc = yb_runopts_apply(YB_RO_RUN, "run", c, optarg, &ro)) != 0)
            return rc == 1 ? yb_bad_option("run", '?', argv) : rc;
    }
    const char *target = ro.target, *rate = ro.rate, *json = ro.json, *unit = ro.unit,
               *user = ro.user, *hgrm = ro.hgrm, *hlog = ro.hlog, *csv = ro.csv;
    uint64_t max_errors = ro.max_errors, subscriptions = ro.subscriptions;
    if (ro.plan) {
        if ((rc = plan_applies(&ro, argc - optind)))
            return rc;
    } else {
        if (optind + 1 != argc)
            return yb_usage_error("run", "expected exactly one CORPUS");
        if (!target && !ro.inventory)
            return yb_usage_error("run", "missing --target URL (or --targets FILE)");
        o.corpus_path = argv[optind];
    }
    if ((rc = yb_runopts_load_model("run", &ro)) || (rc = check_applies(&ro)) ||
        (rc = yb_runopts_shard("run", &ro)))
        return rc;
    /* the run's id: the same on every shard of it (cli/runid.h) */
    char run_id[YB_RUN_ID_MAX + 1];
    char err[512];
    if (ro.run_id) {
        snprintf(run_id, sizeof run_id, "%s", ro.run_id);
    } else {
        const char *inputs[] = {ro.plan ? NULL : o.corpus_path, ro.inventory, ro.plan};
        if (yb_run_id(&ro, inputs, sizeof inputs / sizeof inputs[0], run_id, err,
                      sizeof err) < 0) {
            yb_errorf("%s", err);
            return YB_EXIT_USAGE;
        }
    }
    if (!ro.given[YB_RO_SEED]) /* each run its own values; every shard the run's */
        o.codec.seed = ro.shard_opt ? yb_run_id_seed(run_id) : yb_random_seed();
    /* the start, and where the engine says when it was: every pair's
     * copy of the options carries them (the engine reads the first's) */
    int64_t started_ns = 0;
    o.start_at_ns = ro.start_at_ns;
    o.started_unix_ns = &started_ns;
    /* a shard's reports describe its own part of a divided load model (its
     * part of -c, -n and the rate: the shards' add up to the run's); a
     * --fan-out divides targets, each whole */
    const yb_shard load_shard = ro.fan_out ? (yb_shard){0, 0} : o.shard;
    const double load_parts = yb_shard_divides(&load_shard) ? load_shard.count : 1;
    if (ro.plan) /* each workload's concurrency is its own; at least -t by default */
        o.concurrency = o.threads;
    if ((rc = yb_check_shared("run", &ro)))
        return rc;
    const char *proto = "";
    char redacted[256];
    /* several targets: every one checked (and the inventory validated)
     * before anything is sent */
    yb_fleet fleet, *fl = &fleet;
    yb_planfile pf;
    memset(&pf, 0, sizeof pf);
    int multi = yb_fleet_wanted(&ro) || ro.plan;
    if (multi && (ro.connect_to || ro.servername || ro.host_header))
        return yb_usage_error("run", "%s applies to one --target (it names that target's "
                              "address or name), not to several",
                              ro.connect_to ? "--connect-to" : ro.servername ? "--servername"
                                                                             : "-H 'Host: ...'");
    if (ro.plan) {
        if ((rc = yb_planfile_prepare("run", &ro, &pf)))
            return rc;
        /* the id again, now with the corpora the plan's workloads name
         * (the seed above had to be chosen before they were resolved) */
        if (!ro.run_id && (rc = plan_run_id(&ro, &pf, run_id))) {
            yb_planfile_free(&pf);
            return rc;
        }
        fl = &pf.targets;
        proto = pf.proto;
        target = pf.desc;
    } else if (multi) {
        if ((rc = yb_fleet_prepare("run", &ro, &fleet)))
            return rc;
        proto = fleet.proto;
        target = fleet.desc;
    } else {
        if (yb_target_parse_via(target, ro.connect_to, &o.target, err, sizeof err) < 0) {
            yb_errorf("%s", err);
            return YB_EXIT_USAGE;
        }
        if (ro.servername) /* checked by yb_runopts_apply; argv */
            o.target.servername = ro.servername;
        if (!o.target.tls && (rc = yb_check_tls_applies("run", &ro, target)))
            return rc;
        if (o.target.tls && (rc = yb_check_plain_applies("run", &ro, target)))
            return rc;
        yb_census_tmpl tc = {.all = o.codec.templates};
        rc = yb_pick_codec(o.corpus_path, &o.ops, &proto, redacted, sizeof redacted, &tc);
        if (rc || (rc = yb_check_templates("run", o.corpus_path, ro.given[YB_RO_SEED], &tc)))
            return rc;
        int h2 = o.ops == &yb_h2_client_ops;
        if ((rc = yb_check_corpus_target("run", o.corpus_path, proto, h2, &o.target, target,
                                         ro.given['m'] ? o.streams : 1)) ||
            (rc = yb_check_shard_load("run", &ro, &o, NULL)))
            return rc;
    }
    if (multi && (rc = check_shard_pairs(&ro, fl, &pf))) {
        free_targets(&ro, fl, &pf);
        return rc;
    }
    /* the parts of the run a threshold's scope may name: each target, by
     * its name (an inventory's, "NAME/gnmi" when routed) or URL; their
     * figures are filled in after the run */
    size_t n_own = multi ? 2 * fl->n + pf.n : 1, n_scopes = n_own;
    /* a --fan-out shard's inventory targets of other shards: named by a
     * threshold, they are judged by yangblast merge, not here */
    size_t n_away = multi && !ro.plan && ro.fan_out && yb_shard_divides(&o.shard)
                        ? 5 * fl->inv.n : 0;
    /* one block: the scopes, then the other shards' composed names */
    yb_th_scope *scopes = calloc(1, (n_own + n_away) * sizeof *scopes +
                                        (n_away ? 3 * fl->inv.n * 80 : 0));
    char(*away)[80] = scopes && n_away ? (char(*)[80])(scopes + n_own + n_away) : NULL;
    if (!scopes) {
        free_targets(&ro, fl, &pf);
        yb_errorf("out of memory");
        return YB_EXIT_RUNTIME;
    }
    if (multi) {
        for (size_t i = 0; i < fl->n; i++) {
            scopes[2 * i] = (yb_th_scope){"target", fl->label[i], NULL, NULL};
            scopes[2 * i + 1] = (yb_th_scope){"target", fl->url[i], NULL, NULL};
        }
        for (size_t i = 0; i < pf.n; i++)
            scopes[2 * fl->n + i] = (yb_th_scope){"workload", pf.w[i].name, NULL, NULL};
    } else
        scopes[0] = (yb_th_scope){"target", target, NULL, NULL};
    n_scopes += away_scopes(fl, away, scopes, n_scopes);
    if (yb_thresholds_check_scopes(&ro.th, scopes, n_scopes, err, sizeof err) < 0) {
        free(scopes);
        free_targets(&ro, fl, &pf);
        return yb_usage_error("run", "%s", err);
    }
    if (subscriptions && strcmp(proto, "gnmi")) {
        free(scopes);
        free_targets(&ro, fl, &pf);
        return yb_usage_error("run", "--subscriptions holds gNMI Subscribe calls open, but %s is "
                              "a %s corpus", o.corpus_path, proto);
    }

    /* Every output is checked now: a bad path costs milliseconds, not the
     * run.  (--keylog is a TLS session log, appended to by the transport.) */
    const char *outs[] = {json, hgrm, hlog, ro.log, ro.series, ro.html};
    FILE *text;
    yb_credentials cred;
    memset(&cred, 0, sizeof cred);
    if ((rc = yb_check_outputs("run", outs, sizeof outs / sizeof outs[0], csv, &text)) ||
        (o.tls.keylog && yb_outfile_is_stdout(o.tls.keylog) &&
         (rc = yb_usage_error("run", "--keylog takes a file, not '-'")))) {
        free_targets(&ro, fl, &pf);
        free(scopes);
        return rc;
    }

    /* Credentials: from the environment or files only, never argv (a
     * fleet's are each target's, loaded by yb_fleet_prepare). */
    if (!multi) {
        if (yb_credentials_load(user, ro.pwfile, ro.tokfile, &cred) < 0) {
            free(scopes);
            return YB_EXIT_USAGE;
        }
        if ((rc = yb_check_redactions("run", o.corpus_path, redacted, &cred,
                                      ro.no_credentials))) {
            yb_credentials_cleanup(&cred);
            free(scopes);
            return rc;
        }
        yb_engine_bind(&o, &cred, user);
    }
    yb_runopts_bind_headers(&ro, &o);
    o.stop = &stop_flag;
    int live = !ro.quiet && isatty(STDERR_FILENO) && isatty(STDOUT_FILENO);
    if (live)
        o.progress = show_progress;
    if (ro.verbose) {
        o.on_reason = show_reason;
        o.reason_ud = &live;
    }

    /* Outputs written as the run goes, opened now: a file that cannot be
     * opened stops the run before its first request. */
    yb_stream_opts so = {.log = ro.log, .log_csv = ro.log_csv, .series = ro.series, .hlog = hlog,
                         .shard = o.shard.index};
    yb_stream *stream = NULL;
    yb_telemetry *tm = NULL;          /* --telemetry */
    yb_tm_target *tm_tgs = NULL;
    yb_engine_opts *tm_opts = NULL;   /* a plan's: one per distinct target */
    yb_tm_cfg tm_cfg;
    yb_tm_loads tm_loads;
    memset(&tm_loads, 0, sizeof tm_loads);
    char single_label[80];
    /* the rewrites, tried on every record now: none fails mid-run */
    if ((rc = yb_runopts_rewrite("run", &ro, &o))) {
        ret = rc;
        goto out;
    }
    yb_metrics *metrics = NULL;
    if (ro.th.abort_on_fail) { /* the thresholds see each second as --series does */
        if (yb_thresholds_arm(&ro.th, &stop_flag) < 0) {
            yb_errorf("out of memory");
            ret = YB_EXIT_RUNTIME;
            goto out;
        }
        so.on_second = yb_thresholds_second;
        so.second_ud = &ro.th;
    }
    if (so.log || so.series || so.hlog || so.on_second) {
        char serr[600];
        if (!(stream = yb_stream_open(&so, serr, sizeof serr))) {
            yb_errorf("%s", serr);
            ret = YB_EXIT_USAGE;
            goto out;
        }
        o.stream = stream;
    }
    if ((rc = yb_live_metrics_start("run", ro.metrics_listen, ro.metrics_series,
                                    rate || o.timing_original,
                                    o.sched.kind == YB_SCHED_RATE ? o.sched.rate / load_parts : 0,
                                    &metrics))) {
        ret = rc;
        goto out;
    }
    o.metrics = metrics;

    yb_cli_catch_stop(on_signal);

    /* --telemetry: its own sessions, up before the load for the baseline
     * and after it for the tail */
    if (ro.telemetry) {
        size_t np = multi ? fl->n : 1;
        char(*labels)[80] = multi ? fl->label : &single_label;
        if (!multi)
            snprintf(single_label, sizeof single_label, "%.79s", target);
        if (!(tm_tgs = calloc(np, sizeof *tm_tgs)) ||
            (ro.plan && !(tm_opts = calloc(np, sizeof *tm_opts)))) {
            yb_errorf("out of memory");
            ret = YB_EXIT_RUNTIME;
            goto out;
        }
        /* a plan's devices are its distinct targets, each watched with the
         * options of a pair going to it */
        for (size_t i = 0; ro.plan && i < np; i++)
            tm_opts[i] = *yb_planfile_target_opts(&pf, i);
        if (!(tm = yb_telemetry_for("run", ro.tele_interval_ns, ro.tele_baseline_ns, ro.tele_paths,
                                    ro.n_tele_paths, ro.plan ? tm_opts : multi ? fleet_opts(fl) : op,
                                    (const char(*)[80])labels, np,
                                    multi && !ro.inventory && !ro.plan, tm_tgs, &tm_cfg))) {
            ret = YB_EXIT_USAGE;
            goto out;
        }
        yb_telemetry_baseline(tm, (volatile const int *)&stop_flag);
    }

    yb_recorder rec;
    if (yb_recorder_init(&rec) < 0) {
        yb_errorf("out of memory");
        ret = YB_EXIT_RUNTIME;
        goto out;
    }
    double cpu_user = 0, cpu_sys = 0;
    yb_plan plan; /* a fleet's or a plan file's */
    memset(&plan, 0, sizeof plan);
    if (multi) {
        if (ro.plan ? yb_planfile_plan(&pf, &o, &plan) < 0 : yb_fleet_plan(fl, &o, &plan) < 0) {
            yb_errorf("out of memory");
            yb_recorder_cleanup(&rec);
            ret = YB_EXIT_RUNTIME;
            goto out;
        }
        rc = yb_run_plan_timed(&plan, &rec, ro.plan ? pf.pair_rec : fl->rec, &cpu_user,
                               &cpu_sys, err, sizeof err);
        if (!rc && ro.plan && yb_planfile_merge(&pf) < 0) {
            snprintf(err, sizeof err, "out of memory");
            rc = -1;
        }
    } else {
        rc = yb_run_timed(&o, &rec, &cpu_user, &cpu_sys, err, sizeof err);
    }
    if (live)
        fputs("\r\033[K", stderr);
    yb_telemetry_stop(tm, (volatile const int *)&stop_flag);
    if (stream)
        ret = close_stream(stream, ro.log); /* flushed before any report is printed */
    if (rc == YB_ENGINE_NOT_STARTED) { /* a signal during --start-at's wait */
        yb_errorf("%s", err);
        yb_recorder_cleanup(&rec);
        ret = YB_EXIT_INTERRUPTED;
        goto out;
    }
    if (rc < 0) {
        yb_errorf("%s", err);
        yb_recorder_cleanup(&rec);
        ret = YB_EXIT_USAGE;
        goto out;
    }
    /* this process's part of the run and its clock, for the reports */
    char host[256] = "";
    yb_run_shard shard = {.index = o.shard.index,
                          .count = o.shard.count ? o.shard.count : 1,
                          .host = host,
                          .start_unix_ns = started_ns,
                          .start_at_unix_ns = ro.start_at_ns};
    if (gethostname(host, sizeof host - 1) < 0)
        snprintf(host, sizeof host, "?");
    yb_clock_read(&shard.clock);
    /* a start the preparation (or --telemetry's baseline) made late
     * would skew the shards against each other: said, not hidden */
    if (ro.start_at_ns && started_ns - ro.start_at_ns > 100000000LL)
        yb_errorf("warning: the run started %.3f s after --start-at %s: preparing took longer "
                  "than the time left", (double)(started_ns - ro.start_at_ns) / 1e9, ro.start_at);
    char load_desc[64];
    snprintf(load_desc, sizeof load_desc, "original timing x%g", o.speed);
    /* The target rate over the run for the reports (run.target_rate_curve):
     * the schedule is sampled here, where it is known, over the run or the
     * schedule's own length, whichever is longer. */
    double curve[2 * RATE_CURVE_POINTS];
    size_t n_curve = 0;
    int plan_rates = 0;
    if (ro.plan) /* the workloads' schedules, each from its start offset */
        yb_plan_rate_at(&plan, 0, &plan_rates);
    if (plan_rates) {
        double d = rec.run_end > rec.run_start ? (double)(rec.run_end - rec.run_start) / 1e9 : 0;
        d = d > 0 ? d : 1;
        for (; n_curve < RATE_CURVE_POINTS; n_curve++) {
            double t = d * (double)n_curve / (RATE_CURVE_POINTS - 1);
            curve[2 * n_curve] = t;
            curve[2 * n_curve + 1] = yb_plan_rate_at(&plan, (uint64_t)(t * 1e9), NULL);
        }
    } else if (!o.timing_original && o.sched.kind > YB_SCHED_RATE) {
        double d = rec.run_end > rec.run_start ? (double)(rec.run_end - rec.run_start) / 1e9 : 0;
        double len = (double)yb_sched_length(&o.sched) / 1e9;
        d = len > d ? len : d;
        d = d > 0 ? d : 1;
        for (; n_curve < RATE_CURVE_POINTS; n_curve++) {
            double t = d * (double)n_curve / (RATE_CURVE_POINTS - 1);
            curve[2 * n_curve] = t;
            curve[2 * n_curve + 1] = yb_sched_rate_at(&o.sched, (uint64_t)(t * 1e9)) / load_parts;
        }
    }
    yb_run_info info = {
        .corpus = ro.plan ? ro.plan : o.corpus_path,
        .target = target,
        .protocol = proto,
        .sessions = ro.plan ? "per workload"
                    : o.policy == YB_SESS_REUSE ? "reuse"
                    : o.policy == YB_SESS_PER_REQUEST ? "per-request" : "original",
        .tls_resume = o.tls_resume,
        .concurrency = (unsigned)yb_shard_part(&load_shard, o.concurrency),
        .threads = o.threads,
        .streams = o.streams,
        .unit = unit,
        .rate = o.sched.kind == YB_SCHED_RATE ? o.sched.rate / load_parts : 0,
        .load = o.timing_original ? load_desc : o.sched.kind > YB_SCHED_RATE ? rate : NULL,
        .cpu_user_s = cpu_user,
        .cpu_sys_s = cpu_sys,
        .max_errors = max_errors,
        .interrupted = stop_flag == SIGINT    ? "SIGINT"
                       : stop_flag == SIGTERM ? "SIGTERM"
                                              : NULL, /* (or a threshold: YB_TH_STOPPED) */
        .planned_duration_s = (double)(ro.plan ? pf.planned_ns : o.duration_ns) / 1e9,
        .planned_requests = yb_shard_part(&load_shard, o.requests),
        .accept = &o.codec.accept,
        .rate_curve = n_curve ? curve : NULL,
        .n_rate_curve = n_curve,
        .plan_workloads = pf.n,
        .run_id = run_id,
        .shard = ro.shard_opt || ro.start_at ? &shard : NULL,
    };
    info.plan_open_loop = yb_planfile_open_loop(&pf);
    for (size_t i = 0; i < n_own; i++)
        scopes[i].rec = !multi ? &rec : i < 2 * fl->n ? &fl->rec[i / 2] : &pf.w[i - 2 * fl->n].rec;
    /* the CSV's per-target rows: per pair of a plan (workload, target),
     * per target of a fleet */
    size_t n_parts = !multi ? 0 : ro.plan ? pf.n_pairs : fl->n;
    const yb_recorder **parts = n_parts ? calloc(n_parts, sizeof *parts) : NULL;
    const char **part_names = n_parts ? calloc(n_parts, sizeof *part_names) : NULL;
    const char **part_wls = n_parts ? calloc(n_parts, sizeof *part_wls) : NULL;
    if (parts && part_names && part_wls) {
        for (size_t i = 0; i < n_parts; i++) {
            parts[i] = ro.plan ? &pf.pair_rec[i] : &fl->rec[i];
            part_names[i] = ro.plan ? pf.targets.label[pf.pair_tgt[i]] : fl->label[i];
            part_wls[i] = ro.plan ? pf.w[pf.pair_wl[i]].name : NULL;
        }
        info.parts = parts;
        info.part_names = part_names;
        info.part_workloads = part_wls;
        info.n_parts = n_parts;
    } else if (n_parts && csv) {
        yb_errorf("out of memory");
        ret = YB_EXIT_RUNTIME;
    }
    /* each watched device beside its own load (a plan's: per workload too) */
    if (tm && multi && tm_loads_of(&tm_loads, tm, &ro, fl, &pf) < 0) {
        yb_errorf("out of memory");
        ret = YB_EXIT_RUNTIME;
    }
    size_t th_failed = yb_thresholds_eval(&ro.th, &rec, scopes, n_scopes);
    if (yb_report_text(text, &rec, &info) < 0)
        ret = YB_EXIT_RUNTIME;
    if (multi)
        yb_fleet_report_text(text, fl);
    if (ro.plan)
        yb_planfile_report_text(text, &pf);
    if (tm)
        yb_telemetry_report_text(text, tm, &rec, tm_loads.load);
    if (yb_thresholds_text(text, &ro.th, NULL) < 0) /* the verdicts come last */
        ret = YB_EXIT_RUNTIME;
    fflush(text);
    if (json || ro.html) {
        json_t *j = yb_report_json(&rec, &info);
        if (j && ((multi && yb_fleet_report_json(j, fl) < 0) ||
                  (ro.plan && yb_planfile_report_json(j, &pf) < 0) ||
                  (ro.th.n && yb_thresholds_json(j, &ro.th) < 0) ||
                  (tm && json_object_set_new(j, "telemetry",
                                             yb_telemetry_report_json(tm, &rec, tm_loads.load)) < 0))) {
            json_decref(j);
            j = NULL;
        }
        if (!j) {
            yb_errorf("cannot build the JSON report");
            ret = YB_EXIT_RUNTIME;
        }
        if (j && json && yb_write_json_file(json, j, err, sizeof err) < 0) {
            yb_errorf("%s", err);
            ret = YB_EXIT_RUNTIME;
        }
        /* the page renders the run's own JSON report: one interface */
        const char *name = json ? json : "this run";
        if (j && ro.html && yb_html_report(ro.html, &j, &name, 1, NULL, err, sizeof err) < 0) {
            yb_errorf("%s", err);
            ret = YB_EXIT_RUNTIME;
        }
        json_decref(j);
    }
    if (hgrm && yb_report_hgrm(hgrm, &rec, err, sizeof err) < 0) {
        yb_errorf("%s", err);
        ret = YB_EXIT_RUNTIME;
    }
    if (csv && yb_report_csv(csv, &rec, &info, err, sizeof err) < 0) {
        yb_errorf("%s", err);
        ret = YB_EXIT_RUNTIME;
    }
    free(parts);
    free(part_names);
    free(part_wls);
    uint64_t errors = rec.completed - rec.ok;
    if (ret == YB_EXIT_OK && info.interrupted)
        ret = YB_EXIT_INTERRUPTED; /* never mistaken for a complete run */
    else if (ret == YB_EXIT_OK && (errors > max_errors || th_failed))
        ret = YB_EXIT_THRESHOLD;
    yb_recorder_cleanup(&rec);
    /* every report is written: the live figures are final */
    yb_live_metrics_end(metrics, ro.metrics_linger_ns, &stop_flag);
    metrics = NULL;
out:
    yb_telemetry_free(tm);
    yb_tm_loads_free(&tm_loads);
    free(tm_tgs);
    free(tm_opts);
    yb_runopts_cleanup(&ro);
    yb_metrics_free(metrics);
    yb_stream_free(stream);
    yb_thresholds_cleanup(&ro.th);
    free(scopes);
    yb_credentials_cleanup(&cred);
    free_targets(&ro, fl, &pf);
    return ret;
#undef o
}
