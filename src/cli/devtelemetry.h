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

#endif
