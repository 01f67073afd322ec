/* `yangblast serve`: what was served, as the summary printed on SIGTERM
 * and the --stats JSON.  One device reads as it always has; a fleet reads
 * as the totals in that same shape followed by each device's figures. */
#include "config.h"
#include "serve/serve_priv.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const METHOD_NAMES[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "other"};
static const char *const RPC_NAMES[] = {"Capabilities", "Get", "Set", "Subscribe", "other"};
static const char *const GRPC_NAMES[] = {
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
    "UNAUTHENTICATED"};

static uint64_t sum(const uint64_t *a, size_t n)
{
    uint64_t t = 0;
    for (size_t i = 0; i < n; i++)
        t += a[i];
    return t;
}

/* yb_serve_stats holds nothing but uint64_t counters, so the fleet's
 * totals are the element-wise sum (streams_max, a maximum, excepted). */
_Static_assert(sizeof(yb_serve_stats) % sizeof(uint64_t) == 0,
               "yb_serve_stats holds only uint64_t counters");

/* The totals of d[0..n): counters summed; queue depth: the deepest any
 * device's queue got, and the mean of the devices' mean depths. */
static void totals(const yb_serve_device_info *d, unsigned n, yb_serve_stats *st, size_t *qmax,
                   double *qmean)
{
    uint64_t *t = (uint64_t *)st;
    const size_t words = sizeof *st / sizeof(uint64_t);
    memset(st, 0, sizeof *st);
    *qmax = 0;
    *qmean = 0;
    for (unsigned k = 0; k < n; k++) {
        const uint64_t *a = (const uint64_t *)d[k].st;
        for (size_t i = 0; i < words; i++)
            t[i] += a[i];
        if (d[k].qmax > *qmax)
            *qmax = d[k].qmax;
        *qmean += d[k].qmean;
    }
    /* ... except a maximum, which is the largest */
    st->streams_max = 0;
    for (unsigned k = 0; k < n; k++)
        if (d[k].st->streams_max > st->streams_max)
            st->streams_max = d[k].st->streams_max;
    if (n)
        *qmean /= n;
}

static void print_block(FILE *f, const yb_serve_stats *st, size_t qmax, double qmean)
{
    fprintf(f, "connections: restconf %llu, gnmi %llu, refused %llu, idle-closed %llu\n",
            (unsigned long long)st->conns[0], (unsigned long long)st->conns[1],
            (unsigned long long)st->refused, (unsigned long long)st->idle_closed);
    fprintf(f, "requests: restconf %llu (", (unsigned long long)sum(st->methods, YB_M__COUNT));
    for (int i = 0; i < YB_M__COUNT; i++)
        fprintf(f, "%s%s %llu", i ? " " : "", METHOD_NAMES[i], (unsigned long long)st->methods[i]);
    fprintf(f, "); gnmi %llu (", (unsigned long long)sum(st->rpcs, YB_RPC__COUNT));
    for (int i = 0; i < YB_RPC__COUNT; i++)
        fprintf(f, "%s%s %llu", i ? " " : "", RPC_NAMES[i], (unsigned long long)st->rpcs[i]);
    fprintf(f, ")\nhttp status:");
    for (int i = 0; i < 600; i++)
        if (st->http_status[i])
            fprintf(f, " %d=%llu", i, (unsigned long long)st->http_status[i]);
    fprintf(f, "\ngrpc status:");
    for (int i = 0; i <= 16; i++)
        if (st->grpc_status[i])
            fprintf(f, " %s=%llu", GRPC_NAMES[i], (unsigned long long)st->grpc_status[i]);
    fprintf(f, "\nqueue depth: max %zu mean %.3f\nfaults:", qmax, qmean);
    for (int i = 0; i < YB_FAULT__COUNT; i++)
        fprintf(f, " %s %llu", yb_fault_name((yb_fault_kind)i), (unsigned long long)st->faults[i]);
    fprintf(f, "; streams refused after GOAWAY %llu", (unsigned long long)st->streams_refused);
    fprintf(f, "\nauth failures: %llu, bad input: %llu\n", (unsigned long long)st->auth_failures,
            (unsigned long long)st->bad_input);
}

/* One line per device of a fleet: the figures that tell devices apart. */
static void print_device(FILE *f, const yb_serve_device_info *d)
{
    const yb_serve_stats *st = d->st;
    uint64_t http_err = 0, grpc_err = sum(st->grpc_status + 1, 16);
    for (int i = 400; i < 600; i++)
        http_err += st->http_status[i];
    fprintf(f, "%s: connections restconf %llu gnmi %llu refused %llu idle-closed %llu; "
            "requests restconf %llu gnmi %llu; http 4xx/5xx %llu, grpc not OK %llu; "
            "queue max %zu mean %.3f; faults %llu; auth failures %llu; bad input %llu\n",
            d->name, (unsigned long long)st->conns[0], (unsigned long long)st->conns[1],
            (unsigned long long)st->refused, (unsigned long long)st->idle_closed,
            (unsigned long long)sum(st->methods, YB_M__COUNT),
            (unsigned long long)sum(st->rpcs, YB_RPC__COUNT), (unsigned long long)http_err,
            (unsigned long long)grpc_err, d->qmax, d->qmean,
            (unsigned long long)sum(st->faults, YB_FAULT__COUNT),
            (unsigned long long)st->auth_failures, (unsigned long long)st->bad_input);
}

void yb_serve_print_summary(FILE *f, const yb_serve_device_info *d, unsigned n, double secs)
{
    fprintf(f, "serve: stopped after %.3f s\n", secs);
    if (n == 1) {
        print_block(f, d[0].st, d[0].qmax, d[0].qmean);
    } else {
        yb_serve_stats *t = malloc(sizeof *t);
        size_t qmax;
        double qmean;
        if (t) {
            totals(d, n, t, &qmax, &qmean);
            fprintf(f, "totals of %u devices:\n", n);
            print_block(f, t, qmax, qmean);
            free(t);
        }
        for (unsigned k = 0; k < n; k++)
            print_device(f, &d[k]);
    }
    fflush(f);
}

/* The JSON object of one set of figures (without duration_s), or NULL
 * when out of memory. */
static json_t *stats_json(const yb_serve_stats *st, size_t qmax, double qmean)
{
    json_t *j = json_object(), *rc = json_object(), *gn = json_object(), *hs = json_object(),
           *gs = json_object(), *fl = json_object();
    if (!j || !rc || !gn || !hs || !gs || !fl) {
        json_decref(j);
        json_decref(rc);
        json_decref(gn);
        json_decref(hs);
        json_decref(gs);
        json_decref(fl);
        return NULL;
    }
    json_object_set_new(rc, "total", json_integer((json_int_t)sum(st->methods, YB_M__COUNT)));
    for (int i = 0; i < YB_M__COUNT; i++)
        json_object_set_new(rc, METHOD_NAMES[i], json_integer((json_int_t)st->methods[i]));
    json_object_set_new(gn, "total", json_integer((json_int_t)sum(st->rpcs, YB_RPC__COUNT)));
    for (int i = 0; i < YB_RPC__COUNT; i++)
        json_object_set_new(gn, RPC_NAMES[i], json_integer((json_int_t)st->rpcs[i]));
    for (int i = 0; i < 600; i++)
        if (st->http_status[i]) {
            char k[8];
            snprintf(k, sizeof k, "%d", i);
            json_object_set_new(hs, k, json_integer((json_int_t)st->http_status[i]));
        }
    for (int i = 0; i <= 16; i++)
        if (st->grpc_status[i])
            json_object_set_new(gs, GRPC_NAMES[i], json_integer((json_int_t)st->grpc_status[i]));
    for (int i = 0; i < YB_FAULT__COUNT; i++)
        json_object_set_new(fl, yb_fault_name((yb_fault_kind)i),
                            json_integer((json_int_t)st->faults[i]));
    json_object_set_new(j, "connections",
                        json_pack("{s:I,s:I,s:I,s:I}", "restconf", (json_int_t)st->conns[0],
                                  "gnmi", (json_int_t)st->conns[1], "refused",
                                  (json_int_t)st->refused, "idle_closed",
                                  (json_int_t)st->idle_closed));
    /* "o" hands rc and gn to the new object (jansson steals them even on failure). */
    json_object_set_new(j, "requests", json_pack("{s:o,s:o}", "restconf", rc, "gnmi", gn));
    json_object_set_new(j, "http_status", hs);
    json_object_set_new(j, "grpc_status", gs);
    json_object_set_new(j, "queue_depth", json_pack("{s:I,s:f}", "max", (json_int_t)qmax,
                                                    "mean", qmean));
    json_object_set_new(j, "faults", fl);
    json_object_set_new(j, "streams_refused", json_integer((json_int_t)st->streams_refused));
    json_object_set_new(j, "streams_max_concurrent", json_integer((json_int_t)st->streams_max));
    json_object_set_new(j, "auth_failures", json_integer((json_int_t)st->auth_failures));
    json_object_set_new(j, "bad_input", json_integer((json_int_t)st->bad_input));
    json_object_set_new(j, "bytes_in", json_pack("{s:I,s:I}", "restconf",
                                                 (json_int_t)st->bytes_in[0], "gnmi",
                                                 (json_int_t)st->bytes_in[1]));
    json_object_set_new(j, "bytes_out", json_pack("{s:I,s:I}", "restconf",
                                                  (json_int_t)st->bytes_out[0], "gnmi",
                                                  (json_int_t)st->bytes_out[1]));
    return j;
}

int yb_serve_write_stats(const char *path, const yb_serve_device_info *d, unsigned n,
                         double secs)
{
    json_t *j = NULL, *devs = NULL;
    yb_serve_stats *t = NULL;
    char *text = NULL;
    int ret = -ENOMEM;
    if (n == 1) {
        if (!(j = stats_json(d[0].st, d[0].qmax, d[0].qmean)))
            goto out;
    } else {
        size_t qmax;
        double qmean;
        if (!(t = malloc(sizeof *t)))
            goto out;
        totals(d, n, t, &qmax, &qmean);
        if (!(j = stats_json(t, qmax, qmean)) || !(devs = json_array()))
            goto out;
        for (unsigned k = 0; k < n; k++) {
            json_t *dj = stats_json(d[k].st, d[k].qmax, d[k].qmean);
            if (!dj)
                goto out;
            json_object_set_new(dj, "name", json_string(d[k].name));
            json_object_set_new(dj, "restconf", json_string(d[k].url[YB_SP_RESTCONF]));
            json_object_set_new(dj, "gnmi", json_string(d[k].url[YB_SP_GNMI]));
            if (json_array_append_new(devs, dj) < 0)
                goto out;
        }
        json_object_set_new(j, "devices", devs);
        devs = NULL;
    }
    json_object_set_new(j, "duration_s", json_real(secs));
    if (!(text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS)))
        goto out;
    size_t len = strlen(text);
    text[len] = '\n'; /* the terminator's byte carries the newline for the write */
    ret = yb_serve_write_file(path, text, len + 1, 0644);
    text[len] = 0;
out:
    free(text);
    free(t);
    json_decref(devs);
    json_decref(j);
    return ret;
}
