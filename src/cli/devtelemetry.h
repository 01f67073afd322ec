/* --telemetry for the commands that run the engine (run, experiment
 * sweep): which sessions watch which devices (src/telemetry does the
 * watching).  Apart from runcommon so that what links runcommon (the plan
 * fuzz target) does not need the telemetry module. */
#ifndef YB_DEVTELEMETRY_H
#define YB_DEVTELEMETRY_H

#include "engine/engine.h"
#include "telemetry/telemetry.h"

/* --telemetry: starts the device telemetry (src/telemetry) for the n
 * workloads o[0..n) labelled label[0..n): one session per device, over
 * gNMI when the device has a gNMI workload, else RESTCONF.  A pair whose
 * label ends in "/restconf" is left out when "NAME/gnmi" is there; without
 * an inventory (routed), only the gNMI workload is watched.  interval,
 * baseline and paths come from the options.  tgs (n entries) and cfg are
 * filled and must outlive the telemetry.  Returns it, or NULL with a
 * message printed. */
yb_telemetry *yb_telemetry_for(const char *cmd, uint64_t interval_ns, uint64_t baseline_ns,
                               const char *const *paths, size_t n_paths,
                               const yb_engine_opts *o, const char (*label)[80], size_t n,
                               int routed_single, yb_tm_target *tgs, yb_tm_cfg *cfg);

/* The load each watched device got, for the reports (yb_tm_load). */
typedef struct {
    yb_tm_load *load;           /* one per device of the telemetry */
    yb_recorder *owned;         /* merged recorders (a device or workload with several pairs) */
    size_t n_owned;
    const char **names;         /* the column slices */
    const yb_recorder **recs;
} yb_tm_loads;

/* Fills l from the run's pairs: pair p is labelled label[p] and recorded
 * in rec[p]; a plan gives each pair's workload wl[p] (names wl_name),
 * NULL for a fleet (n_wl workloads).  Device k of tm (labelled L) got the load of the pairs
 * labelled L, and for "X/gnmi" those of "X/restconf" too (one device, one
 * session); a plan adds a column per workload sending to it.  one_device:
 * every pair goes to the one device watched (routed --target URLs), whose
 * load is the run's.  Returns 0 or -1 (out of memory; l then freed). */
int yb_tm_loads_build(yb_tm_loads *l, const yb_telemetry *tm, const char *const *label,
                      const yb_recorder *rec, const size_t *wl, const char *const *wl_name,
                      size_t n_wl, size_t n_pairs, int one_device);
void yb_tm_loads_free(yb_tm_loads *l);

#endif
