/* yangblast serve: options -> the serve module (src/serve/). */
#include "config.h"
#include "cli/cli.h"
#include "serve/server.h"
#include "util/outfile.h"
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
    printf("Usage: yangblast serve [OPTIONS]\n\n"
           "Run an embedded switch target: RESTCONF (HTTP/1.1) and gNMI (gRPC over HTTP/2)\n"
           "over one in-memory openconfig-acl datastore, with a cost model and faults.\n"
           "Prints \"serve: restconf URL gnmi URL\" once listening (with --devices: a\n"
           "\"serve: swK restconf URL gnmi URL\" line per device, then \"serve: N devices\n"
           "ready\"); SIGTERM/SIGINT stop it and print what was served.\n\n"
           "  --restconf ADDR:PORT    RESTCONF listener (default 127.0.0.1:8443; :PORT =\n"
           "                          loopback; port 0 = any free port; off = disabled)\n"
           "  --gnmi ADDR:PORT        gNMI listener (default 127.0.0.1:8080; same forms)\n"
           "  --tls-cert FILE         TLS certificate (PEM) for both endpoints\n"
           "  --tls-key FILE          its private key (PEM)\n"
           "  --self-signed           generate an in-memory certificate for localhost,\n"
           "                          127.0.0.1 and ::1\n"
           "  --write-cert FILE       with --self-signed: write the certificate (PEM) for\n"
           "                          clients' --cacert\n"
           "  --service-time SPEC     fixed:DUR | uniform:MIN..MAX | exp:MEAN, optionally\n"
           "                          +per-kb:DUR per KiB of request body (default fixed:0)\n"
           "  --workers N             requests processed at once; the rest queue (0 =\n"
           "                          unlimited, the default); with --devices, a list\n"
           "                          N1,N2,... gives device k the k-th (the last for the\n"
           "                          devices after it): a fleet of unequal capacities\n"
           "  --auth USER             require credentials (RESTCONF Basic, gNMI\n"
           "                          username/password metadata); the password comes from\n"
           "                          $YANGBLAST_SERVE_PASSWORD or --auth-password-file\n"
           "  --auth-password-file F  first line of F is the password\n"
           "  --auth-cost DUR         time each credential check costs (default 0)\n"
           "  --no-resumption         refuse TLS session resumption (tickets and ids)\n"
           "  --session-cost DUR      time each new connection's first request costs on\n"
           "                          top (the switch's session set-up; default 0)\n"
           "  --max-sessions N        refuse connections beyond N (0 = unlimited)\n"
           "  --idle-timeout DUR      close connections idle for DUR (0 = never)\n"
           "  --fault SPEC            reset@P | stall:DUR@P | status:CODE@P | goaway-after:N\n"
           "                          (repeatable; P in 0..1, default 1; @#N = the N-th request only)\n"
           "  --seed N                seed of the service-time and fault RNG (default 1)\n"
           "  --sink                  answer with empty bodies, parse nothing (at once, or\n"
           "                          after --service-time)\n"
           "  --max-body SIZE         request body cap in bytes, k/M suffixes (default 16M)\n"
           "  --io MODE               how plain connections reach the kernel: epoll (default),\n"
           "                          auto (io_uring where the kernel allows it, else\n"
           "                          epoll), uring (io_uring or an error)\n"
           "  --stats FILE            write the statistics as JSON on exit (with --devices:\n"
           "                          the totals and each device's)\n"
           "  --devices N             emulate N switches (1..4096) in this process, each\n"
           "                          with its own listeners, datastore, workers and queue:\n"
           "                          device k listens on the --restconf and --gnmi ports\n"
           "                          + k-1 (port 0: any free port each)\n"
           "  --device-addresses IP   instead, device k listens on IP + k-1 (IPv4 in\n"
           "                          127.0.0.0/8, e.g. 127.0.1.1) on the same ports\n"
           "  --write-inventory FILE  write the devices (sw1..swN) as a yangblast run\n"
           "                          --targets inventory; secrets by reference only\n"
           "  -h, --help              this help\n\n"
           "See yangblast-serve(1).\n");
}

/* Reads the first line of path into a malloc'd string. */
static char *read_password(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char buf[1024];
    char *p = NULL;
    if (fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\r\n")] = 0;
        p = strdup(buf);
    } else {
        p = strdup("");
    }
    fclose(f);
    return p;
}

static const char *const OUT_NAMES[] = {"--stats", "--write-cert", "--write-inventory"};

/* The file a regular output replaces, canonical (links followed, the
 * directory made absolute), malloc'd; NULL for an output written in place
 * or a path that does not resolve (yb_outfile_check speaks for those). */
static char *canonical_output(const char *path)
{
    char e[256];
    char *r = yb_outfile_replaced_path(path, e, sizeof e), *dir = NULL, *out = NULL;
    if (!r)
        return NULL;
    char *slash = strrchr(r, '/');
    const char *base = slash ? slash + 1 : r;
    if (slash == r)
        dir = realpath("/", NULL);
    else if (slash) {
        *slash = 0;
        dir = realpath(r, NULL);
    } else {
        dir = realpath(".", NULL);
    }
    if (dir && (out = malloc(strlen(dir) + strlen(base) + 2))) {
        size_t dl = strlen(dir), bl = strlen(base);
        memcpy(out, dir, dl);
        out[dl] = '/';
        memcpy(out + dl + 1, base, bl + 1);
    }
    free(dir);
    free(r);
    return out;
}

/* 1 (with a message in err) when two of the output files paths[0..n)
 * (NULL = not given) are the same regular file once links are resolved:
 * the later write would replace the earlier one.  Outputs written in place
 * (standard output is checked apart, /dev/null) may coincide. */
static int same_output(const char *const *paths, size_t n, const char *const *names, char *err,
                       size_t errlen)
{
    char *real[3] = {NULL, NULL, NULL};
    int dup = 0;
    for (size_t i = 0; i < n && i < 3; i++)
        if (paths[i] && !yb_outfile_is_stdout(paths[i]))
            real[i] = canonical_output(paths[i]);
    for (size_t i = 0; i < n && i < 3 && !dup; i++)
        for (size_t j = i + 1; j < n && j < 3 && !dup; j++)
            if (real[i] && real[j] && strcmp(real[i], real[j]) == 0) {
                snprintf(err, errlen, "%s and %s both name %s: one would replace the other",
                         names[i], names[j], paths[j]);
                dup = 1;
            }
    for (size_t i = 0; i < 3; i++)
        free(real[i]);
    return dup;
}

int yb_cmd_serve(int argc, char **argv)
{
    enum {
        O_RESTCONF = 256, O_GNMI, O_CERT, O_KEY, O_SELF, O_WCERT, O_SVC, O_WORKERS, O_AUTH,
        O_PWFILE, O_AUTHCOST, O_SESSCOST, O_NORESUME, O_MAXSESS, O_IDLE, O_FAULT, O_SEED, O_SINK, O_MAXBODY, O_STATS,
        O_DEVICES, O_DEVADDR, O_WINV, O_IO
    };
    static const struct option opts[] = {
        {"restconf", required_argument, NULL, O_RESTCONF},
        {"gnmi", required_argument, NULL, O_GNMI},
        {"tls-cert", required_argument, NULL, O_CERT},
        {"tls-key", required_argument, NULL, O_KEY},
        {"self-signed", no_argument, NULL, O_SELF},
        {"write-cert", required_argument, NULL, O_WCERT},
        {"service-time", required_argument, NULL, O_SVC},
        {"workers", required_argument, NULL, O_WORKERS},
        {"auth", required_argument, NULL, O_AUTH},
        {"auth-password-file", required_argument, NULL, O_PWFILE},
        {"auth-cost", required_argument, NULL, O_AUTHCOST},
        {"session-cost", required_argument, NULL, O_SESSCOST},
        {"no-resumption", no_argument, NULL, O_NORESUME},
        {"max-sessions", required_argument, NULL, O_MAXSESS},
        {"idle-timeout", required_argument, NULL, O_IDLE},
        {"fault", required_argument, NULL, O_FAULT},
        {"seed", required_argument, NULL, O_SEED},
        {"sink", no_argument, NULL, O_SINK},
        {"max-body", required_argument, NULL, O_MAXBODY},
        {"stats", required_argument, NULL, O_STATS},
        {"devices", required_argument, NULL, O_DEVICES},
        {"device-addresses", required_argument, NULL, O_DEVADDR},
        {"write-inventory", required_argument, NULL, O_WINV},
        {"io", required_argument, NULL, O_IO},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    yb_serve_opts o;
    yb_serve_defaults(&o);
    const char *pwfile = NULL;
    uint64_t v;
    const char *costs = NULL; /* a cost option --sink would ignore */
    int c, io_given = 0, io_mode;
    optind = 1;
    opterr = 0; /* option errors are worded by yb_bad_option */
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case O_RESTCONF: o.restconf = optarg; break;
        case O_GNMI: o.gnmi = optarg; break;
        case O_CERT: o.tls_cert = optarg; break;
        case O_KEY: o.tls_key = optarg; break;
        case O_SELF: o.self_signed = 1; break;
        case O_WCERT: o.write_cert = optarg; break;
        case O_SVC:
            if (yb_service_time_parse(optarg, &o.service) < 0)
                return yb_usage_error("serve", "--service-time '%s': expected fixed:DUR, "
                                      "uniform:MIN..MAX or exp:MEAN, optionally +per-kb:DUR; "
                                      "DUR is " YB_FORMS_DURATION, optarg);
            break;
        case O_WORKERS:
            o.n_device_workers = 0;
            for (const char *p = optarg;;) {
                size_t l = strcspn(p, ",");
                if (o.n_device_workers == YB_SERVE_MAX_DEVICE_WORKERS ||
                    yb_parse_u64_n(p, l, 0, 1000000, &v) < 0)
                    return yb_usage_error("serve", "--workers '%s': expected an integer in "
                                          "0..1000000, or a list of at most %d (one per "
                                          "device)", optarg, YB_SERVE_MAX_DEVICE_WORKERS);
                o.device_workers[o.n_device_workers++] = (unsigned)v;
                if (!p[l])
                    break;
                p += l + 1;
            }
            o.workers = o.device_workers[0];
            if (o.n_device_workers == 1)
                o.n_device_workers = 0; /* one value: every device's */
            break;
        case O_AUTH: o.auth_user = optarg; break;
        case O_PWFILE: pwfile = optarg; break;
        case O_NORESUME:
            o.no_resumption = 1;
            break;
        case O_SESSCOST:
            costs = "--session-cost";
            if (yb_parse_duration(optarg, &o.session_cost_ns) < 0)
                return yb_usage_error("serve", "--session-cost '%s': expected " YB_FORMS_DURATION,
                                      optarg);
            break;
        case O_AUTHCOST:
            costs = "--auth-cost";
            if (yb_parse_duration(optarg, &o.auth_cost_ns) < 0)
                return yb_usage_error("serve", "--auth-cost '%s': expected " YB_FORMS_DURATION,
                                      optarg);
            break;
        case O_MAXSESS:
            if (yb_parse_u64(optarg, 0, 10000000, &v) < 0)
                return yb_usage_error("serve", "--max-sessions must be a non-negative integer");
            o.max_sessions = (unsigned)v;
            break;
        case O_IDLE:
            if (yb_parse_duration(optarg, &o.idle_timeout_ns) < 0)
                return yb_usage_error("serve", "--idle-timeout '%s': expected " YB_FORMS_DURATION,
                                      optarg);
            break;
        case O_FAULT:
            if (o.n_faults >= YB_SERVE_MAX_FAULTS)
                return yb_usage_error("serve", "at most %d --fault options", YB_SERVE_MAX_FAULTS);
            if (yb_fault_parse(optarg, &o.faults[o.n_faults]) < 0)
                return yb_usage_error("serve", "--fault '%s': expected reset@P, stall:DUR@P, "
                                      "status:CODE@P or goaway-after:N (P in 0..1 or #N; DUR is "
                                      YB_FORMS_DURATION ")", optarg);
            o.n_faults++;
            break;
        case O_SEED:
            if (yb_parse_u64(optarg, 0, UINT64_MAX, &o.seed) < 0)
                return yb_usage_error("serve", "--seed must be a non-negative integer");
            break;
        case O_SINK: o.sink = 1; break;
        case O_MAXBODY:
            if (yb_parse_size(optarg, 1, 1ull << 32, &o.max_body) < 0)
                return yb_usage_error("serve", "--max-body '%s': expected " YB_FORMS_SIZE
                                      ", at most 4G", optarg);
            break;
        case O_STATS: o.stats_path = optarg; break;
        case O_DEVICES:
            if (yb_parse_u64(optarg, 1, YB_SERVE_MAX_DEVICES, &v) < 0)
                return yb_usage_error("serve", "--devices must be an integer in 1..%d",
                                      YB_SERVE_MAX_DEVICES);
            o.devices = (unsigned)v;
            break;
        case O_DEVADDR: o.device_addresses = optarg; break;
        case O_WINV: o.write_inventory = optarg; break;
        case O_IO:
            io_given = 1;
            if ((io_mode = yb_io_mode_parse(optarg)) < 0)
                return yb_usage_error("serve", "--io '%s': expected auto, uring or epoll", optarg);
            o.io = io_mode;
            break;
        case 'h': help(); return YB_EXIT_OK;
        default: return yb_bad_option("serve", c, argv);
        }
    }
    if (optind < argc)
        return yb_usage_error("serve", "unexpected argument '%s'", argv[optind]);
    if (o.n_device_workers > o.devices)
        return yb_usage_error("serve", "--workers lists %zu values for %u device%s: one per "
                              "device at most", o.n_device_workers, o.devices,
                              o.devices == 1 ? "" : "s");
    if (!o.tls_cert != !o.tls_key)
        return yb_usage_error("serve", "--tls-cert and --tls-key go together");
    if (o.tls_cert && o.self_signed)
        return yb_usage_error("serve", "--self-signed replaces --tls-cert/--tls-key");
    if (o.write_cert && !o.self_signed)
        return yb_usage_error("serve", "--write-cert needs --self-signed");
    if (io_given && (o.tls_cert || o.self_signed))
        return yb_usage_error("serve", "--io applies to plain listeners, not with TLS (TLS "
                              "connections read and write through libuv)");
    if (pwfile && !o.auth_user)
        return yb_usage_error("serve", "--auth-password-file needs --auth USER");
    if (o.sink && costs)
        return yb_usage_error("serve", "%s does not apply with --sink (it keeps no session "
                              "or login state; only --service-time delays its answers)", costs);
    if (o.auth_cost_ns && !o.auth_user)
        return yb_usage_error("serve", "--auth-cost needs --auth USER (no credentials are checked "
                              "without it)");
    if (o.no_resumption && !o.tls_cert && !o.self_signed)
        return yb_usage_error("serve", "--no-resumption needs TLS (--tls-cert/--tls-key or "
                              "--self-signed)");
    if (o.stats_path && o.write_cert && yb_outfile_is_stdout(o.stats_path) &&
        yb_outfile_is_stdout(o.write_cert))
        return yb_usage_error("serve", "--stats - and --write-cert - would both write to "
                              "standard output");
    if (o.write_inventory && yb_outfile_is_stdout(o.write_inventory))
        return yb_usage_error("serve", "--write-inventory needs a file: standard output carries "
                              "the serve: lines");
    char cerr[600];
    const char *outs[] = {o.stats_path, o.write_cert, o.write_inventory};
    for (size_t i = 0; i < 3; i++)
        if (outs[i] && yb_outfile_check(outs[i], 0, cerr, sizeof cerr) < 0)
            return yb_usage_error("serve", "%s", cerr);
    if (same_output(outs, 3, OUT_NAMES, cerr, sizeof cerr))
        return yb_usage_error("serve", "%s", cerr);
    char *pw = NULL;
    if (o.auth_user) {
        if (pwfile) {
            if (!(pw = read_password(pwfile))) {
                yb_errorf("--auth-password-file %s: %s", pwfile, strerror(errno));
                return YB_EXIT_USAGE;
            }
        } else {
            const char *e = getenv("YANGBLAST_SERVE_PASSWORD");
            if (!e)
                return yb_usage_error("serve", "--auth needs $YANGBLAST_SERVE_PASSWORD or "
                                      "--auth-password-file");
            if (!(pw = strdup(e))) {
                yb_errorf("out of memory");
                return YB_EXIT_RUNTIME;
            }
        }
        o.auth_password = pw;
    }
    char err[512] = "";
    int rc = yb_serve_run(&o, err, sizeof err);
    free(pw);
    if (rc == -EINVAL) {
        yb_errorf("serve: %s", err);
        return YB_EXIT_USAGE;
    }
    if (rc < 0) {
        yb_errorf("serve: %s", *err ? err : strerror(-rc));
        return YB_EXIT_RUNTIME;
    }
    return YB_EXIT_OK;
}
