/* yangblast capture: pcap/pcapng -> corpus.  Thin: options, files, the
 * corpus writer; the pipeline is src/capture/. */
#include "config.h"
#include "capture/capture.h"
#include "capture/tls_decrypt.h"
#include "cli/cli.h"
#include "corpus/corpus.h"
#include "util/outfile.h"
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_INPUTS 256

static void help(void)
{
    printf("Usage: yangblast capture -r FILE [-r FILE...] -o OUT.ybc [OPTIONS]\n\n"
           "Extract RESTCONF, gNMI and other HTTP/1.1 and HTTP/2 requests from pcap or\n"
           "pcapng captures into a corpus, with their timing, connections and the\n"
           "responses' status.  Credentials are redacted unless --keep-credentials.\n\n"
           "  -r, --read FILE          capture to read (pcap or pcapng; repeatable)\n"
           "  -o, --output FILE        corpus to write ('-' = stdout)\n"
           "  -f, --filter EXPR        BPF filter (pcap-filter(7)), e.g. 'tcp port 8080'\n"
           "      --keylog FILE        NSS key log (SSLKEYLOGFILE) to decrypt TLS with;\n"
           "                           pcapng decryption secrets are used as well\n"
           "      --server-key FILE    the server's RSA private key (PEM, mode 0600) to\n"
           "                           decrypt TLS 1.2 RSA key exchange (repeatable)\n"
           "      --mgmt-only          keep only RESTCONF and gNMI requests\n"
           "      --redact NAME        also redact this header / gRPC metadata (any case;\n"
           "                           repeatable); always redacted: Authorization,\n"
           "                           Proxy-Authorization, Cookie, Set-Cookie, X-Api-Key,\n"
           "                           X-Auth-Token, gRPC username/password/access_token\n"
           "      --keep-credentials   redact nothing\n"
           "      --max-flow-buffer N  bytes one connection may buffer (default 16M)\n"
           "      --max-total-buffer N bytes all connections may buffer (default 512M)\n"
           "      --json FILE          write the report as JSON ('-' = stdout)\n"
           "  -q, --quiet              no report on stderr\n"
           "  -h, --help               this help\n\n"
           "Sizes take K, M or G suffixes (powers of 1024).  See yangblast-capture(1).\n");
}

#define MAX_REDACT_NAME 128

/* 1 when s is an HTTP field name (RFC 9110 token) of at most
 * MAX_REDACT_NAME characters. */
static int is_header_name(const char *s)
{
    size_t n = strlen(s);
    if (!n || n > MAX_REDACT_NAME)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              strchr("!#$%&'*+-.^_`|~", *s)))
            return 0;
    return 1;
}

/* (the pipeline checked r: see yb_capture_emit_fn) */
static int emit(void *ud, const yb_request *r)
{
    return yb_corpus_writer_add_checked(ud, r);
}

static const char *base(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Writes a new corpus at to whose header is h, followed by the records of
 * the corpus at from: the header is written first, so the redactions,
 * known only at the end, need this second step; the records are copied
 * compressed (yb_corpus_writer_splice).  Returns 0 or -1 with err. */
static int rewrite(const char *from, const char *to, const yb_corpus_header *h, char *err,
                   size_t errlen)
{
    yb_corpus_writer *w = yb_corpus_writer_open(to, h, err, errlen);
    if (!w)
        return -1;
    if (yb_corpus_writer_splice(w, from, err, errlen) < 0) {
        yb_corpus_writer_abort(w);
        return -1;
    }
    return yb_corpus_writer_close(w, err, errlen) < 0 ? -1 : 0;
}

int yb_cmd_capture(int argc, char **argv)
{
    enum { O_KEYLOG = 256, O_MGMT, O_KEEP, O_FLOWBUF, O_TOTALBUF, O_JSON, O_REDACT, O_SRVKEY };
    static const struct option opts[] = {
        {"read", required_argument, NULL, 'r'},     {"output", required_argument, NULL, 'o'},
        {"filter", required_argument, NULL, 'f'},   {"keylog", required_argument, NULL, O_KEYLOG},
        {"mgmt-only", no_argument, NULL, O_MGMT},   {"keep-credentials", no_argument, NULL, O_KEEP},
        {"max-flow-buffer", required_argument, NULL, O_FLOWBUF},
        {"max-total-buffer", required_argument, NULL, O_TOTALBUF},
        {"json", required_argument, NULL, O_JSON},  {"quiet", no_argument, NULL, 'q'},
        {"redact", required_argument, NULL, O_REDACT},
        {"server-key", required_argument, NULL, O_SRVKEY},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
    const char *inputs[MAX_INPUTS];
    size_t n_in = 0;
    const char *redact[YB_CAPTURE_MAX_REDACT];
    const char *out = NULL, *filter = NULL, *keylog = NULL, *json = NULL;
    const char *server_keys[YB_TLS_MAX_SERVER_KEYS];
    size_t n_server_keys = 0;
    int quiet = 0, c;
    yb_capture_opts o;
    memset(&o, 0, sizeof o);
    optind = 1;
    opterr = 0; /* option errors are worded by yb_bad_option */
    while ((c = getopt_long(argc, argv, ":r:o:f:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'r':
            if (n_in == MAX_INPUTS)
                return yb_usage_error("capture", "at most %d -r files", MAX_INPUTS);
            inputs[n_in++] = optarg;
            break;
        case 'o': out = optarg; break;
        case 'f': filter = optarg; break;
        case O_KEYLOG: keylog = optarg; break;
        case O_SRVKEY:
            if (n_server_keys == YB_TLS_MAX_SERVER_KEYS)
                return yb_usage_error("capture", "at most %d --server-key files",
                                      YB_TLS_MAX_SERVER_KEYS);
            server_keys[n_server_keys++] = optarg;
            break;
        case O_MGMT: o.mgmt_only = 1; break;
        case O_KEEP: o.keep_credentials = 1; break;
        case O_REDACT:
            if (!is_header_name(optarg))
                return yb_usage_error("capture", "--redact '%s': expected a header or gRPC "
                                      "metadata name (letters, digits, -_.!#$%%&'*+^`|~; "
                                      "at most %d characters)", optarg, MAX_REDACT_NAME);
            if (o.n_redact == YB_CAPTURE_MAX_REDACT)
                return yb_usage_error("capture", "at most %d --redact names",
                                      YB_CAPTURE_MAX_REDACT);
            redact[o.n_redact++] = optarg;
            o.redact = redact;
            break;
        case O_FLOWBUF:
            if (yb_parse_size(optarg, 4096, 1ull << 44, &o.max_flow_buffer) < 0)
                return yb_usage_error("capture", "--max-flow-buffer '%s': expected "
                                      YB_FORMS_SIZE ", from 4k to 16384G", optarg);
            break;
        case O_TOTALBUF:
            if (yb_parse_size(optarg, 65536, 1ull << 44, &o.max_total_buffer) < 0)
                return yb_usage_error("capture", "--max-total-buffer '%s': expected "
                                      YB_FORMS_SIZE ", from 64k to 16384G", optarg);
            break;
        case O_JSON: json = optarg; break;
        case 'q': quiet = 1; break;
        case 'h': help(); return YB_EXIT_OK;
        default: return yb_bad_option("capture", c, argv);
        }
    }
    if (optind < argc)
        return yb_usage_error("capture", "unexpected argument '%s'", argv[optind]);
    if (!n_in)
        return yb_usage_error("capture", "no input: give -r FILE");
    if (!out)
        return yb_usage_error("capture", "no output: give -o FILE");
    if (o.keep_credentials && o.n_redact)
        return yb_usage_error("capture", "--redact and --keep-credentials contradict each "
                              "other (--keep-credentials redacts nothing)");

    char err[1024];
    int ret = YB_EXIT_OK;
    yb_keylog *kl = NULL;
    yb_tls_store *store = NULL;
    yb_capture *cap = NULL;
    yb_corpus_writer *w = NULL;
    char tmp[4096];
    int have_tmp = 0, tmp_track = -1;
    char *replaced = NULL; /* the file out's rename replaces, or NULL: in place */
    yb_corpus_header h;
    yb_corpus_header_init(&h);

    if (keylog) {
        if (!(kl = yb_keylog_load(keylog, err, sizeof err))) {
            yb_errorf("%s", err);
            ret = YB_EXIT_USAGE;
            goto out;
        }
        size_t first = 0, bad = yb_keylog_malformed(kl, &first);
        if (bad)
            fprintf(stderr, "yangblast: warning: %s: %zu malformed line(s), first at line %zu\n",
                    keylog, bad, first);
    }
    o.keylog = (struct yb_keylog *)kl;
    if (!(store = yb_tls_store_new())) {
        yb_errorf("out of memory");
        ret = YB_EXIT_RUNTIME;
        goto out;
    }
    for (size_t i = 0; i < n_server_keys; i++)
        if (yb_tls_store_load_server_key(store, server_keys[i], err, sizeof err) < 0) {
            yb_errorf("%s", err);
            ret = YB_EXIT_USAGE;
            goto out;
        }
    o.tls_store = store;

    /* Records go to a temporary corpus first (see rewrite): beside the file
     * a rename will replace, or in TMPDIR when out is written in place (a
     * device, a pipe, stdout) and the second pass copies it there. */
    if (json && yb_outfile_is_stdout(json) && yb_outfile_is_stdout(out)) {
        ret = yb_usage_error("capture", "-o - and --json - would both write to standard output");
        goto out;
    }
    if ((json && yb_outfile_check(json, 0, err, sizeof err) < 0) ||
        yb_outfile_check(out, 0, err, sizeof err) < 0) {
        yb_errorf("%s", err);
        ret = YB_EXIT_USAGE;
        goto out;
    }
    replaced = yb_outfile_replaced_path(out, err, sizeof err);
    if (!replaced && *err) {
        yb_errorf("%s", err);
        ret = YB_EXIT_USAGE;
        goto out;
    }
    int tl;
    if (replaced) {
        const char *slash = strrchr(replaced, '/');
        tl = snprintf(tmp, sizeof tmp, "%.*s.%s.capture.%ld",
                      slash ? (int)(slash - replaced + 1) : 0, replaced, base(replaced),
                      (long)getpid());
    } else {
        const char *td = getenv("TMPDIR");
        tl = snprintf(tmp, sizeof tmp, "%s/yangblast-capture.%ld", td && *td ? td : "/tmp",
                      (long)getpid());
    }
    if (tl < 0 || (size_t)tl >= sizeof tmp) {
        yb_errorf("%s: path too long", out);
        ret = YB_EXIT_USAGE;
        goto out;
    }
    char producer[64], source[2048];
    snprintf(producer, sizeof producer, "%s %s capture", PACKAGE_NAME, PACKAGE_VERSION);
    size_t sl = (size_t)snprintf(source, sizeof source, "capture");
    for (size_t i = 0; i < n_in && sl < sizeof source; i++)
        sl += (size_t)snprintf(source + sl, sizeof source - sl, " %s", base(inputs[i]));
    if (yb_request_set_str(&h.producer, producer) < 0 || yb_request_set_str(&h.source, source) < 0) {
        yb_errorf("out of memory");
        ret = YB_EXIT_RUNTIME;
        goto out;
    }
    if (!(w = yb_corpus_writer_open(tmp, &h, err, sizeof err))) {
        yb_errorf("%s", err);
        ret = YB_EXIT_USAGE;
        goto out;
    }
    have_tmp = 1;
    tmp_track = yb_outfile_track(tmp); /* a signal removes it (the writer's own temporary too) */
    if (!(cap = yb_capture_new(&o, emit, w))) {
        yb_errorf("out of memory");
        ret = YB_EXIT_RUNTIME;
        goto out;
    }
    for (size_t i = 0; i < n_in; i++) {
        int rc = yb_capture_read_file(cap, inputs[i], filter, stderr, err, sizeof err);
        if (rc == -1) {
            yb_errorf("%s", err);
            ret = YB_EXIT_USAGE;
            goto out;
        }
        if (rc < 0) {
            yb_errorf("%s: cannot write the corpus: %s", out, strerror(-rc));
            ret = YB_EXIT_RUNTIME;
            goto out;
        }
    }
    int rc = yb_capture_finish(cap);
    if (rc < 0) {
        yb_errorf("%s: cannot write the corpus: %s", out, strerror(-rc));
        ret = YB_EXIT_RUNTIME;
        goto out;
    }
    rc = yb_corpus_writer_close(w, err, sizeof err);
    w = NULL;
    if (rc < 0) {
        yb_errorf("%s", err);
        ret = YB_EXIT_RUNTIME;
        goto out;
    }
    size_t nred = 0;
    const char *const *red = yb_capture_redactions(cap, &nred);
    for (size_t i = 0; i < nred; i++)
        if (yb_corpus_header_add_redaction(&h, red[i]) < 0) {
            yb_errorf("out of memory");
            ret = YB_EXIT_RUNTIME;
            goto out;
        }
    if (nred || !replaced) {
        if (rewrite(tmp, out, &h, err, sizeof err) < 0) {
            yb_errorf("%s", err);
            ret = YB_EXIT_RUNTIME;
            goto out;
        }
    } else if (rename(tmp, replaced) < 0) {
        yb_errorf("%s: %s", out, strerror(errno));
        ret = YB_EXIT_RUNTIME;
        goto out;
    } else {
        have_tmp = 0;
    }
    if (!quiet)
        yb_capture_report_text(cap, stderr);
    if (json) {
        yb_outfile jf;
        if (yb_outfile_open(&jf, json, 0, err, sizeof err) < 0) {
            yb_errorf("%s", err);
            ret = YB_EXIT_RUNTIME;
        } else if (yb_capture_report_json(cap, jf.f) < 0) {
            yb_outfile_abort(&jf);
            yb_errorf("%s: cannot write the JSON report", json);
            ret = YB_EXIT_RUNTIME;
        } else if (yb_outfile_commit(&jf, err, sizeof err) < 0) {
            yb_errorf("%s", err);
            ret = YB_EXIT_RUNTIME;
        }
    }
out:
    if (w)
        yb_corpus_writer_abort(w);
    if (have_tmp)
        unlink(tmp);
    yb_outfile_untrack(tmp_track);
    yb_capture_free(cap);
    yb_tls_store_free(store);
    yb_keylog_free(kl);
    yb_corpus_header_cleanup(&h);
    free(replaced);
    return ret;
}
