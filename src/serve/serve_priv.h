/* Private to src/serve: the server object shared by the listeners
 * (server.c) and the RESTCONF (restconf.c) and gNMI (gnmi_server.c) front
 * ends. */
#ifndef YB_SERVE_PRIV_H
#define YB_SERVE_PRIV_H

#include <stdint.h>
#include <uv.h>
#include "serve/cost.h"
#include "serve/server.h"
#include "serve/store.h"
#include "serve/system.h"
#include "transport/transport.h"

enum { YB_SP_RESTCONF = 0, YB_SP_GNMI = 1 };
enum { YB_M_GET = 0, YB_M_POST, YB_M_PUT, YB_M_PATCH, YB_M_DELETE, YB_M_OTHER, YB_M__COUNT };
enum { YB_RPC_CAPABILITIES = 0, YB_RPC_GET, YB_RPC_SET, YB_RPC_SUBSCRIBE, YB_RPC_OTHER,
       YB_RPC__COUNT };

typedef struct {
    uint64_t conns[2];          /* accepted, by protocol */
    uint64_t refused;           /* over --max-sessions */
    uint64_t idle_closed;
    uint64_t bad_input;         /* malformed requests / framing errors */
    uint64_t methods[YB_M__COUNT];
    uint64_t rpcs[YB_RPC__COUNT];
    uint64_t http_status[600];
    uint64_t grpc_status[17];
    uint64_t faults[YB_FAULT__COUNT];
    uint64_t streams_refused;   /* gNMI streams above our GOAWAY's last-stream-id: not run */
    uint64_t streams_max;       /* gNMI: most streams open at once on one connection */
    uint64_t auth_failures;
    uint64_t bytes_in[2], bytes_out[2];
} yb_serve_stats;

/* The part of every connection the server sees: first member of the
 * front ends' connection structs. */
typedef struct yb_sconn {
    struct yb_server *srv;
    yb_transport *t;
    int proto;
    unsigned inflight;          /* requests or streams not finished */
    uint64_t last_active;       /* uv_hrtime of the last byte or answer */
    int setup_paid;             /* --session-cost charged (first request) */
    struct yb_sconn *next, *prev;
} yb_sconn;

/* One emulated device (the only one without --devices). */
typedef struct yb_server {
    const yb_serve_opts *o;
    uv_loop_t *loop;
    yb_uring *ring;             /* the loop's io_uring for plain connections, or NULL */
    yb_store *store;
    yb_sched sched;
    yb_rng rng;
    yb_serve_stats st;
    const char *basic_auth;     /* expected "Basic base64(user:pass)" or NULL; shared
                                   by every device, owned by server.c's runner */
    yb_sconn *conns;
    unsigned nconns;
    int stopping;
    uint64_t t_start;
    unsigned goaway_after;      /* gNMI streams per connection; 0 = never */
    uint64_t req_seq;           /* requests seen (fault "@#N" numbering) */
    yb_sys *sys;                /* the openconfig-system view (shared by the
                                   devices, owned by server.c's runner) */
    unsigned index;             /* this device's number (0-based) */
} yb_server;

/* server.c: connection registry. */
void yb_server_conn_add(yb_server *s, yb_sconn *c);
void yb_server_conn_remove(yb_server *s, yb_sconn *c);
/* Counts a status (HTTP or gRPC) in the statistics. */
void yb_server_count_http(yb_server *s, int status);
void yb_server_count_grpc(yb_server *s, int code);

/* restconf.c / gnmi_server.c: accept one pending connection from
 * listener (tls NULL = plain).  Return 0 or -ENOMEM / -EIO (nothing
 * accepted). */
int yb_restconf_accept(yb_server *s, uv_stream_t *listener, yb_tls_ctx *tls);
int yb_gnmi_accept(yb_server *s, uv_stream_t *listener, yb_tls_ctx *tls);
/* gnmi_server.c: closes a connection politely (GOAWAY) on shutdown or
 * idle timeout. */
void yb_gnmi_shutdown_conn(yb_sconn *c);

/* server.c: writes data to path through yb_outfile (a regular file by
 * temporary file + rename, created with mode; a device or pipe in place;
 * "-" to stdout).  Returns 0 or -errno. */
int yb_serve_write_file(const char *path, const void *data, size_t len, int mode);

/* Device k (0-based) of a fleet is named "sw<k+1>". */
#define YB_SERVE_DEVICE_NAME "sw%u"

/* What stats.c and inventory.c are told about one device. */
typedef struct {
    char name[16];              /* "sw1" */
    const char *url[2];         /* RESTCONF and gNMI URL (by YB_SP_*), or "off" */
    const yb_serve_stats *st;
    size_t qmax;                /* queue depth: maximum and time-weighted mean */
    double qmean;
} yb_serve_device_info;

/* stats.c: prints the SIGTERM summary of d[0..n) after secs seconds: one
 * device as the totals block; a fleet as the totals of all devices in the
 * same block followed by one line per device. */
void yb_serve_print_summary(FILE *f, const yb_serve_device_info *d, unsigned n, double secs);
/* stats.c: writes the --stats JSON to path (one device: its figures; a
 * fleet: the totals plus a "devices" array).  Returns 0 or -errno. */
int yb_serve_write_stats(const char *path, const yb_serve_device_info *d, unsigned n,
                         double secs);

/* inventory.c: writes o->write_inventory, the fleet d[0..n) in the native
 * inventory shape that `yangblast run --targets` reads: credentials by reference
 * only (password-env), the CA the --write-cert file.  Returns 0 or -1
 * with a message naming the file in err. */
int yb_serve_write_inventory(const yb_serve_opts *o, const yb_serve_device_info *d, unsigned n,
                             char *err, size_t errlen);

/* restconf.c: the RESTCONF view of the datastore, shared with nothing
 * else; the gNMI side of JSON values lives in gnmi_server.c. */

#endif
