/* The HTML report: one self-contained page (styles inline, plots as
 * inline SVG drawn by report/svg.c, no script, no external reference)
 * rendered from JSON reports (yangblast-report(5)) -- saved files
 * (`yangblast report`) or the run's own JSON (`run --html`,
 * `experiment --html`).  The JSON is the interface: the renderer reads
 * nothing else, and treats it as untrusted (a key of the wrong type or a
 * negative figure is an error naming the file and the key; every string
 * is escaped). */
#ifndef YB_HTML_H
#define YB_HTML_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* Inputs larger than this are refused before parsing. */
#define YB_HTML_MAX_INPUT (512u << 20)

/* Reads and parses the JSON file path.  Returns a new reference, or NULL
 * with a message naming path (and line and column for a syntax error) in
 * err. */
json_t *yb_html_load(const char *path, char *err, size_t errlen);

/* Writes the page for docs[0..n) (each a yangblast-report/1 object or a
 * yangblast-experiment/1 object holding "runs"; names[i] is where doc i
 * came from, for messages and labels) to f, titled title (NULL: "yangblast
 * report").  Every document is checked before anything is written.
 * Returns 0, or -1 with a message in err ("NAME: KEY: what is wrong" for
 * bad input, or a write error). */
int yb_html_write(FILE *f, json_t *const *docs, const char *const *names, size_t n,
                  const char *title, char *err, size_t errlen);

/* The same written to path through util/outfile (a temporary file renamed
 * into place; "-" is standard output); bad input is found before path is
 * opened.  Returns 0, -1 for bad input or -2 when the page cannot be
 * written, with err. */
int yb_html_report(const char *path, json_t *const *docs, const char *const *names, size_t n,
                   const char *title, char *err, size_t errlen);

#endif
