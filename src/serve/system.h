/* The openconfig-system view `yangblast serve` gives of itself, so that a
 * client's device telemetry (`run --telemetry`) has something true to read:
 *
 *   /system/cpus/cpu[index=ALL|N]/state/{index,total,user,kernel,idle}/instant
 *                      the host's CPUs (/proc/stat), percent over the last
 *                      second: what a switch reports for its own CPUs
 *   /system/memory/state/{physical,used,free}
 *                      the host's memory in bytes (/proc/meminfo; used =
 *                      total - available)
 *   /system/processes/process[pid=P]/state/{pid,name,start-time,
 *        cpu-usage-user,cpu-usage-system,cpu-utilization,memory-usage,
 *        memory-utilization}
 *                      this process (/proc/self/stat, /proc/self/status) and,
 *                      when it has more than one, each other thread of it
 *                      (/proc/self/task/TID/stat, keyed by TID); cumulative
 *                      CPU times in ns are read fresh at every request,
 *                      cpu-utilization is percent of one core over the second
 *                      before the request (as top shows it)
 *   process[pid=0] "serve-model-busy"
 *                      not an OS process: serve's service time is simulated
 *                      by timers, so its CPU says little about how busy the
 *                      modelled switch is; this entry's cpu-utilization is the
 *                      occupancy of the device's --workers over the last
 *                      second (100 = every worker busy all the time; with
 *                      unlimited workers, one worker is the unit)
 *
 * With --devices N every device reports the same host and process figures
 * (one process serves them all) and its own serve-model-busy entry.
 *
 * The counters are sampled every 100 ms by one timer per process (it never
 * keeps the loop alive); a request reads them afresh and gets the figures
 * of the second before it. */
#ifndef YB_SERVE_SYSTEM_H
#define YB_SERVE_SYSTEM_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>
#include "serve/cost.h"
#include "serve/store.h"

#define YB_SYS_MAX_ELEMS 7

/* One leaf of the tree: elements from "system" down, each with at most one
 * key, and a value (a string or an unsigned integer). */
typedef struct {
    unsigned n;
    const char *name[YB_SYS_MAX_ELEMS];
    const char *key[YB_SYS_MAX_ELEMS];  /* NULL: the element has no key */
    const char *kval[YB_SYS_MAX_ELEMS];
    int is_str;
    const char *s;
    uint64_t u;
} yb_sys_leaf;

typedef struct yb_sys yb_sys;

/* Creates the sampler for ndev devices on loop and takes the first sample.
 * Returns NULL on ENOMEM (or when the timer cannot be created). */
yb_sys *yb_sys_new(uv_loop_t *loop, unsigned ndev);
/* Device k's worker model (borrowed; must outlive the sampler's use), and
 * its worker count (0 = unlimited). */
void yb_sys_set_device(yb_sys *y, unsigned k, yb_sched *sched, unsigned workers);
/* Stops the timer (the loop must run once more to close it). */
void yb_sys_stop(yb_sys *y);
/* Frees y (after yb_sys_stop and the loop's last run). NULL ok. */
void yb_sys_free(yb_sys *y);

/* 1 when p is a path of this tree (its first element is "system"). */
int yb_sys_path(const yb_spath *p);

/* Calls fn for each leaf of device k at or below p (a name "*" and a key
 * value "*" match anything; a list element without keys matches every
 * entry; a positional key (RESTCONF) matches the list's key).  The leaf
 * and its strings live only during the call.  Returns the number of leaves
 * matched. */
typedef void (*yb_sys_leaf_fn)(void *ud, const yb_sys_leaf *leaf);
size_t yb_sys_walk(yb_sys *y, unsigned k, const yb_spath *p, yb_sys_leaf_fn fn, void *ud);

/* The RESTCONF body of a GET of p for device k:
 * {"openconfig-system:NAME": value} with lists as arrays (a list entry as a
 * one-entry array).  Returns a new reference, or NULL when nothing matches
 * (*nomem set on ENOMEM). */
json_t *yb_sys_json(yb_sys *y, unsigned k, const yb_spath *p, int *nomem);

#endif
