/* libFuzzer target: gnmic-style request files (`synth gnmi --set-request`)
 * in YAML and JSON, with an oracle: a request that is accepted encodes to a
 * body that `corpus cat --decode` decodes (and checks to encode back to the
 * same bytes), since both go through the same protobuf-c encoding.  The
 * first input byte picks the file name's extension (.yaml or .json). */
#include "config.h"
#include "gnmi/gnmi_json.h"
#include "synth/gnmi_req.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[2][128];
    if (!path[0][0])
        for (int i = 0; i < 2; i++)
            snprintf(path[i], sizeof path[i], "%s/yb-fuzz-gnmi-req.%d.%s",
                     access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int)getpid(),
                     i ? "json" : "yaml");
    if (!size)
        return 0;
    const char *p = path[data[0] & 1];
    FILE *f = fopen(p, "wb");
    if (!f || fwrite(data + 1, 1, size - 1, f) != size - 1 || fclose(f))
        abort();
    uint8_t *body = NULL;
    size_t len = 0;
    char err[512] = "";
    if (yb_synth_gnmi_set_body(p, YB_GNMI_ENC_JSON_IETF, &body, &len, err, sizeof err) == 0) {
        char why[300];
        json_t *j = yb_gnmi_body_to_json("/gnmi.gNMI/Set", body, len, why, sizeof why);
        if (!j) {
            fprintf(stderr, "an encoded request does not decode back: %s\n", why);
            abort();
        }
        json_decref(j);
        free(body);
    } else if (!err[0] || strncmp(err, p, strlen(p)) && strcmp(err, "out of memory")) {
        fprintf(stderr, "a refused request file without its name: \"%s\"\n", err);
        abort();
    }
    unlink(p);
    return 0;
}
