/* Per-worker recorder: everything one worker measured, with no sharing on
 * the hot path.  Workers record into their own recorder; after they join,
 * the recorders are merged into one for the report.
 *
 * Times are uv_hrtime() nanoseconds; histograms hold microseconds. */
#ifndef YB_RECORDER_H
#define YB_RECORDER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "stats/hdr.h"
#include "stats/ops.h"
#include "util/errors.h"

/* What happened to one request, as the engine saw it.  A timestamp of 0
 * means "did not happen for this request" (e.g. connected == 0 when the
 * request reused an open session: the set-up was paid by another). */
typedef struct {
    uint64_t due;        /* when the schedule wanted it sent */
    uint64_t issued;     /* the generator handed it to the session pool */
    uint64_t send_start; /* first byte handed to the session (or session open started) */
    uint64_t conn_start; /* this request opened a session: connect began */
    uint64_t connected;  /* TCP connected */
    uint64_t tls_done;   /* TLS handshake done */
    uint64_t h2_ready;   /* HTTP/2 SETTINGS exchanged (ours acked, theirs received) */
    uint64_t sent;       /* request fully written to the socket */
    uint64_t first_byte; /* first response byte */
    uint64_t done;       /* response complete, or the error was detected */
    uint64_t bytes_out;  /* request bytes (application data, before TLS) */
    uint64_t bytes_in;   /* response bytes (application data, after TLS) */
    int status;          /* HTTP status, 0 = none */
    int grpc_status;     /* gRPC status, -1 = none */
    int tls_resumed;     /* 1 when this request's handshake resumed a session */
    /* gNMI Subscribe: notifications (SubscribeResponse.update) and the
     * updates inside them received on this call, and the time from
     * send_start to the first sync_response (ns, 0 = none).  The recorder's
     * notification counters come from yb_recorder_notify, not from these. */
    uint64_t notifications, updates;
    uint64_t sync_ns;
    yb_err_class err;    /* YB_ERR_NONE on success */
    uint64_t session;    /* the session that carried it, numbered from 1 in
                          * its pool in opening order; 0 = none (never sent) */
    /* Why it failed, in one line (see util/errors.h): filled by whoever
     * detected the failure (transport, codec, pool) with yb_reason_fmt,
     * "" when none was given.  The first reason given wins: later layers
     * only fill an empty one.  Read it with yb_result_reason. */
    char reason[YB_REASON_MAX];
} yb_result;

/* The reason of a finished result, for reports and per-request logs:
 * res->reason when given, else the class name for an error ("closed"),
 * "" for a success.  Points into res or to static text. */
const char *yb_result_reason(const yb_result *res);

/* Histograms kept, in µs. */
typedef enum {
    YB_H_E2E = 0,  /* done - due (coordinated-omission corrected) */
    YB_H_SERVICE,  /* done - send_start */
    YB_H_CONNECT,  /* connected - conn_start */
    YB_H_TLS,      /* tls_done - connected */
    YB_H_H2,       /* h2_ready - (tls_done or connected) */
    YB_H_WRITE,    /* sent - send_start (excluding set-up phases) */
    YB_H_TTFB,     /* first_byte - sent */
    YB_H_LATENESS, /* send_start - due: how late it was sent, both causes below */
    YB_H_SYNC,     /* Subscribe: first sync_response - send_start */
    YB_H_SAMPLE_LATENESS, /* Subscribe: arrival (wall clock) - Notification.timestamp */
    YB_H_E2E_FAILED, /* failed requests: done - due (the only figure they enter) */
    YB_H_GEN_LATE, /* issued - due: the generator was late */
    YB_H_SESSION_WAIT, /* send_start - issued: waited for a session / stream */
    YB_H_CHAIN,    /* a chain of requests that all succeeded: its last done - its first due */
    YB_H__COUNT
} yb_hist_id;

/* Returns a static snake_case name ("e2e", "service", "connect", ...). */
const char *yb_hist_name(yb_hist_id id);

/* The one definition of the phases a result went through: for id in
 * YB_H_E2E..YB_H_LATENESS, YB_H_GEN_LATE and YB_H_SESSION_WAIT, sets *ns to the phase's duration and returns 1
 * when res went through it (both ends happened, in order; the write phase
 * starts once the session's set-up is done; a request sent before its due
 * time has lateness 0), else returns 0.  Other ids return 0. */
int yb_result_phase(const yb_result *res, yb_hist_id id, uint64_t *ns);

/* One tagged part of a second (HdrHistogram log "Tag="): the end-to-end
 * latency of the successful requests of one (workload, target, operation)
 * completed in that second. */
typedef struct {
    char *tag;           /* "WORKLOAD/TARGET/OPERATION" (yb_recorder_tag) */
    uint8_t *hist;       /* V2-compressed HdrHistogram (µs) */
    size_t hist_len;
    int64_t max_us;
} yb_interval_tag;

typedef struct {
    uint64_t t;          /* second index since the run started */
    uint64_t requests;   /* completed (ok or error) in that second */
    uint64_t errors;
    uint64_t bytes_out, bytes_in;
    uint64_t notifications, updates; /* Subscribe notifications received in that second */
    /* End-to-end latency of the requests completed in that second, as a
     * V2-compressed HdrHistogram (NULL when none), and its p50/p99/max in
     * µs; set by yb_recorder_finish and kept right by yb_recorder_merge. */
    uint8_t *hist;
    size_t hist_len;
    int64_t p50_us, p99_us, max_us;
    /* With yb_recorder_tag: the same histogram split by tag (their sum is
     * hist), in order of first appearance; NULL / 0 otherwise. */
    yb_interval_tag *tags;
    size_t n_tags;
} yb_interval;

#define YB_MAX_STATUS 600
#define YB_STATUS_SLOTS 4
#define YB_GRPC_CODES 17

/* Distinct error reasons kept per recorder; the rest are counted per class
 * in reasons_other. */
#define YB_REASONS 64

/* The first error responses kept with their body, per recorder and per
 * run (the first by completion time), and how much of each body. */
#define YB_ERR_SAMPLES 8
#define YB_ERR_SAMPLE_BODY 1024

typedef struct {
    uint64_t done;           /* uv_hrtime of the completion */
    yb_err_class cls;
    int status, grpc_status; /* as in yb_result (0 / -1 = none) */
    char reason[YB_REASON_MAX];
    size_t body_len;         /* bytes kept, at most YB_ERR_SAMPLE_BODY */
    uint8_t body[YB_ERR_SAMPLE_BODY];
} yb_err_sample;

typedef struct {
    uint64_t count;
    uint64_t first;          /* uv_hrtime of its first occurrence */
    uint32_t hash;
    yb_err_class cls;
    char text[YB_REASON_MAX];
} yb_reason_count;

/* Live histograms (for scrapes while the run goes, report/metrics.h): the
 * same values as the HdrHistograms, counted in fixed buckets.  n[id][b]
 * counts values <= yb_live_bounds_us[b] and above the bound before it;
 * n[id][YB_LIVE_BOUNDS] those above the last bound.  sum_us[id] is the
 * sum of the values (µs, as recorded). */
#define YB_LIVE_BOUNDS 21
extern const uint64_t yb_live_bounds_us[YB_LIVE_BOUNDS];
typedef struct {
    uint64_t n[YB_H__COUNT][YB_LIVE_BOUNDS + 1];
    uint64_t sum_us[YB_H__COUNT];
} yb_live_hist;

typedef struct yb_recorder {
    yb_hdr *h[YB_H__COUNT];
    uint64_t started;          /* requests handed to a session */
    uint64_t completed;        /* requests that ended (ok + errors) */
    uint64_t ok;               /* completed with no error class */
    uint64_t errors[YB_ERR__COUNT];
    /* By exact HTTP status, [0] = no status (read with yb_recorder_status):
     * the first YB_STATUS_SLOTS distinct statuses in status_code/status_n,
     * then every status in status_tab (YB_MAX_STATUS counts, allocated when
     * a status finds no slot, the slots' counts moved into it; NULL before).
     * A run keeps a recorder per target, most of which see one status: the
     * table would be 4.8 KB of each. */
    uint16_t status_code[YB_STATUS_SLOTS];
    uint64_t status_n[YB_STATUS_SLOTS];
    unsigned n_status;         /* slots in use */
    uint64_t *status_tab;
    uint64_t grpc[YB_GRPC_CODES + 1]; /* by gRPC code; [17] = out of range */
    uint64_t bytes_out, bytes_in;   /* every completed request */
    uint64_t ok_bytes_out, ok_bytes_in; /* successful requests only */
    uint64_t sessions_opened, tls_full, tls_resumed;
    uint64_t reconnect_backoffs; /* failed session set-ups the pool waited after
                                  * (engine/pool.h; set by the engine) */
    uint64_t cut_off;          /* in flight when the run was stopped */
    uint64_t unsent;           /* due before the stop or -D, never written to a session */
    /* The generator's threads kept off their CPU during the run (set by
     * the engine, summed over workers): involuntary context switches,
     * time on a CPU and time runnable but waiting for one (0 where the
     * kernel does not say); the machine's CPU ticks during the run and the
     * hypervisor's steal among them (from /proc/stat). */
    uint64_t gen_invol_switches, gen_run_ns, gen_runq_wait_ns;
    uint64_t cpu_ticks, cpu_steal_ticks;
    /* The generator's threads whose I/O path is known (set by the engine,
     * summed over workers; 0 = not known, a report from before) and those
     * among them whose plain-TCP sessions ran on an io_uring (--io; the
     * others, and every TLS session, on libuv's epoll loop). */
    uint64_t gen_io_threads, gen_ring_threads;
    uint64_t retried;          /* re-run on another session (HTTP/2 refused / GOAWAY) */
    uint64_t notifications;    /* Subscribe notifications received */
    uint64_t updates;          /* updates inside them */
    uint64_t chains_ok;        /* chains whose every request succeeded (yb_recorder_chain) */
    uint64_t chains_failed;    /* chains that stopped at a failed, unsent or cut-off request */
    uint64_t run_start, run_end; /* uv_hrtime of the first due time and the last completion */
    yb_interval *iv;           /* per-second series, iv[i].t == i */
    size_t n_iv, cap_iv;
    yb_hdr *iv_h;              /* end-to-end of the second being filled */
    int series_counts_only;    /* 1 = the per-second series keeps counts, no
                                * latency (set before the first add): the
                                * per-target recorders of a fleet, which would
                                * otherwise each compress a histogram a second */
    uint64_t iv_sec;           /* which second iv_h holds */
    uint64_t sealed;           /* seconds before it are sealed (yb_recorder_seal)
                                * and never change again */
    /* Error reasons: the first YB_REASONS distinct (class, text) pairs with
     * their counts; for every class c, the sum of its reasons' counts plus
     * reasons_other[c] equals errors[c].  Entries are appended, never
     * moved; an entry's text, cls and first never change once written and
     * published, so another thread may read entries [0,
     * yb_recorder_reasons_published()) while the owner records.  The
     * array (YB_REASONS entries) is allocated with the first reason: a
     * run keeps a recorder per target, most of which never see an error
     * (NULL while n_reasons == 0; a reason that finds no memory is counted
     * in reasons_other). */
    yb_reason_count *reasons;
    size_t n_reasons;
    _Atomic size_t reasons_pub;
    uint64_t reasons_other[YB_ERR__COUNT];
    /* The first error responses that carried a body, in completion order
     * (YB_ERR_SAMPLES entries, allocated with the first: NULL while
     * n_samples == 0; see yb_recorder_sample_slot). */
    yb_err_sample *samples;
    size_t n_samples;
    /* Per operation (stats/ops.h): every completed request that was given
     * to yb_recorder_add_op, so their counts sum to completed. */
    yb_ops ops;
    /* Live fixed-bucket histograms (yb_recorder_keep_live), or NULL: a
     * worker's own, never merged. */
    yb_live_hist *live;
    /* Tagged seconds (yb_recorder_tag): the prefixes, and the open
     * second's successes as (prefix, operation, µs) until it is sealed. */
    char **tag_prefix;
    size_t n_tag_prefix;
    struct yb_tag_val {
        uint32_t tag, op;
        int64_t us;
    } *tag_vals;
    size_t n_tag_vals, cap_tag_vals;
    int64_t tag_pending;       /* µs of the success yb_recorder_add just put
                                * in the open second (-1: none) */
} yb_recorder;

/* Returns 0 or -ENOMEM.  run_start must be set by the caller before the
 * first yb_recorder_add (intervals are relative to it). */
int yb_recorder_init(yb_recorder *r);
/* The same, but each latency histogram (and the open second's) is made
 * when it first gets a value (or by yb_recorder_fill): a run keeps a
 * recorder per target, most of whose YB_H__COUNT histograms (232 bytes
 * each) never see one.  Until
 * filled, r->h[i] may be NULL, which yb_hdr's readers take as empty; a
 * value whose histogram finds no memory is lost (only when memory ran
 * out).  Returns 0 or -ENOMEM. */
int yb_recorder_init_lazy(yb_recorder *r);
/* Makes r's missing histograms (empty).  Returns 0 or -ENOMEM. */
int yb_recorder_fill(yb_recorder *r);
void yb_recorder_cleanup(yb_recorder *r);
/* From now on also counts every latency value in r->live (allocated
 * here, freed by yb_recorder_cleanup).  Returns 0 or -ENOMEM. */
/* How many requests r counted with HTTP status code (0 = none; 0 for a
 * code outside 0..YB_MAX_STATUS-1). */
uint64_t yb_recorder_status(const yb_recorder *r, int code);
/* Counts n more requests with status code (0 = none; a code outside
 * 0..YB_MAX_STATUS-1 counts as 0).  Returns 0, or -ENOMEM when a status
 * finds no slot and the table cannot be allocated (nothing counted). */
int yb_recorder_count_status(yb_recorder *r, int code, uint64_t n);
/* Every status count of r into out (YB_MAX_STATUS entries, by code). */
void yb_recorder_statuses(const yb_recorder *r, uint64_t *out);
int yb_recorder_keep_live(yb_recorder *r);
/* Records one finished request.  Never allocates except to grow the
 * per-second series (amortised), a fifth distinct status's table and a
 * lazy recorder's histogram at its first value.  It counts in the second of res->done
 * (since run_start), or in the open second when that one is sealed.
 * Counts completed, ok / errors[class] and its reason, status ([0] also
 * takes statuses outside 0..599), grpc (unless grpc_status == -1), bytes
 * (ok_bytes_* too for a success), and the set-up the request paid:
 * sessions_opened when conn_start != 0, tls_full or tls_resumed when
 * tls_done != 0.  Raises run_end to done.  It does not touch started,
 * cut_off or unsent: the engine counts those itself.
 * Latency histograms are for successful requests: a success records
 * end-to-end, service, each phase it paid and YB_H_SYNC (sync_ns != 0),
 * and its end-to-end in the per-second series; a failure records only
 * YB_H_E2E_FAILED.  Both record YB_H_LATENESS (the generator's delay,
 * whatever the answer).
 * Durations are rounded up to whole µs (a sub-µs phase records 1 µs); a
 * phase whose end precedes its start is dropped; a request sent before its
 * due time records the 1 µs lateness floor. */
void yb_recorder_add(yb_recorder *r, const yb_result *res);
/* Counts the set-up of a session no request paid (an open loop opens its
 * sessions before its clock starts): sessions_opened, tls_full or
 * tls_resumed when res->tls_done != 0, and, when it succeeded (res->err
 * YB_ERR_NONE), the connect, TLS and HTTP/2 phases from res's
 * conn_start, connected, tls_done and h2_ready, as yb_recorder_add does
 * for a request that opened its session.  Nothing else (no request, no
 * error, no second). */
void yb_recorder_setup(yb_recorder *r, const yb_result *res);
/* From now on splits each second's end-to-end histogram by tag: the
 * sealed seconds carry one tag per (prefix, operation) that had successes
 * in them, named prefix + the operation's name (r->ops; `other` beyond
 * the cap) with ',' and white space replaced by '_'.  Each call adds a
 * prefix (copied, e.g. "WORKLOAD/TARGET/"); yb_recorder_add_op_as says
 * which one a request goes in (yb_recorder_add_op: the first).  Returns
 * the prefix's index, or -ENOMEM. */
int yb_recorder_tag(yb_recorder *r, const char *prefix);
/* Counts finished request res (already given to yb_recorder_add) in
 * operation op of r->ops (an index from yb_ops_index on r->ops;
 * YB_OP_NONE: none), with its end-to-end latency when it succeeded. */
void yb_recorder_add_op(yb_recorder *r, uint32_t op, const yb_result *res);
/* The same, in prefix `tag` (an index from yb_recorder_tag) of r's tagged
 * seconds. */
void yb_recorder_add_op_as(yb_recorder *r, uint32_t op, uint32_t tag, const yb_result *res);
/* Keeps the body of failed response res (its first YB_ERR_SAMPLE_BODY
 * bytes of body[0..len)) while fewer than YB_ERR_SAMPLES are kept; call it
 * besides yb_recorder_add.  Copies; allocates only the samples' array, with
 * the first (none kept when that fails). */
void yb_recorder_error_body(yb_recorder *r, const yb_result *res, const uint8_t *body, size_t len);
/* The next free entry of r->samples, zeroed and counted in n_samples, or
 * NULL when YB_ERR_SAMPLES are kept or the array cannot be allocated. */
yb_err_sample *yb_recorder_sample_slot(yb_recorder *r);
/* How many entries of r->reasons are published: any thread may read their
 * text, cls and first (not count) once this says so (acquire). */
size_t yb_recorder_reasons_published(const yb_recorder *r);
/* Records one Subscribe notification received at now (uv_hrtime)
 * carrying n_updates updates: counts it (totals and the per-second
 * series) and, when lateness_ns >= 0, records it in YB_H_SAMPLE_LATENESS
 * (rounded up to µs).  Never allocates except to grow the series (and
 * a lazy recorder's histogram). */
void yb_recorder_notify(yb_recorder *r, uint64_t now, int64_t lateness_ns, uint64_t n_updates);
/* Records the end of a chain of requests (corpus chain): ok = every step
 * succeeded, then its latency ns (last step done - first step due) goes
 * into YB_H_CHAIN; otherwise it counts in chains_failed. */
void yb_recorder_chain(yb_recorder *r, int ok, uint64_t ns);
/* Seals every second that ended by now (uv_hrtime), and with final the
 * second now falls in too: they exist in the series from then on (quiet
 * ones with zero counts) and never change again, since a later result or
 * notification timed in a sealed second counts in the open one.  So
 * iv[0 .. sealed) can be handed on as they are.  Returns 0 or -ENOMEM. */
int yb_recorder_seal(yb_recorder *r, uint64_t now, int final);
/* Adds interval src into dst (counts and histogram; dst->t is kept; tags
 * added by name, new ones appended) and refreshes dst's percentiles.
 * Returns 0 or -ENOMEM. */
int yb_interval_add(yb_interval *dst, const yb_interval *src);
/* Frees what iv owns (its histogram and tags; not iv itself). */
void yb_interval_cleanup(yb_interval *iv);
/* Makes *dst a deep copy of src.  Returns 0 or -ENOMEM (dst then owns
 * nothing). */
int yb_interval_copy(yb_interval *dst, const yb_interval *src);
/* Closes the per-second histogram being filled (call once the last
 * result is in, before merging or reporting).  Returns 0 or -ENOMEM. */
int yb_recorder_finish(yb_recorder *r);
/* For a recorder rebuilt from a saved report (report/merge.h): counts n
 * errors of class cls with reason text, first seen at first (uv_hrtime
 * scale), as a merge does (a known reason's count grows, a new one is
 * added while fewer than YB_REASONS are kept, the rest go to
 * reasons_other[cls]). */
void yb_recorder_count_reason(yb_recorder *r, yb_err_class cls, const char *text, uint64_t n,
                              uint64_t first);
/* Makes r->iv[0..n) exist (new ones zeroed with t set).  Returns 0 or
 * -ENOMEM. */
int yb_recorder_extend(yb_recorder *r, size_t n);
/* Adds src into dst (histograms, counters, intervals aligned on
 * run_start; dst->run_start/run_end become the min/max; src's reasons
 * join dst's, up to YB_REASONS distinct, the rest counted in
 * reasons_other; the error responses kept are the first YB_ERR_SAMPLES of
 * both by completion time).  Returns 0 or
 * -ENOMEM. */
int yb_recorder_merge(yb_recorder *dst, const yb_recorder *src);

#endif
