/* The replay engine: N worker threads, each with its own libuv loop,
 * corpus share (record k -> worker k mod N), scheduler, session pool and
 * recorder; recorders are merged after the workers join.
 *
 *   source (corpus -> prepared requests) -> scheduler (when) -> pool (on
 *   which session) -> codec -> transport;   results -> recorder */
#ifndef YB_ENGINE_H
#define YB_ENGINE_H

#include <signal.h>
#include <stdint.h>
#include <sys/socket.h>
#include "codec/codec.h"
#include "engine/schedule.h"
#include "stats/recorder.h"
#include "transport/transport.h"

typedef enum {
    YB_SESS_REUSE = 0,   /* persistent sessions, one per concurrency slot */
    YB_SESS_PER_REQUEST, /* a new session (TCP + TLS [+ HTTP/2]) per request */
    YB_SESS_POOL,        /* N persistent sessions shared by all slots */
    YB_SESS_ORIGINAL,    /* one session per recorded connection, in recorded order */
} yb_sess_policy;

/* A parsed --target URL. */
typedef struct {
    char scheme[8];           /* http, https, grpc, grpcs */
    char host[256];           /* without brackets */
    unsigned port;
    int tls;                  /* https / grpcs */
    char authority[300];      /* host[:port] as sent in Host / :authority */
    struct sockaddr_storage addr;
    socklen_t addrlen;
} yb_target;

/* Parses URL and resolves its host (numeric or by name).  Returns 0 or -1
 * with a message in err. */
int yb_target_parse(const char *url, yb_target *t, char *err, size_t errlen);

/* A once-a-second snapshot for live progress (merged across workers). */
typedef struct {
    double elapsed_s;
    double target_rate;     /* open loop: the schedule's rate now; 0 = closed loop */
    uint64_t completed;     /* so far */
    uint64_t last_completed;/* in the last second */
    uint64_t errors;        /* so far */
    uint64_t backlog;       /* waiting for a session now */
    double p50_ms, p99_ms;  /* end-to-end, last second (p99: worst worker) */
} yb_progress;

typedef struct {
    const char *corpus_path;
    const yb_codec_ops *ops; /* codec for the corpus' protocol */
    yb_target target;
    unsigned threads;        /* workers, >= 1 */
    unsigned concurrency;    /* closed-loop slots across all workers, >= threads */
    unsigned streams;        /* HTTP/2 streams per session (1 for HTTP/1.1) */
    yb_sess_policy policy;
    unsigned pool_size;      /* YB_SESS_POOL: sessions across all workers */
    int tls_resume;          /* per-request sessions resume TLS */
    uint64_t requests;       /* total requests; 0 = one pass over the corpus */
    uint64_t duration_ns;    /* stop issuing after this; 0 = none */
    uint64_t timeout_ns;     /* per request (and connect); 0 = none */
    uint64_t cache_bytes;    /* prepared-request cache per worker */
    yb_tls_client_opts tls;
    yb_codec_cfg codec;
    yb_schedule sched;       /* open loop when sched.kind != YB_SCHED_NONE */
    uint64_t max_backlog;    /* open loop: due requests allowed to wait per worker */
    uint64_t spin_ns;        /* open loop: wake this early and spin to the due time */
    int timing_original;     /* open loop at the corpus' recorded times */
    double speed;            /* timing_original: time scale (2 = twice as fast) */
    volatile sig_atomic_t *stop; /* set asynchronously to stop the run */
    /* Called from the calling thread about once a second while the run
     * goes on (NULL = no progress). */
    void (*progress)(const yb_progress *p, void *ud);
    void *progress_ud;
    uint64_t grace_ns;       /* in-flight grace period after a stop */
} yb_engine_opts;

/* Runs the replay and merges every worker's recorder into *out (which the
 * caller has initialised).  Returns 0 when the run happened (per-request
 * errors are in *out), or -1 with a message in err for set-up failures
 * (unreadable corpus, bad TLS files, thread creation). */
int yb_engine_run(const yb_engine_opts *o, yb_recorder *out, char *err, size_t errlen);

#endif
