/* gNMI request bodies as JSON (the "grpc" key of `corpus cat --decode`,
 * documented in yangblast-corpus(5)): one object per gRPC message, keyed by
 * the message type ({"SetRequest": {...}}), fields in the proto3 JSON
 * mapping with gnmi.proto's field names, except that Paths are gNMI path
 * strings and json_val / json_ietf_val are inline JSON values.  Encoding
 * goes through protobuf-c, so a body yangblast wrote decodes and encodes
 * back to the same bytes. */
#ifndef YB_GNMI_JSON_H
#define YB_GNMI_JSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>

/* Returns the request message type of a gNMI RPC path
 * ("/gnmi.gNMI/Set" -> gnmi.SetRequest, Get, Subscribe, Capabilities), or
 * NULL for any other path. */
const ProtobufCMessageDescriptor *yb_gnmi_request_type(const char *rpc_path);

/* Decodes a request body of the RPC at rpc_path into a new JSON array (one
 * {"<Type>": {...}} per gRPC message; caller json_decref's).  The array is
 * returned only when encoding it back (yb_gnmi_json_to_body, after a
 * compact dump and reload) gives exactly body[0..len); otherwise returns
 * NULL with the reason in why (unknown RPC, compressed flag, truncated
 * framing, unknown fields, non-canonical encoding, out of memory). */
json_t *yb_gnmi_body_to_json(const char *rpc_path, const uint8_t *body, size_t len, char *why,
                             size_t whylen);

/* Encodes the JSON array msgs (as above) into a gRPC body of the RPC at
 * rpc_path: each message packed by protobuf-c behind a 5-byte prefix with
 * the compressed flag 0.  Returns 0 with a malloc'd *out of *len bytes
 * (caller frees; NULL when len is 0), or -1 with err naming the offending
 * key, e.g. "[0].SetRequest.update[1].path: ...". */
int yb_gnmi_json_to_body(const char *rpc_path, const json_t *msgs, uint8_t **out, size_t *len,
                         char *err, size_t errlen);

/* Builds one message of type d from its JSON object.  Returns 0 and a heap
 * *out (free with protobuf_c_message_free_unpacked(*out, NULL)), or -1
 * with err naming the key below where (a prefix for the messages, may be
 * ""). */
int yb_gnmi_json_to_message(const ProtobufCMessageDescriptor *d, const json_t *obj,
                            const char *where, ProtobufCMessage **out, char *err, size_t errlen);

#endif
