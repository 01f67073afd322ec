/* `yangblast serve`: an embedded switch target.  RESTCONF (HTTP/1.1, TLS or
 * plain) and gNMI (gRPC over HTTP/2: TLS with ALPN h2, or h2c with prior
 * knowledge) front ends over one in-memory openconfig-acl datastore, with
 * a cost model (service time, workers, login cost) and fault injection, on
 * one libuv loop.  With devices > 1 the process is a fleet: every device
 * has its own listeners, datastore, workers and queue, fault sequence and
 * statistics; the loop, the TLS contexts and the credentials are shared. */
#ifndef YB_SERVE_SERVER_H
#define YB_SERVE_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "serve/cost.h"
#include "transport/uring.h"

#define YB_SERVE_MAX_FAULTS 32
#define YB_SERVE_MAX_DEVICES 4096
#define YB_SERVE_MAX_DEVICE_WORKERS 64

typedef struct {
    const char *restconf;   /* "ADDR:PORT", ":PORT", "[v6]:PORT" or "off" */
    const char *gnmi;       /* same */
    const char *tls_cert, *tls_key; /* PEM files: TLS on both endpoints */
    int self_signed;        /* 1 = generate an in-memory cert for localhost */
    int no_resumption;      /* 1 = refuse TLS session resumption (tickets and ids) */
    const char *write_cert; /* with self_signed: write the cert PEM here */
    yb_service_time service;
    unsigned workers;       /* 0 = unlimited */
    /* with --devices, --workers A,B,...: device k's workers (the last
     * value for the devices after them); n_device_workers 0 = workers */
    unsigned device_workers[YB_SERVE_MAX_DEVICE_WORKERS];
    size_t n_device_workers;
    const char *auth_user;  /* NULL = no credential checks */
    const char *auth_password;
    uint64_t auth_cost_ns;  /* added to every request's service time */
    uint64_t session_cost_ns; /* added to each connection's first request: the
                                 switch's session set-up (handshake CPU, login) */
    unsigned max_sessions;  /* 0 = unlimited */
    uint64_t idle_timeout_ns; /* 0 = none */
    yb_fault faults[YB_SERVE_MAX_FAULTS];
    size_t n_faults;
    uint64_t seed;
    int sink;               /* answer at once, bodies unparsed */
    uint64_t max_body;      /* request body cap (bytes) */
    const char *stats_path; /* JSON statistics written on exit, or NULL */
    FILE *out;              /* the "serve: ..." line and the summary */
    unsigned devices;       /* 1..YB_SERVE_MAX_DEVICES; device k (0-based) listens
                               on the ports of restconf/gnmi + k (port 0: any) */
    const char *device_addresses; /* NULL, or the IPv4 address in 127.0.0.0/8 of
                               device 0; device k gets it + k, all on the same ports */
    const char *write_inventory; /* write the fleet's inventory (YAML) here, or NULL */
    int io;                 /* YB_IO_*: how plain connections reach the kernel
                               (default YB_IO_EPOLL) */
} yb_serve_opts;

/* Fills o with the defaults: RESTCONF on 127.0.0.1:8443, gNMI on
 * 127.0.0.1:8080, no TLS, fixed:0 service time, unlimited workers, no
 * auth, 16 MiB body cap, seed 1, output on stdout, one device. */
void yb_serve_defaults(yb_serve_opts *o);

/* Runs the server until SIGTERM or SIGINT, then prints the summary (and
 * writes o->stats_path).  Returns 0; -EINVAL for a set-up problem (bad
 * address, unreadable certificate, port in use) with a message naming the
 * thing in err; another negative code for a runtime failure. */
int yb_serve_run(const yb_serve_opts *o, char *err, size_t errlen);

#endif
