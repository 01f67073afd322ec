/* The operation a request belongs to, for the per-operation figures
 * (stats/ops.h): decided once when the request is prepared.
 *
 * - gNMI (an HTTP/2 POST to /gnmi.gNMI/RPC): the RPC name, "Get",
 *   "Subscribe", "Capabilities", "Set"; a SetRequest carrying only one
 *   kind of change is "Set.update", "Set.replace", "Set.delete" or
 *   "Set.union_replace" (the prefix and extensions do not count).
 * - Anything else (RESTCONF): "METHOD template", the path without its
 *   query or fragment, each list entry's keys replaced by positional
 *   placeholders: /a:b/acl-set=ACL1,ACL_IPV4 becomes /a:b/acl-set={1},{2}.
 *   A RESTCONF URL does not carry the key names, and the corpus carries
 *   no schema, so the placeholders are numbered; a comma inside a key
 *   is percent-encoded (RFC 8040 3.5.3), so literal commas separate keys. */
#ifndef YB_OPNAME_H
#define YB_OPNAME_H

#include <stddef.h>
#include "corpus/corpus.h"

/* Writes the template of path into out (cap >= 4 bytes, NUL-terminated):
 * bytes other than printable ASCII become '?', and a template longer
 * than cap - 1 ends in "...".  Returns strlen(out). */
size_t yb_op_path_template(const char *path, char *out, size_t cap);

/* Writes r's operation name into out (cap >= 4).  Returns strlen(out). */
size_t yb_op_name(const yb_request *r, char *out, size_t cap);

#endif
