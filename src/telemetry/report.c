/* The telemetry part of the reports (see telemetry.h): the samples of each
 * device laid on the run's seconds (second 0 starts at the recorder's
 * run_start, the baseline is negative), baseline vs under load, the top
 * processes under load and the saturation sentence. */
#include "config.h"
#include "telemetry/telemetry.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SECONDS 100000
#define TOP_N 5
#define TEXT_ROWS 120
#define SATURATED 95.0
#define TEXT_COLS 6      /* workload columns in the text table (the JSON has all) */

typedef struct {
    double cpu_sum;
    unsigned cpu_n;
    double mem_used, mem_phys;      /* last seen; NAN none */
    long top;                       /* process index, -1 none */
    double top_cpu;
} second;

typedef struct {
    double sum, max, mem;
    unsigned n;
} proc_acc;

typedef struct {
    const yb_tm_device *d;
    long s0;                        /* the first second (negative: baseline) */
    size_t n;
    second *sec;
    proc_acc *proc;                 /* under load, per process index */
    double base_cpu, base_cpu_max, base_mem, load_cpu, load_cpu_max, load_mem;
    unsigned base_n, load_n, base_mn, load_mn;
    char saturation[400];
} view;

static long sec_of(uint64_t t, uint64_t origin)
{
    return t >= origin ? (long)((t - origin) / 1000000000u)
                       : -(long)((origin - t + 999999999u) / 1000000000u);
}

/* CPU of an obs for the device's figure: ALL when the device sends it,
 * else the mean of its CPUs (each CPU_N obs counts once). */
static int cpu_kind(const yb_tm_device *d)
{
    for (size_t i = 0; i < d->n_obs; i++)
        if (d->obs[i].kind == YB_TM_CPU_ALL)
            return YB_TM_CPU_ALL;
    return YB_TM_CPU_N;
}

static const yb_interval *iv_at(const yb_recorder *rec, long s)
{
    return s >= 0 && (size_t)s < rec->n_iv ? &rec->iv[s] : NULL;
}

static int view_build(view *v, const yb_tm_device *d, const yb_recorder *rec)
{
    memset(v, 0, sizeof *v);
    v->d = d;
    uint64_t origin = rec->run_start, end = rec->run_end > rec->run_start ? rec->run_end : origin;
    if (!d->n_obs)
        return 0;
    long lo = sec_of(d->obs[0].t, origin), hi = lo;
    for (size_t i = 0; i < d->n_obs; i++) {
        long s = sec_of(d->obs[i].t, origin);
        lo = s < lo ? s : lo;
        hi = s > hi ? s : hi;
    }
    if (hi - lo + 1 > MAX_SECONDS)
        lo = hi - MAX_SECONDS + 1;
    v->s0 = lo;
    v->n = (size_t)(hi - lo + 1);
    v->sec = calloc(v->n, sizeof *v->sec);
    v->proc = calloc(d->n_procs ? d->n_procs : 1, sizeof *v->proc);
    double *pc = calloc(v->n * (d->n_procs ? d->n_procs : 1), sizeof *pc);
    unsigned *pn = calloc(v->n * (d->n_procs ? d->n_procs : 1), sizeof *pn);
    if (!v->sec || !v->proc || !pc || !pn) {
        free(pc);
        free(pn);
        return -1;
    }
    for (size_t i = 0; i < v->n; i++) {
        v->sec[i].mem_used = v->sec[i].mem_phys = NAN;
        v->sec[i].top = -1;
    }
    int ck = cpu_kind(d);
    for (size_t i = 0; i < d->n_obs; i++) {
        const yb_tm_obs *o = &d->obs[i];
        long s = sec_of(o->t, origin);
        if (s < lo)
            continue;
        second *S = &v->sec[s - lo];
        int load = o->t >= origin && o->t <= end;
        if ((int)o->kind == ck) {
            S->cpu_sum += o->v;
            S->cpu_n++;
            if (o->t < origin) {
                v->base_cpu += o->v;
                v->base_cpu_max = o->v > v->base_cpu_max ? o->v : v->base_cpu_max;
                v->base_n++;
            } else if (load) {
                v->load_cpu += o->v;
                v->load_cpu_max = o->v > v->load_cpu_max ? o->v : v->load_cpu_max;
                v->load_n++;
            }
        } else if (o->kind == YB_TM_MEM_USED) {
            S->mem_used = o->v;
            if (o->t < origin) {
                v->base_mem += o->v;
                v->base_mn++;
            } else if (load) {
                v->load_mem += o->v;
                v->load_mn++;
            }
        } else if (o->kind == YB_TM_MEM_PHYS) {
            S->mem_phys = o->v;
        } else if (o->kind == YB_TM_PROC_CPU && o->id < d->n_procs) {
            pc[(size_t)(s - lo) * d->n_procs + o->id] += o->v;
            pn[(size_t)(s - lo) * d->n_procs + o->id]++;
            if (load) {
                proc_acc *p = &v->proc[o->id];
                p->sum += o->v;
                p->max = o->v > p->max ? o->v : p->max;
                p->n++;
            }
        } else if (o->kind == YB_TM_PROC_MEM && o->id < d->n_procs && load) {
            v->proc[o->id].mem = o->v;
        }
    }
    for (size_t i = 0; i < v->n; i++)
        for (size_t p = 0; p < d->n_procs; p++) {
            unsigned k = pn[i * d->n_procs + p];
            double c = k ? pc[i * d->n_procs + p] / k : 0;
            if (k && (v->sec[i].top < 0 || c > v->sec[i].top_cpu)) {
                v->sec[i].top = (long)p;
                v->sec[i].top_cpu = c;
            }
        }

    /* The saturation sentence: a process (or the CPUs as a whole) at
     * >= 95 % of a core in at least half of the seconds under load. */
    long l0 = 0, l1 = sec_of(end, origin);
    unsigned load_secs = 0;
    for (long s = l0; s <= l1; s++)
        if (s >= lo && s - lo < (long)v->n)
            load_secs++;
    /* Which process was hot (>= 95 %) in most seconds under load, and
     * in how many the CPUs as a whole were. */
    long best = -1;
    unsigned best_hot = 0, cpus_hot = 0;
    for (long p = -1; p < (long)d->n_procs; p++) {
        unsigned hot = 0;
        for (long s = l0; s <= l1; s++) {
            if (s < lo || s - lo >= (long)v->n)
                continue;
            size_t i = (size_t)(s - lo), at = i * d->n_procs + (size_t)p;
            double c = p < 0 ? (v->sec[i].cpu_n ? v->sec[i].cpu_sum / v->sec[i].cpu_n : -1)
                             : (pn[at] ? pc[at] / pn[at] : -1);
            hot += c >= SATURATED;
        }
        if (p < 0)
            cpus_hot = hot;
        else if (hot > best_hot) {
            best_hot = hot;
            best = p;
        }
    }
    free(pc);
    free(pn);
    int proc_sat = best >= 0 && load_secs && 2 * best_hot >= load_secs;
    int cpus_sat = load_secs && 2 * cpus_hot >= load_secs;
    if (proc_sat || cpus_sat) {
        /* latency: the first second of the load against its worst */
        double first = -1, worst = -1;
        for (long s = l0; s <= l1; s++) {
            const yb_interval *iv = iv_at(rec, s);
            if (!iv || !iv->requests || iv->p99_us <= 0)
                continue;
            if (first < 0)
                first = (double)iv->p99_us / 1e3;
            worst = (double)iv->p99_us / 1e3 > worst ? (double)iv->p99_us / 1e3 : worst;
        }
        char who[300];
        if (proc_sat)
            snprintf(who, sizeof who,
                     "process %.64s (pid %llu) at >= 95%% of a core in %u of %u s under load%s",
                     d->procs[best].name, (unsigned long long)d->procs[best].id, best_hot,
                     load_secs, cpus_sat ? " (and the device's CPUs >= 95% busy)" : "");
        else
            snprintf(who, sizeof who, "the device's CPUs at >= 95%% busy in %u of %u s under load",
                     cpus_hot, load_secs);
        char lat[160] = "";
        if (first > 0 && worst >= 1.5 * first)
            snprintf(lat, sizeof lat, " while p99 latency climbed from %.1f ms to %.1f ms",
                     first, worst);
        else if (first > 0)
            snprintf(lat, sizeof lat, "; p99 latency did not climb (%.1f ms in the first second, "
                                      "%.1f ms at worst)", first, worst);
        snprintf(v->saturation, sizeof v->saturation, "The device saturates: %s%s.", who, lat);
    }
    return 0;
}

static void view_free(view *v)
{
    free(v->sec);
    free(v->proc);
}

/* Process indexes by mean CPU under load, busiest first (at most TOP_N). */
static size_t top_procs(const view *v, size_t *idx)
{
    size_t n = 0;
    for (size_t p = 0; p < v->d->n_procs; p++) {
        if (!v->proc[p].n)
            continue;
        double m = v->proc[p].sum / v->proc[p].n;
        size_t k = n < TOP_N ? n++ : TOP_N;
        while (k > 0 && v->proc[idx[k - 1]].sum / v->proc[idx[k - 1]].n < m) {
            if (k < TOP_N)
                idx[k] = idx[k - 1];
            k--;
        }
        if (k < TOP_N)
            idx[k] = p;
    }
    return n;
}

static double mean_or(double sum, unsigned n) { return n ? sum / n : NAN; }

/* Device k's load: its own recorder when the caller gave one. */
static const yb_recorder *load_rec(const yb_tm_load *load, size_t k, const yb_recorder *rec)
{
    return load && load[k].rec ? load[k].rec : rec;
}

void yb_telemetry_report_text(FILE *out, const yb_telemetry *t, const yb_recorder *run_rec,
                              const yb_tm_load *load)
{
    const yb_tm_device *dev;
    size_t nd = yb_telemetry_devices(t, &dev);
    const yb_tm_cfg *cfg = yb_telemetry_cfg(t);
    fprintf(out, "\nDevice telemetry (every %.3g s; baseline %.3g s before the load, second 0 = "
                 "its start):\n",
            (double)cfg->interval_ns / 1e9, (double)cfg->baseline_ns / 1e9);
    for (size_t k = 0; k < nd; k++) {
        const yb_tm_device *d = &dev[k];
        fprintf(out, "  %s (%s):", d->tg->label, d->tg->gnmi ? "gNMI Subscribe" : "RESTCONF GET");
        if (!d->supported) {
            fprintf(out, " %s\n", d->note);
            continue;
        }
        fputc('\n', out);
        const yb_recorder *rec = load_rec(load, k, run_rec);
        size_t ncol = load ? load[k].n_cols : 0;
        ncol = ncol > TEXT_COLS ? TEXT_COLS : ncol;
        view v;
        if (view_build(&v, d, rec) < 0) {
            fprintf(out, "    (out of memory)\n");
            view_free(&v);
            continue;
        }
        size_t step = v.n > TEXT_ROWS ? (v.n + TEXT_ROWS - 1) / TEXT_ROWS : 1;
        fprintf(out, "    %6s %6s %10s  %-28s %6s %9s %10s", "t (s)", "CPU %", "mem used",
                "busiest process", "CPU %", "req/s", "p99 (ms)");
        for (size_t c = 0; c < ncol; c++) /* a plan's workloads at this device, req/s */
            fprintf(out, " %12.12s", load[k].col_name[c]);
        fputc('\n', out);
        for (size_t i = 0; i < v.n; i += step) {
            const second *S = &v.sec[i];
            long s = v.s0 + (long)i;
            char cpu[16] = "-", mem[16] = "-", top[40] = "-", tc[16] = "-", rq[16] = "",
                 p99[16] = "";
            if (S->cpu_n)
                snprintf(cpu, sizeof cpu, "%.1f", S->cpu_sum / S->cpu_n);
            if (!isnan(S->mem_used))
                snprintf(mem, sizeof mem, "%.1f MB", S->mem_used / 1e6);
            if (S->top >= 0) {
                snprintf(top, sizeof top, "%.20s (%llu)", d->procs[S->top].name,
                         (unsigned long long)d->procs[S->top].id);
                snprintf(tc, sizeof tc, "%.1f", S->top_cpu);
            }
            const yb_interval *iv = iv_at(rec, s);
            if (iv) {
                snprintf(rq, sizeof rq, "%llu", (unsigned long long)iv->requests);
                if (iv->requests)
                    snprintf(p99, sizeof p99, "%.2f", (double)iv->p99_us / 1e3);
            }
            fprintf(out, "    %6ld %6s %10s  %-28s %6s %9s %10s", s, cpu, mem, top, tc, rq, p99);
            for (size_t c = 0; c < ncol; c++) {
                const yb_interval *w = iv_at(load[k].col_rec[c], s);
                if (w)
                    fprintf(out, " %12llu", (unsigned long long)w->requests);
                else
                    fprintf(out, " %12s", "");
            }
            fputc('\n', out);
        }
        if (step > 1)
            fprintf(out, "    (every %zu-th second of %zu shown; the JSON has them all)\n", step,
                    v.n);
        if (load && load[k].n_cols > ncol)
            fprintf(out, "    (the first %zu of %zu workloads' columns shown; the JSON has them "
                         "all)\n", ncol, load[k].n_cols);
        fprintf(out, "    CPU %%: baseline mean %.1f max %.1f; under load mean %.1f max %.1f\n",
                mean_or(v.base_cpu, v.base_n), v.base_n ? v.base_cpu_max : NAN,
                mean_or(v.load_cpu, v.load_n), v.load_n ? v.load_cpu_max : NAN);
        fprintf(out, "    memory used: baseline %.1f MB, under load %.1f MB\n",
                mean_or(v.base_mem, v.base_mn) / 1e6, mean_or(v.load_mem, v.load_mn) / 1e6);
        size_t idx[TOP_N];
        size_t nt = top_procs(&v, idx);
        if (nt) {
            fprintf(out, "    top processes by CPU under load (%% of a core, mean / max):\n");
            for (size_t i = 0; i < nt; i++) {
                const proc_acc *p = &v.proc[idx[i]];
                fprintf(out, "      %-30s pid %-8llu %6.1f / %6.1f  %8.1f MB\n",
                        d->procs[idx[i]].name, (unsigned long long)d->procs[idx[i]].id,
                        p->sum / p->n, p->max, p->mem / 1e6);
            }
        }
        if (*v.saturation)
            fprintf(out, "    %s\n", v.saturation);
        if (d->obs_dropped)
            fprintf(out, "    %llu observations over the cap were dropped\n",
                    (unsigned long long)d->obs_dropped);
        if (*d->note)
            fprintf(out, "    note: %s\n", d->note);
        view_free(&v);
    }
    uint64_t req = 0, nots = 0, ups = 0, bo = 0, bi = 0;
    for (size_t k = 0; k < nd; k++) {
        req += dev[k].requests;
        nots += dev[k].notifications;
        ups += dev[k].updates;
        bo += dev[k].bytes_out;
        bi += dev[k].bytes_in;
    }
    fprintf(out, "  telemetry's own cost: %.3f s CPU (its own thread; part of the generator's CPU "
                 "above while the load ran), %llu requests, %llu notifications, %llu updates, "
                 "%llu bytes out, %llu bytes in\n",
            yb_telemetry_cpu_s(t), (unsigned long long)req, (unsigned long long)nots,
            (unsigned long long)ups, (unsigned long long)bo, (unsigned long long)bi);
}

static json_t *num_or_null(double v) { return isnan(v) ? json_null() : json_real(v); }

/* Each workload's requests in second s at device k ({"NAME": n}). */
static json_t *workload_seconds(const yb_tm_load *load, size_t k, long s)
{
    json_t *o = json_object();
    for (size_t c = 0; o && c < load[k].n_cols; c++) {
        const yb_interval *w = iv_at(load[k].col_rec[c], s);
        if (json_object_set_new(o, load[k].col_name[c],
                                json_integer(w ? (json_int_t)w->requests : 0)) < 0) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

json_t *yb_telemetry_report_json(const yb_telemetry *t, const yb_recorder *run_rec,
                                 const yb_tm_load *load)
{
    const yb_tm_device *dev;
    size_t nd = yb_telemetry_devices(t, &dev);
    const yb_tm_cfg *cfg = yb_telemetry_cfg(t);
    json_t *devs = json_array(), *j = NULL;
    uint64_t req = 0, nots = 0, ups = 0, bo = 0, bi = 0;
    if (!devs)
        return NULL;
    for (size_t k = 0; k < nd; k++) {
        const yb_tm_device *d = &dev[k];
        req += d->requests;
        nots += d->notifications;
        ups += d->updates;
        bo += d->bytes_out;
        bi += d->bytes_in;
        json_t *o = json_pack("{s:s, s:s, s:b, s:s?}", "target", d->tg->label, "protocol",
                              d->tg->gnmi ? "gnmi" : "restconf", "supported", d->supported,
                              "note", *d->note ? d->note : NULL);
        if (!o || json_array_append_new(devs, o) < 0)
            goto fail;
        if (!d->supported)
            continue;
        const yb_recorder *rec = load_rec(load, k, run_rec);
        view v;
        if (view_build(&v, d, rec) < 0) {
            view_free(&v);
            goto fail;
        }
        json_t *series = json_array(), *top = json_array(), *extra = json_array();
        int bad = !series || !top || !extra ||
                  json_object_set_new(o, "series", series) < 0 ||
                  json_object_set_new(o, "top_processes", top) < 0 ||
                  json_object_set_new(o, "extra", extra) < 0;
        for (size_t i = 0; !bad && i < v.n; i++) {
            const second *S = &v.sec[i];
            long s = v.s0 + (long)i;
            const yb_interval *iv = iv_at(rec, s);
            json_t *e = json_pack("{s:I, s:o, s:o, s:o}", "t_s", (json_int_t)s, "cpu_pct",
                                  S->cpu_n ? json_real(S->cpu_sum / S->cpu_n) : json_null(),
                                  "mem_used_bytes", num_or_null(S->mem_used),
                                  "mem_physical_bytes", num_or_null(S->mem_phys));
            bad = !e || json_array_append_new(series, e) < 0;
            if (!bad && S->top >= 0)
                bad = json_object_set_new(e, "top_process",
                                          json_pack("{s:I, s:s, s:f}", "pid",
                                                    (json_int_t)d->procs[S->top].id, "name",
                                                    d->procs[S->top].name, "cpu_pct",
                                                    S->top_cpu)) < 0;
            if (!bad && iv)
                bad = json_object_set_new(e, "requests", json_integer((json_int_t)iv->requests)) < 0 ||
                      json_object_set_new(e, "errors", json_integer((json_int_t)iv->errors)) < 0 ||
                      json_object_set_new(e, "p99_us", iv->requests ? json_integer(iv->p99_us)
                                                                    : json_null()) < 0;
            if (!bad && iv && load && load[k].n_cols)
                bad = json_object_set_new(e, "workloads", workload_seconds(load, k, s)) < 0;
        }
        size_t idx[TOP_N];
        size_t nt = top_procs(&v, idx);
        for (size_t i = 0; !bad && i < nt; i++) {
            const proc_acc *p = &v.proc[idx[i]];
            bad = json_array_append_new(
                      top, json_pack("{s:I, s:s, s:f, s:f, s:f}", "pid",
                                     (json_int_t)d->procs[idx[i]].id, "name", d->procs[idx[i]].name,
                                     "cpu_pct_mean", p->sum / p->n, "cpu_pct_max", p->max,
                                     "memory_bytes", p->mem)) < 0;
        }
        /* the --telemetry-path leaves: mean at baseline and under load */
        for (size_t x = 0; !bad && x < d->n_extras; x++) {
            double bs = 0, ls = 0;
            unsigned bn = 0, ln = 0;
            for (size_t i = 0; i < d->n_obs; i++) {
                const yb_tm_obs *ob = &d->obs[i];
                if (ob->kind != YB_TM_EXTRA || ob->id != x)
                    continue;
                if (ob->t < rec->run_start) {
                    bs += ob->v;
                    bn++;
                } else if (ob->t <= rec->run_end) {
                    ls += ob->v;
                    ln++;
                }
            }
            bad = json_array_append_new(extra, json_pack("{s:s, s:o, s:o}", "path",
                                                         d->extras[x].name, "baseline_mean",
                                                         num_or_null(mean_or(bs, bn)),
                                                         "load_mean",
                                                         num_or_null(mean_or(ls, ln)))) < 0;
        }
        if (!bad)
            bad = json_object_set_new(
                      o, "baseline",
                      json_pack("{s:o, s:o, s:o}", "cpu_pct_mean",
                                num_or_null(mean_or(v.base_cpu, v.base_n)), "cpu_pct_max",
                                v.base_n ? json_real(v.base_cpu_max) : json_null(),
                                "mem_used_bytes", num_or_null(mean_or(v.base_mem, v.base_mn)))) < 0 ||
                  json_object_set_new(
                      o, "load",
                      json_pack("{s:o, s:o, s:o}", "cpu_pct_mean",
                                num_or_null(mean_or(v.load_cpu, v.load_n)), "cpu_pct_max",
                                v.load_n ? json_real(v.load_cpu_max) : json_null(),
                                "mem_used_bytes", num_or_null(mean_or(v.load_mem, v.load_mn)))) < 0 ||
                  json_object_set_new(o, "saturation", *v.saturation ? json_string(v.saturation)
                                                                     : json_null()) < 0 ||
                  json_object_set_new(o, "observations_dropped",
                                      json_integer((json_int_t)d->obs_dropped)) < 0;
        view_free(&v);
        if (bad)
            goto fail;
    }
    j = json_pack("{s:f, s:f, s:o, s:{s:f, s:I, s:I, s:I, s:I, s:I}}", "interval_s",
                  (double)cfg->interval_ns / 1e9, "baseline_s", (double)cfg->baseline_ns / 1e9,
                  "devices", devs, "cost", "cpu_s", yb_telemetry_cpu_s(t), "requests",
                  (json_int_t)req, "notifications", (json_int_t)nots, "updates", (json_int_t)ups,
                  "bytes_out", (json_int_t)bo, "bytes_in", (json_int_t)bi);
    return j;
fail:
    json_decref(devs);
    return NULL;
}

double yb_telemetry_load_cpu(const yb_tm_device *d, uint64_t from, uint64_t to)
{
    int ck = cpu_kind(d);
    double sum = 0;
    unsigned n = 0;
    for (size_t i = 0; i < d->n_obs; i++)
        if ((int)d->obs[i].kind == ck && d->obs[i].t >= from && d->obs[i].t <= to) {
            sum += d->obs[i].v;
            n++;
        }
    return n ? sum / n : -1;
}
