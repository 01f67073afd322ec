/* A --target: a URL parsed and its host resolved, once, before the run.
 * Sessions connect to its address; codecs send its authority. */
#ifndef YB_TARGET_H
#define YB_TARGET_H

#include <stddef.h>
#include <sys/socket.h>

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
/* The same without resolving (t->addr stays empty): the syntax check of a
 * URL read before the run, e.g. from an inventory.  The message in err
 * starts with "--target 'URL': ". */
int yb_target_parse_url(const char *url, yb_target *t, char *err, size_t errlen);

#endif
