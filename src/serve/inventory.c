/* `yangblast serve --write-inventory`: the inventory of the emulated fleet,
 * in the native shape `yangblast run --targets` reads, so that a run can
 * drive every device at once.  It holds no secret: the password is named
 * by the environment variable the client reads it from. */
#include "config.h"
#include "serve/serve_priv.h"
#include "util/outfile.h"
#include "util/util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The client side's password variable (yangblast run --user). */
#define CLIENT_PASSWORD_ENV "YANGBLAST_PASSWORD"

/* Writes s as a YAML double-quoted scalar: any path or user name stays one
 * well-formed value (quotes, backslashes, ": ", "#" and control bytes
 * escaped). */
static void yaml_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\x%02x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* The absolute path of the written certificate when it is a regular file
 * a client can read later (malloc'd), else NULL (standard output, a pipe,
 * a device). */
static char *ca_path(const char *write_cert)
{
    struct stat sb;
    if (!write_cert || yb_outfile_is_stdout(write_cert) || stat(write_cert, &sb) < 0 ||
        !S_ISREG(sb.st_mode))
        return NULL;
    return realpath(write_cert, NULL);
}

/* ca: the CA file clients verify against (self-signed), or NULL. */
static void write_tls(FILE *f, const yb_serve_opts *o, const char *ca)
{
    if (o->tls_cert) {
        fprintf(f, "  # tls: the servers use --tls-cert ");
        yaml_quoted(f, o->tls_cert);
        fprintf(f, "; add\n  #   ca: the file of its issuer\n");
        return;
    }
    fprintf(f, "  tls:\n");
    if (ca) {
        fprintf(f, "    ca: ");
        yaml_quoted(f, ca);
        fputc('\n', f);
    } else {
        fprintf(f, "    # the self-signed certificate was not written to a file (--write-cert FILE):\n"
                   "    # nothing to verify it against\n    insecure: true\n");
    }
    /* The certificate names localhost, 127.0.0.1 and ::1 only. */
    if (o->device_addresses)
        fprintf(f, "    server-name: localhost\n");
}

/* 1 when s can be written into YAML: UTF-8 text (bytes that are not
 * cannot be represented in a YAML file at all). */
static int yaml_text(const char *s)
{
    return !s || yb_utf8_valid((const uint8_t *)s, strlen(s));
}

int yb_serve_write_inventory(const yb_serve_opts *o, const yb_serve_device_info *d, unsigned n,
                             char *err, size_t errlen)
{
    yb_outfile out;
    char oerr[512];
    char *ca = o->self_signed ? ca_path(o->write_cert) : NULL;
    const char *bad = !yaml_text(o->auth_user) ? "the --auth user name"
                      : !yaml_text(o->tls_cert) ? "the --tls-cert path"
                      : !yaml_text(ca) ? "the --write-cert path" : NULL;
    if (bad) {
        snprintf(err, errlen, "--write-inventory: %s is not UTF-8 text, which YAML cannot carry",
                 bad);
        free(ca);
        return -1;
    }
    if (yb_outfile_open(&out, o->write_inventory, 0, oerr, sizeof oerr) < 0) {
        snprintf(err, errlen, "--write-inventory: %s", oerr);
        free(ca);
        return -1;
    }
    FILE *f = out.f;
    fprintf(f, "# yangblast inventory: %u device%s emulated by `yangblast serve --devices %u`\n",
            n, n == 1 ? "" : "s", n);
    int tls = o->tls_cert || o->self_signed;
    if (o->auth_user || tls) {
        fprintf(f, "defaults:\n");
        if (o->auth_user) {
            fprintf(f, "  user: ");
            yaml_quoted(f, o->auth_user);
            fprintf(f, "\n  password-env: " CLIENT_PASSWORD_ENV
                       "   # the password of serve's --auth, by reference\n");
        }
        if (tls)
            write_tls(f, o, ca);
    }
    fprintf(f, "targets:\n");
    for (unsigned k = 0; k < n; k++) {
        fprintf(f, "  - name: %s\n", d[k].name);
        for (int p = 0; p < 2; p++)
            if (strcmp(d[k].url[p], "off") != 0) {
                fprintf(f, "    %s: ", p == YB_SP_GNMI ? "gnmi" : "restconf");
                yaml_quoted(f, d[k].url[p]);
                fputc('\n', f);
            }
    }
    free(ca);
    if (ferror(f)) {
        yb_outfile_abort(&out);
        snprintf(err, errlen, "--write-inventory %s: write error", o->write_inventory);
        return -1;
    }
    if (yb_outfile_commit(&out, oerr, sizeof oerr) < 0) {
        snprintf(err, errlen, "--write-inventory: %s", oerr);
        return -1;
    }
    return 0;
}
