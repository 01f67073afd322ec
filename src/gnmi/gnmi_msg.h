/* gNMI message helpers on the protobuf-c classes generated from the
 * project's gnmi.proto, and gRPC length-prefixed message framing. */
#ifndef YB_GNMI_MSG_H
#define YB_GNMI_MSG_H

#include <stddef.h>
#include <stdint.h>
#include "gnmi/gnmi.pb-c.h"

#define YB_GRPC_PREFIX 5

/* Parses an XPath-like gNMI path ("a/b[k=v][k2=v2]/c", leading '/'
 * optional; '/' inside [...] is part of the key value) into a heap Path.
 * Returns 0 and *out (free with yb_gnmi_path_free), -EINVAL for a
 * malformed path, -ENOMEM. */
int yb_gnmi_path_parse(const char *s, Gnmi__Path **out);
void yb_gnmi_path_free(Gnmi__Path *p);
/* Formats a Path back to the text form into buf (always NUL-terminated,
 * truncated to cap).  Returns the untruncated length. */
size_t yb_gnmi_path_format(const Gnmi__Path *p, char *buf, size_t cap);

/* Packs m behind a gRPC prefix (flag 0, 4-byte big-endian length) into a
 * malloc'd buffer.  Returns 0 and *out and *len (caller frees), or -ENOMEM /
 * -EFBIG (message over 4 GiB). */
int yb_grpc_frame(const ProtobufCMessage *m, uint8_t **out, size_t *len);

/* Walks gRPC messages in buf[0..len) from *off.  Returns 1 with
 * *msg and *msglen set (pointing into buf) and *off advanced; 0 when *off ==
 * len; -1 when the data is malformed (truncated prefix or message, the
 * compressed flag set, or a message longer than max). */
int yb_grpc_next(const uint8_t *buf, size_t len, size_t *off, const uint8_t **msg,
                 size_t *msglen, size_t max);

#endif
