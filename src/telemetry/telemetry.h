/* Device telemetry during a run (`run --telemetry`): one session per
 * device, never shared with the load, on a thread and event loop of its
 * own.  A gNMI target is asked for a STREAM subscription in SAMPLE mode to
 * openconfig-system's CPU, memory and processes (plus --telemetry-path
 * paths); a RESTCONF-only target is polled with one GET per path each
 * interval.  Sessions reuse the project's transport (src/transport) and
 * codecs (src/codec): the h2 client decodes the Subscribe responses and
 * hands each notification over (yb_codec_host.notification), the h1
 * client keeps the GET bodies (yb_codec_cfg.keep_body).
 *
 * Life cycle: yb_telemetry_start (the thread connects and subscribes),
 * the baseline window, the load, yb_telemetry_stop after the tail; then the
 * samples are read by report.c (text, JSON) against the run's recorder.
 * Every observation carries the uv_hrtime it arrived at, the engine's
 * clock, so that it lines up with the run's per-second series. */
#ifndef YB_TELEMETRY_H
#define YB_TELEMETRY_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include "codec/codec.h"
#include "engine/target.h"
#include "stats/recorder.h"
#include "transport/transport.h"

#define YB_TM_MAX_PATHS 13   /* --telemetry-path: 16 subscriptions minus ours */
#define YB_TM_MAX_TARGETS 4096

/* One device to watch. */
typedef struct {
    const char *label;           /* the name the report gives it (URL or inventory name) */
    const yb_target *target;     /* resolved; its URL scheme says TLS */
    int gnmi;                    /* 1: gNMI Subscribe; 0: RESTCONF GET polling */
    const yb_tls_client_opts *tls; /* the run's TLS options for it (ALPN is set here) */
    const yb_codec_cfg *codec;   /* authority, scheme, credentials, -H, accept */
} yb_tm_target;

typedef struct {
    const yb_tm_target *targets;
    size_t n;
    uint64_t interval_ns;        /* sampling interval (default 1 s) */
    uint64_t baseline_ns;        /* before the load (default 5 s) */
    const char *paths[YB_TM_MAX_PATHS]; /* --telemetry-path, gNMI path syntax */
    size_t n_paths;
} yb_tm_cfg;

typedef struct yb_telemetry yb_telemetry;

/* Starts the telemetry thread: it connects to every target and subscribes
 * (or starts polling).  cfg and what it points to must outlive the object.
 * Returns it, or NULL with a message in err (a path that does not parse, a
 * TLS context that cannot be made, out of memory). */
yb_telemetry *yb_telemetry_start(const yb_tm_cfg *cfg, char *err, size_t errlen);
/* Waits out the baseline window (returns early when *stop becomes
 * non-zero). */
void yb_telemetry_baseline(const yb_telemetry *t, volatile const int *stop);
/* Waits for the tail (two intervals, at least 2 s, so that the seconds
 * after the load are seen; early when *stop), then ends the sessions and
 * joins the thread.  NULL ok. */
void yb_telemetry_stop(yb_telemetry *t, volatile const int *stop);
void yb_telemetry_free(yb_telemetry *t);

/* ---- what report.c reads (after yb_telemetry_stop) ---------------------- */

enum {
    YB_TM_CPU_ALL = 0,   /* cpu[index=ALL] total instant, percent */
    YB_TM_CPU_N,         /* cpu[index=id] total instant */
    YB_TM_MEM_PHYS,      /* bytes */
    YB_TM_MEM_USED,      /* bytes */
    YB_TM_PROC_CPU,      /* process pid=id cpu-utilization, percent of a core */
    YB_TM_PROC_MEM,      /* process pid=id memory-usage, bytes */
    YB_TM_EXTRA,         /* a --telemetry-path leaf: id indexes the leaf names */
};

typedef struct {
    uint64_t t;          /* uv_hrtime of its arrival */
    uint32_t kind, id;
    double v;
} yb_tm_obs;

#define YB_TM_MAX_NAMES 4096 /* process and extra-leaf names kept per device */

typedef struct {
    uint64_t id;
    char name[64];
} yb_tm_name;

/* What one device's session saw.  Owned by the yb_telemetry. */
typedef struct {
    const yb_tm_target *tg;
    int connected;               /* the session came up */
    int supported;               /* system data arrived */
    char note[300];              /* why not ("" when fine) */
    yb_tm_obs *obs;
    size_t n_obs, cap_obs;
    uint64_t obs_dropped;        /* over the cap */
    yb_tm_name *procs;           /* pid -> name */
    size_t n_procs;
    yb_tm_name *extras;          /* leaf path text by YB_TM_EXTRA id */
    size_t n_extras;
    /* the session's own cost */
    uint64_t sessions, requests, notifications, updates, bytes_out, bytes_in;
} yb_tm_device;

size_t yb_telemetry_devices(const yb_telemetry *t, const yb_tm_device **out);
const yb_tm_cfg *yb_telemetry_cfg(const yb_telemetry *t);
/* CPU seconds the telemetry thread used (user + system), its own cost. */
double yb_telemetry_cpu_s(const yb_telemetry *t);

/* ---- report.c ------------------------------------------------------------ */

/* What the reports lay beside one device's samples: the load it got (its
 * own per-second series: a fleet's or a plan's devices each have theirs)
 * and, for a plan, each workload's part of it (a requests-per-second
 * column per workload sending to the device). */
typedef struct {
    const yb_recorder *rec;           /* NULL: the run's recorder */
    const char *const *col_name;      /* n_cols workload names */
    const yb_recorder *const *col_rec; /* their recorders at this device */
    size_t n_cols;
} yb_tm_load;

/* The telemetry part of the text report: per device, CPU and memory per
 * second beside its load's throughput and p99 (rec's per-second series, or
 * load[k]'s for device k when load is not NULL; seconds before the load are
 * negative), baseline vs under load, the top processes by CPU under load,
 * the saturation sentence when there is one, and the telemetry's own cost.
 * load, when not NULL, has one entry per device in the configured order. */
void yb_telemetry_report_text(FILE *out, const yb_telemetry *t, const yb_recorder *rec,
                              const yb_tm_load *load);
/* The "telemetry" member of the JSON report (yangblast-report(5)), with
 * load as above.  Returns a new reference or NULL on ENOMEM. */
json_t *yb_telemetry_report_json(const yb_telemetry *t, const yb_recorder *rec,
                                 const yb_tm_load *load);

/* Summary figures of device d under load (between rec's run_start and
 * run_end): mean CPU (ALL, percent; -1 when none) and the busiest process's
 * mean CPU.  For experiment sweeps. */
double yb_telemetry_load_cpu(const yb_tm_device *d, uint64_t from, uint64_t to);

#endif
