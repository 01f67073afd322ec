/* gNMI message helpers on the protobuf-c classes generated from the
 * project's gnmi.proto, and gRPC length-prefixed message framing. */
#ifndef YB_GNMI_MSG_H
#define YB_GNMI_MSG_H

#include <stddef.h>
#include <stdint.h>
#include "gnmi/gnmi.pb-c.h"

#define YB_GRPC_PREFIX 5

/* gNMI path strings (the gNMI path-strings specification, parsed as
 * ygot's reference implementation does): "/a/b[k=v][k2=v2]/c", leading '/'
 * optional, "origin:/a/b" sets Path.origin (gnmic's rule: no leading '/',
 * the first ':' comes before any '/' and is followed by '/' or the end, so
 * "openconfig-acl:acl/..." is a name, not an origin).  A '\' takes the next
 * character literally; '/' and '=' need no escape inside [...], '/' and '['
 * are escaped in names, '=' and ']' in key names, ']' in key values.
 *
 * yb_gnmi_path_parse: returns 0 and a heap *out (free with
 * yb_gnmi_path_free), -EINVAL for a malformed path (empty name or key
 * name, unterminated [...], a dangling '\', text after ']'), -ENOMEM. */
int yb_gnmi_path_parse(const char *s, Gnmi__Path **out);
/* Frees a Path from yb_gnmi_path_parse (or unpacked by protobuf-c); NULL ok. */
void yb_gnmi_path_free(Gnmi__Path *p);
/* Returns the text form of p's elements, preceded by "origin:" when
 * with_origin and p has one, as a malloc'd string (caller frees), or NULL
 * on ENOMEM.  The empty path is "/".  Keys keep their wire order. */
char *yb_gnmi_path_to_text(const Gnmi__Path *p, int with_origin);
/* Returns 1 when yb_gnmi_path_to_text(p, 1) parses back to exactly p (no
 * target, no deprecated element list, no unknown fields, non-empty names
 * and key names, an origin without ':', '/', '[' or '\'), else 0. */
int yb_gnmi_path_text_exact(const Gnmi__Path *p);
/* Formats yb_gnmi_path_to_text(p, 1) into buf (always NUL-terminated,
 * truncated to cap).  Returns the untruncated length. */
size_t yb_gnmi_path_format(const Gnmi__Path *p, char *buf, size_t cap);

/* Packs m behind a gRPC prefix (flag 0, 4-byte big-endian length) into a
 * malloc'd buffer.  Returns 0 and *out and *len (caller frees), or -ENOMEM /
 * -EFBIG (message over 4 GiB). */
int yb_grpc_frame(const ProtobufCMessage *m, uint8_t **out, size_t *len);

/* The bytes of a gRPC-framed SetRequest holding one Update (in its
 * replace list when replace, else in update) of path to a json_ietf_val
 * of json_len bytes, up to that value: yb_grpc_frame of that request is
 * these bytes, then the JSON's.  For a writer that has the JSON in
 * another form (split into its digits and the rest) and need not make
 * it whole to frame it.  Returns 0 and *out and *len (caller frees), or
 * -ENOMEM / -EFBIG (the message over 4 GiB). */
int yb_gnmi_set_json_head(int replace, const Gnmi__Path *path, size_t json_len, uint8_t **out,
                          size_t *len);

/* Checks that the wire bytes buf[0..len) of a message of type d nest
 * sub-messages (known fields of message type) at most max_depth deep,
 * walking at most that deep itself.  Call it before protobuf-c's unpack
 * on untrusted bytes: unpack recurses once per level, and a small hostile
 * message (a leaf-list in a leaf-list in ...) would exhaust the stack.
 * Returns 0, or -1 when deeper or not wire format at all. */
int yb_gnmi_wire_depth_ok(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len,
                          int max_depth);

/* How deep untrusted gNMI messages may nest (yb_gnmi_unpack). */
#define YB_GNMI_MAX_DEPTH 64

/* Unpacks untrusted wire bytes buf[0..len) as a message of type d, after
 * yb_gnmi_wire_depth_ok(d, buf, len, YB_GNMI_MAX_DEPTH): every decode of
 * bytes from a peer (responses in the client, requests in serve) goes
 * through here, so a hostile message cannot exhaust the stack.  Returns
 * the message (free it with its type's free_unpacked or
 * protobuf_c_message_free_unpacked), or NULL when it nests too deep or
 * does not decode. */
ProtobufCMessage *yb_gnmi_unpack(const ProtobufCMessageDescriptor *d, const uint8_t *buf,
                                 size_t len);

/* Checks untrusted wire bytes buf[0..len) of a message of type d as
 * yb_gnmi_unpack would (wire format, nesting at most YB_GNMI_MAX_DEPTH)
 * and counts the top-level occurrences of its length-delimited field
 * named field, decoding nothing else and allocating nothing: for a
 * client that needs only that count (a SetResponse's results).  Returns
 * 0 with *n set, or -1 (malformed, too deep, field unknown or with
 * another wire type). */
int yb_gnmi_wire_count(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len,
                       const char *field, size_t *n);
/* yb_gnmi_wire_count by the field's number (a client that checks every
 * response looks the name up once): the same answers, -1 also when d has
 * no field of that number. */
int yb_gnmi_wire_count_id(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len,
                          uint32_t field, size_t *n);

/* Appends m, packed behind a gRPC prefix (flag 0), to the malloc'd buffer
 * *buf of *len bytes (NULL and 0 to start).  Returns 0, or -ENOMEM /
 * -EFBIG with *buf and *len unchanged. */
int yb_grpc_append(const ProtobufCMessage *m, uint8_t **buf, size_t *len);

/* Reads a protobuf varint at b[*off..len) into *v, advancing *off.
 * Returns 0 or -1 (truncated, longer than 10 bytes). */
int yb_wire_varint(const uint8_t *b, size_t len, size_t *off, uint64_t *v);

/* Walks gRPC messages in buf[0..len) from *off.  Returns 1 with
 * *msg and *msglen set (pointing into buf) and *off advanced; 0 when *off ==
 * len; -1 when the data is malformed (truncated prefix or message, the
 * compressed flag set, or a message longer than max). */
int yb_grpc_next(const uint8_t *buf, size_t len, size_t *off, const uint8_t **msg,
                 size_t *msglen, size_t max);

#endif
