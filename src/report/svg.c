/* SVG plotting primitives (see svg.h).  Coordinates are written with two
 * decimals in a fixed viewBox; the page scales the picture with CSS. */
#include "config.h"
#include "report/svg.h"

#include <math.h>
#include <string.h>

#define W_DEFAULT 860
#define H_DEFAULT 300
#define M_LEFT 72    /* y tick labels and the y axis label */
#define M_RIGHT 24
#define M_TOP 34     /* the title */
#define M_BOTTOM 48  /* x tick labels and the x axis label */
#define LEGEND_ROW 20
#define CHAR_W 7.0   /* estimated width of one character at 12 px */
#define MAX_NAME 48  /* legend names longer than this are cut (full text in <title>) */
#define MAX_TICKS 32

/* Okabe & Ito (2008), "Color Universal Design": distinguishable with every
 * common colour-vision deficiency; yellow last (weak on white). */
static const char *const PALETTE[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                      "#E69F00", "#56B4E9", "#000000", "#F0E442"};
/* 5 patterns against 8 colours: style i and i+k differ in colour or dash
 * for every k < 40. */
static const char *const DASHES[] = {"", "7 3", "2 3", "9 3 2 3", "4 4"};

const char *yb_svg_colour(size_t i)
{
    return PALETTE[i % (sizeof PALETTE / sizeof PALETTE[0])];
}

const char *yb_svg_dash(size_t i)
{
    return DASHES[i % (sizeof DASHES / sizeof DASHES[0])];
}

void yb_svg_escape(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default:
            if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
                fputs("\xef\xbf\xbd", f); /* U+FFFD */
            else
                fputc(c, f);
        }
    }
}

/* Writes at most max bytes of s (cut at a UTF-8 character boundary, "…"
 * appended when cut), escaped. */
static void escape_cut(FILE *f, const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max) {
        yb_svg_escape(f, s);
        return;
    }
    while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
        max--; /* not inside a multi-byte character */
    char buf[MAX_NAME * 4 + 8];
    if (max >= sizeof buf - 4)
        max = sizeof buf - 4;
    memcpy(buf, s, max);
    memcpy(buf + max, "\xe2\x80\xa6", 4); /* U+2026 and the terminator */
    yb_svg_escape(f, buf);
}

/* Estimated rendered width of s in px (characters, not bytes). */
static double text_w(const char *s, size_t max_chars)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return (double)(n < max_chars ? n : max_chars + 1) * CHAR_W;
}

size_t yb_svg_nice_ticks(double lo, double hi, size_t max_ticks, double *ticks, size_t cap,
                         double *step)
{
    if (!isfinite(lo) || !isfinite(hi)) {
        lo = 0;
        hi = 1;
    }
    if (hi < lo) {
        double t = lo;
        lo = hi;
        hi = t;
    }
    if (hi - lo < fabs(hi) * 1e-12 || hi == lo) {
        double w = fabs(hi) > 0 ? fabs(hi) * 0.5 : 1.0;
        lo = lo >= 0 && lo - w < 0 ? 0 : lo - w; /* a non-negative range stays so */
        hi = hi + w;
    }
    if (max_ticks < 1)
        max_ticks = 1;
    double raw = (hi - lo) / (double)max_ticks;
    double mag = pow(10.0, floor(log10(raw)));
    double s = mag;
    static const double MULT[] = {1, 2, 5, 10};
    for (size_t i = 0; i < sizeof MULT / sizeof MULT[0]; i++) {
        s = MULT[i] * mag;
        if (s >= raw * (1 - 1e-9))
            break;
    }
    double first = floor(lo / s + 1e-9) * s, last = ceil(hi / s - 1e-9) * s;
    size_t n = 0;
    for (double k = 0; n < cap; k++) {
        double v = first + k * s;
        if (fabs(v) < s * 1e-9)
            v = 0; /* no "-0" */
        ticks[n++] = v;
        if (v >= last - s * 1e-9)
            break;
    }
    *step = s;
    return n;
}

const char *yb_svg_fmt_tick(double v, double step, char *buf, size_t len)
{
    /* The suffix follows the step, so every label of one axis has the same */
    static const struct {
        double div;
        const char *suffix;
    } SI[] = {{1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}};
    size_t k = 0;
    while (k + 1 < sizeof SI / sizeof SI[0] && fabs(step) < SI[k].div)
        k++;
    double sv = v / SI[k].div, ss = fabs(step) / SI[k].div;
    int dec = ss > 0 && ss < 1 ? (int)ceil(-log10(ss) - 1e-9) : 0;
    if (dec > 9)
        dec = 9;
    snprintf(buf, len, "%.*f%s", dec, sv, SI[k].suffix);
    return buf;
}

/* The percentile axis' position of percentile p: log10(1/(1-p/100)). */
static double pct_pos(double p)
{
    if (!(p < 100.0))
        return 1e9; /* clipped to the axis' end */
    if (p < 0)
        p = 0;
    return log10(100.0 / (100.0 - p));
}

static double map_x(const yb_svg_plot *p, double x)
{
    double t = p->xaxis == YB_AXIS_PERCENTILE ? pct_pos(x) : x;
    if (t < p->xlo)
        t = p->xlo;
    if (t > p->xhi)
        t = p->xhi;
    return p->px0 + (t - p->xlo) / (p->xhi - p->xlo) * (p->px1 - p->px0);
}

static double map_y(const yb_svg_plot *p, double y)
{
    if (!isfinite(y))
        y = p->ylo;
    if (y < p->ylo)
        y = p->ylo;
    if (y > p->yhi)
        y = p->yhi;
    return p->py1 - (y - p->ylo) / (p->yhi - p->ylo) * (p->py1 - p->py0);
}

/* The legend's rows: entries placed left to right, wrapping at width.
 * With f, draws them starting at y; returns the number of rows. */
static int legend(FILE *f, const char *const *names, size_t n, double x0, double width, double y,
                  int boxes)
{
    double x = x0;
    int rows = n ? 1 : 0;
    for (size_t i = 0; i < n; i++) {
        double w = 34 + text_w(names[i], MAX_NAME) + 18;
        if (x > x0 && x + w > x0 + width) {
            x = x0;
            rows++;
        }
        if (f) {
            double yy = y + (rows - 1) * LEGEND_ROW;
            fprintf(f, "<g class=\"legend-entry\">");
            if (boxes)
                fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"26\" height=\"10\" fill=\"%s\"/>",
                        x, yy - 9, yb_svg_colour(i));
            else
                fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
                           "stroke-width=\"2.5\" stroke-dasharray=\"%s\"/>",
                        x, yy - 4, x + 26, yy - 4, yb_svg_colour(i),
                        *yb_svg_dash(i) ? yb_svg_dash(i) : "none");
            fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">", x + 32, yy);
            escape_cut(f, names[i], MAX_NAME);
            fprintf(f, "<title>");
            yb_svg_escape(f, names[i]);
            fprintf(f, "</title></text></g>\n");
        }
        x += w;
    }
    return rows;
}

/* Linear ticks for [lo, hi] on an axis length px long whose labels must
 * not overlap: fewer ticks until the widest label fits its share (x), or
 * one every 36 px (y).  Returns the count. */
static size_t fit_ticks(double lo, double hi, double px, int horizontal, double *t, double *step)
{
    size_t max = horizontal ? (size_t)(px / 70) : (size_t)(px / 36);
    if (max < 2)
        max = 2;
    for (;; max--) {
        size_t n = yb_svg_nice_ticks(lo, hi, max, t, MAX_TICKS, step);
        if (!horizontal || max <= 2)
            return n;
        double widest = 0;
        char b[48];
        for (size_t i = 0; i < n; i++) {
            double w = text_w(yb_svg_fmt_tick(t[i], *step, b, sizeof b), 40);
            widest = w > widest ? w : widest;
        }
        if ((widest + 14) * (double)n <= px)
            return n;
    }
}

/* "0%", "90%", "99%", "99.9%", ... for the decade k of the percentile axis. */
static void pct_label(int k, char *buf, size_t len)
{
    if (k == 0) {
        snprintf(buf, len, "0%%");
        return;
    }
    char nines[32] = "";
    for (int i = 2; i < k && i < 20; i++)
        strcat(nines, "9");
    snprintf(buf, len, "%s%s%s%%", k == 1 ? "90" : "99", k > 2 ? "." : "", nines);
}

int yb_svg_plot_begin(yb_svg_plot *p, FILE *f, const yb_svg_plot_spec *s)
{
    double pw = s->width > 0 ? s->width : W_DEFAULT, ph = s->height > 0 ? s->height : H_DEFAULT;
    double W = M_LEFT + pw + M_RIGHT;
    int rows = legend(NULL, s->legend, s->n_legend, M_LEFT, pw, 0, 0);
    double H = M_TOP + ph + M_BOTTOM + rows * LEGEND_ROW + (rows ? 8 : 0);
    double yt[MAX_TICKS], xt[MAX_TICKS], ystep, xstep = 1;
    size_t ny, nx;
    char b[64];

    memset(p, 0, sizeof *p);
    p->f = f;
    p->xaxis = s->xaxis;
    p->px0 = M_LEFT;
    p->px1 = M_LEFT + pw;
    p->py0 = M_TOP;
    p->py1 = M_TOP + ph;
    ny = fit_ticks(s->ymin < 0 ? s->ymin : 0, s->ymax, ph, 0, yt, &ystep);
    p->ylo = yt[0];
    p->yhi = yt[ny - 1];
    if (s->xaxis == YB_AXIS_PERCENTILE) {
        double top = ceil(pct_pos(s->xmax < 99.0 ? 99.0 : s->xmax) - 1e-9);
        if (top > 12)
            top = 12; /* 99.9999999999%: beyond what a double resolves */
        nx = (size_t)top + 1;
        for (size_t i = 0; i < nx; i++)
            xt[i] = (double)i;
        p->xlo = 0;
        p->xhi = top;
    } else {
        nx = fit_ticks(s->xmin, s->xmax, pw, 1, xt, &xstep);
        p->xlo = xt[0];
        p->xhi = xt[nx - 1];
    }

    fprintf(f, "<svg class=\"plot\" viewBox=\"0 0 %.0f %.0f\" "
               "width=\"%.0f\" height=\"%.0f\" role=\"img\" data-kind=\"",
            W, H, W, H);
    yb_svg_escape(f, s->kind);
    fprintf(f, "\" data-x-axis=\"%s\" data-x-min=\"%.12g\" data-x-max=\"%.12g\" data-y-min=\"%.12g\" "
               "data-y-max=\"%.12g\" data-area=\"%.2f %.2f %.2f %.2f\">\n",
            s->xaxis == YB_AXIS_PERCENTILE ? "percentile" : "linear", p->xlo, p->xhi, p->ylo,
            p->yhi, p->px0, p->py0, p->px1, p->py1);
    fprintf(f, "<title>");
    yb_svg_escape(f, s->title);
    fprintf(f, "</title>\n<text class=\"title\" x=\"%.2f\" y=\"20\">", p->px0);
    yb_svg_escape(f, s->title);
    fprintf(f, "</text>\n<rect class=\"area\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>\n",
            p->px0, p->py0, pw, ph);

    /* grid and tick labels */
    fprintf(f, "<g class=\"grid\">\n");
    for (size_t i = 0; i < ny; i++) {
        double y = map_y(p, yt[i]);
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>", p->px0, y, p->px1, y);
        fprintf(f, "<text class=\"ytick\" x=\"%.2f\" y=\"%.2f\">%s</text>\n", p->px0 - 6, y + 4,
                yb_svg_fmt_tick(yt[i], ystep, b, sizeof b));
    }
    /* percentile labels grow a digit per decade: label every k-th decade
     * when the longest would not fit between two */
    size_t every = 1;
    if (s->xaxis == YB_AXIS_PERCENTILE) {
        pct_label((int)xt[nx - 1], b, sizeof b);
        while (every < nx && pw / (double)(nx - 1) * (double)every < text_w(b, 40) + 12)
            every++;
    }
    for (size_t i = 0; i < nx; i++) {
        double x = p->px0 + (xt[i] - p->xlo) / (p->xhi - p->xlo) * (p->px1 - p->px0);
        if (s->xaxis == YB_AXIS_PERCENTILE)
            pct_label((int)xt[i], b, sizeof b);
        else
            yb_svg_fmt_tick(xt[i], xstep, b, sizeof b);
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>", x, p->py0, x, p->py1);
        if (i % every == 0)
            fprintf(f, "<text class=\"xtick\" x=\"%.2f\" y=\"%.2f\">%s</text>\n", x,
                    p->py1 + 16, b);
    }
    if (s->xaxis == YB_AXIS_PERCENTILE && (p->px1 - p->px0) / (p->xhi - p->xlo) >= 90) {
        double x = map_x(p, 50.0); /* the median, where a decade is wide enough */
        fprintf(f, "<line class=\"minor\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>", x,
                p->py0, x, p->py1);
        fprintf(f, "<text class=\"xtick\" x=\"%.2f\" y=\"%.2f\">50%%</text>\n", x, p->py1 + 16);
    }
    fprintf(f, "</g>\n");
    fprintf(f, "<text class=\"xlabel\" x=\"%.2f\" y=\"%.2f\">", (p->px0 + p->px1) / 2, p->py1 + 38);
    yb_svg_escape(f, s->xlabel);
    fprintf(f, "</text>\n<text class=\"ylabel\" transform=\"translate(16 %.2f) rotate(-90)\">",
            (p->py0 + p->py1) / 2);
    yb_svg_escape(f, s->ylabel);
    fprintf(f, "</text>\n");
    legend(f, s->legend, s->n_legend, p->px0, pw, p->py1 + M_BOTTOM + 14, 0);
    return ferror(f) ? -1 : 0;
}

/* Writes the n values as a space-separated attribute value. */
static void values_attr(FILE *f, const char *name, const double *v, size_t n)
{
    fprintf(f, " %s=\"", name);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%.12g", i ? " " : "", v[i]);
    fputc('"', f);
}

int yb_svg_series(yb_svg_plot *p, size_t style, const char *name, const double *x,
                  const double *y, size_t n)
{
    FILE *f = p->f;
    fprintf(f, "<g class=\"series\" data-name=\"");
    yb_svg_escape(f, name);
    fputc('"', f);
    values_attr(f, "data-x", x, n);
    values_attr(f, "data-y", y, n);
    fprintf(f, ">");
    if (n == 1) {
        fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"%s\"/>", map_x(p, x[0]),
                map_y(p, y[0]), yb_svg_colour(style));
    } else if (n > 1) {
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
                   "stroke-linejoin=\"round\"",
                yb_svg_colour(style));
        if (*yb_svg_dash(style))
            fprintf(f, " stroke-dasharray=\"%s\"", yb_svg_dash(style));
        fprintf(f, " points=\"");
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%s%.2f,%.2f", i ? " " : "", map_x(p, x[i]), map_y(p, y[i]));
        fprintf(f, "\"/>");
    }
    fprintf(f, "<title>");
    yb_svg_escape(f, name);
    fprintf(f, "</title></g>\n");
    return ferror(f) ? -1 : 0;
}

int yb_svg_plot_end(yb_svg_plot *p)
{
    fprintf(p->f, "</svg>\n");
    return ferror(p->f) ? -1 : 0;
}

int yb_svg_stacked_bars(FILE *f, const char *kind, const char *title, const char *xlabel,
                        const char *const *labels, size_t n_rows, const char *const *segments,
                        size_t n_seg, const double *values)
{
    enum { LABEL_W = 250, BAR_H = 22, GAP = 10, MAX_LABEL = 34 };
    double pw = W_DEFAULT - (LABEL_W - M_LEFT) - 60, x0 = LABEL_W, W = W_DEFAULT + M_LEFT + M_RIGHT;
    int rows = legend(NULL, segments, n_seg, x0, pw, 0, 1);
    double top = M_TOP + rows * LEGEND_ROW + 6;
    double H = top + (double)n_rows * (BAR_H + GAP) + M_BOTTOM;
    double max = 0, t[MAX_TICKS], step;
    char b[64];

    for (size_t r = 0; r < n_rows; r++) {
        double sum = 0;
        for (size_t c = 0; c < n_seg; c++)
            sum += isfinite(values[r * n_seg + c]) && values[r * n_seg + c] > 0
                       ? values[r * n_seg + c]
                       : 0;
        max = sum > max ? sum : max;
    }
    size_t nt = fit_ticks(0, max, pw, 1, t, &step);
    double hi = t[nt - 1] > 0 ? t[nt - 1] : 1, y1 = top + (double)n_rows * (BAR_H + GAP);

    fprintf(f, "<svg class=\"plot\" viewBox=\"0 0 %.0f %.0f\" "
               "width=\"%.0f\" height=\"%.0f\" role=\"img\" data-kind=\"",
            W, H, W, H);
    yb_svg_escape(f, kind);
    fprintf(f, "\" data-x-axis=\"linear\" data-x-min=\"0\" data-x-max=\"%.12g\" "
               "data-area=\"%.2f %.2f %.2f %.2f\">\n<title>",
            hi, x0, top, x0 + pw, y1);
    yb_svg_escape(f, title);
    fprintf(f, "</title>\n<text class=\"title\" x=\"%d\" y=\"20\">", M_LEFT);
    yb_svg_escape(f, title);
    fprintf(f, "</text>\n");
    legend(f, segments, n_seg, x0, pw, M_TOP + 8, 1);
    fprintf(f, "<g class=\"grid\">\n");
    for (size_t i = 0; i < nt; i++) {
        double x = x0 + t[i] / hi * pw;
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>", x, top - 4, x, y1);
        fprintf(f, "<text class=\"xtick\" x=\"%.2f\" y=\"%.2f\">%s</text>\n", x, y1 + 16,
                yb_svg_fmt_tick(t[i], step, b, sizeof b));
    }
    fprintf(f, "</g>\n<text class=\"xlabel\" x=\"%.2f\" y=\"%.2f\">", x0 + pw / 2, y1 + 38);
    yb_svg_escape(f, xlabel);
    fprintf(f, "</text>\n");
    for (size_t r = 0; r < n_rows; r++) {
        double y = top + (double)r * (BAR_H + GAP), x = x0, sum = 0;
        fprintf(f, "<g class=\"bar\" data-name=\"");
        yb_svg_escape(f, labels[r]);
        fprintf(f, "\"><text class=\"barlabel\" x=\"%.2f\" y=\"%.2f\">", x0 - 8, y + BAR_H - 6);
        escape_cut(f, labels[r], MAX_LABEL);
        fprintf(f, "<title>");
        yb_svg_escape(f, labels[r]);
        fprintf(f, "</title></text>\n");
        for (size_t c = 0; c < n_seg; c++) {
            double v = values[r * n_seg + c];
            double w = isfinite(v) && v > 0 ? v / hi * pw : 0;
            fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
                       "data-name=\"",
                    x, y, w, BAR_H, yb_svg_colour(c));
            yb_svg_escape(f, segments[c]);
            fprintf(f, "\" data-value=\"%.12g\"><title>", v);
            yb_svg_escape(f, segments[c]);
            fprintf(f, ": %.3f</title></rect>\n", v);
            x += w;
            sum += w > 0 ? v : 0;
        }
        fprintf(f, "<text class=\"barvalue\" x=\"%.2f\" y=\"%.2f\">%s</text></g>\n", x + 4,
                y + BAR_H - 6, yb_svg_fmt_tick(sum, sum >= 10 ? 0.1 : 0.001, b, sizeof b));
    }
    fprintf(f, "</svg>\n");
    return ferror(f) ? -1 : 0;
}
