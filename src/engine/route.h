/* Routing by recorded authority (`run --targets FILE --route authority`):
 * which inventory target a record's authority (host[:port], as recorded in
 * Host or :authority) names, so that a capture of a controller talking to
 * a fleet replays against a lab fleet.
 *
 * A target is named by its name, each of its aliases (host or host:port)
 * and the host:port of its RESTCONF and gNMI URLs.  Host names compare
 * without regard to case.  A recorded authority host:port names the
 * target with that host:port, else the one whose name or host-only alias
 * is host; an authority without a port takes its scheme's (http 80,
 * https 443).  Read-only once built: workers share it. */
#ifndef YB_ROUTE_H
#define YB_ROUTE_H

#include <stddef.h>
#include "engine/inventory.h"

typedef struct yb_authmap yb_authmap;

/* Builds the map of inv's targets (inv must outlive it).  Returns it, or
 * NULL with a message in err: out of memory, or two targets that claim
 * the same authority ("INV:LINE: target 'b': 'h:p' also names target 'a'
 * (line L)", name = the inventory's path). */
yb_authmap *yb_authmap_new(const yb_inventory *inv, const char *name, char *err,
                           size_t errlen);

/* Returns the index in the inventory of the target that authority names
 * (scheme gives the default port: "https" 443, else 80), or -1 when none
 * does. */
int yb_authmap_find(const yb_authmap *m, const char *scheme, const char *authority);

void yb_authmap_free(yb_authmap *m);

#endif
