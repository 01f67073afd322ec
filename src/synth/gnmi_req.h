/* gNMI requests from gnmic-style request files (`synth gnmi
 * --set-request FILE`), and the record around a gRPC body that every gNMI
 * synthesizer writes. */
#ifndef YB_SYNTH_GNMI_REQ_H
#define YB_SYNTH_GNMI_REQ_H

#include <stddef.h>
#include <stdint.h>
#include "corpus/corpus.h"

/* Value encodings a request file may name (its "encoding" key). */
typedef enum { YB_GNMI_ENC_JSON_IETF = 0, YB_GNMI_ENC_JSON, YB_GNMI_ENC_ASCII } yb_gnmi_enc;

/* Parses an encoding name (json_ietf, json, ascii; any case, '-' or '_').
 * Returns 0 and *enc, or -1. */
int yb_gnmi_enc_parse(const char *s, yb_gnmi_enc *enc);

/* Reads the request file at path (YAML or JSON, see load_doc; as JSON:
 * {"prefix": PATH, "updates": [ITEM...], "replaces": [ITEM...],
 *  "union-replaces": [ITEM...], "deletes": [PATH...]}, ITEM =
 * {"path": PATH, "value": JSON | "value-file": FILE, "encoding": E}) and
 * builds the gRPC body of its SetRequest: values printed compactly, in the
 * file's key order, as json_ietf_val / json_val / ascii_val; a relative
 * value-file is read next to the request file; an item without "encoding"
 * takes def_enc.  Returns 0 with a malloc'd *body of *len bytes (caller
 * frees), or -1 with err naming the file and the key
 * ("req.json: updates[1].path: malformed gNMI path ..."). */
int yb_synth_gnmi_set_body(const char *path, yb_gnmi_enc def_enc, uint8_t **body, size_t *len,
                           char *err, size_t errlen);

/* Makes r (protocol, scheme, authority already set) a gRPC request of the
 * RPC path rpc: POST, content-type application/grpc, te trailers; takes
 * ownership of body.  Returns 0 or -ENOMEM. */
int yb_synth_grpc_request(yb_request *r, const char *rpc, uint8_t *body, size_t len);

#endif
