/* SVG plotting primitives for the HTML report (report/html.c): line plots
 * with labelled axes and "nice" 1-2-5 ticks (linear, or HdrHistogram's
 * percentile axis, log10 of 1/(1-p)), horizontal stacked bars, a
 * colour-blind-safe palette (Okabe-Ito) with a dash pattern per series,
 * and escaping of every string put into the markup.  Output is plain SVG
 * 1.1 inline in HTML: no script, no external reference.
 *
 * Each series carries its data values as attributes (data-name, data-x,
 * data-y: the numbers it was given, space-separated), and each plot its
 * axis mapping (data-x-min/max, data-y-min/max, and the plot area in
 * data-area="x0 y0 x1 y1" pixels), so a test can check what is drawn
 * against the numbers it came from. */
#ifndef YB_SVG_H
#define YB_SVG_H

#include <stddef.h>
#include <stdio.h>

/* Writes s to f with &, <, >, " and ' escaped and control characters
 * (other than tab and newline) replaced by U+FFFD; s is expected to be
 * UTF-8 (jansson's strings are).  NULL writes nothing. */
void yb_svg_escape(FILE *f, const char *s);

/* Nice tick values covering [lo, hi] with at most max_ticks intervals:
 * the step is 1, 2 or 5 times a power of ten; ticks run from the last
 * multiple of step at or below lo to the first at or above hi.  Writes at
 * most cap values into ticks and the step into *step.  Returns how many
 * (at least 2 when cap >= 2; lo == hi is widened to a unit range). */
size_t yb_svg_nice_ticks(double lo, double hi, size_t max_ticks, double *ticks, size_t cap,
                         double *step);

/* Formats a tick value v for a scale whose step is step: as many decimals
 * as the step needs, k / M / G for thousands and up.  Returns buf. */
const char *yb_svg_fmt_tick(double v, double step, char *buf, size_t len);

/* The series style i: a colour of the Okabe-Ito palette and a dash
 * pattern ("" = solid), both cycling, so neighbours differ in both. */
const char *yb_svg_colour(size_t i);
const char *yb_svg_dash(size_t i);

typedef enum {
    YB_AXIS_LINEAR = 0,
    YB_AXIS_PERCENTILE, /* x given as percentiles 0..100, drawn at log10(1/(1-p/100)) */
} yb_axis_kind;

typedef struct {
    const char *kind;         /* data-kind of the <svg> (e.g. "timeseries-rate") */
    const char *title;        /* above the plot */
    const char *xlabel, *ylabel; /* with units */
    yb_axis_kind xaxis;
    double xmin, xmax;        /* data range (percentile axis: xmax in %, < 100) */
    double ymin, ymax;        /* data range; widened to nice ticks */
    const char *const *legend; /* one name per series, in style order */
    size_t n_legend;
    int width, height;        /* of the plot area's box, px (0: 860 x 300) */
} yb_svg_plot_spec;

typedef struct {
    FILE *f;
    yb_axis_kind xaxis;
    double xlo, xhi, ylo, yhi;      /* axis ranges (percentile: in log units) */
    double px0, py0, px1, py1;      /* plot area, px */
} yb_svg_plot;

/* Opens <svg class="plot"> with its title, grid, axes, tick labels, axis
 * labels and legend.  Returns 0 or -1 on a write error. */
int yb_svg_plot_begin(yb_svg_plot *p, FILE *f, const yb_svg_plot_spec *s);
/* Draws series `style` (its legend name: name) through the n points
 * (x[i], y[i]) as a polyline; values outside the axes are clipped to the
 * plot area; a single point is drawn as a dot.  Returns 0 or -1. */
int yb_svg_series(yb_svg_plot *p, size_t style, const char *name, const double *x,
                  const double *y, size_t n);
/* Closes the plot.  Returns 0 or -1 on a write error. */
int yb_svg_plot_end(yb_svg_plot *p);

/* Horizontal stacked bars: one bar per row (labels[r]), one segment per
 * column (segments[c], in palette order), values[r * n_seg + c] >= 0, on
 * a linear x axis labelled xlabel.  Returns 0 or -1 on a write error. */
int yb_svg_stacked_bars(FILE *f, const char *kind, const char *title, const char *xlabel,
                        const char *const *labels, size_t n_rows, const char *const *segments,
                        size_t n_seg, const double *values);

#endif
