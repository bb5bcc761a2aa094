/*
 * report_page: the HTML pages' frame.  See report_page.h.
 */
#include "analyzer/report/report_page.h"

#include <stdlib.h>

#include "analyzer/escape.h"

extern const char report_css[], report_js[]; /* generated: scripts/embed.sh */

void report_page_head(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n<title>",
          f);
    escape_html(f, title);
    fprintf(f, "</title>\n<style>%s</style></head><body>\n<h1>", report_css);
    escape_html(f, title);
    fputs("</h1>\n", f);
}

void report_page_tail(FILE *f)
{
    fprintf(f, "<script>%s</script>\n</body></html>\n", report_js);
}

void report_page_data(FILE *f, const char *id, const json_t *data)
{
    /* '<', '>' and '&' (in strings only: JSON has them nowhere else) as
     * \u escapes: no "</script>", "<!--" nor markup of the trace's can
     * appear in the page, even as inert text of a data block */
    char *s = json_dumps(data, JSON_COMPACT | JSON_REAL_PRECISION(6));
    fprintf(f, "<script type=\"application/json\" id=\"%s\">", id);
    for (const char *c = s ? s : "null"; *c; c++) {
        if (*c == '<')
            fputs("\\u003c", f);
        else if (*c == '>')
            fputs("\\u003e", f);
        else if (*c == '&')
            fputs("\\u0026", f);
        else
            fputc(*c, f);
    }
    fputs("</script>\n", f);
    free(s);
}
