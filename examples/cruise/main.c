/*
 * main.c - cruise: a cruise-control controller driven by an event script.
 *
 * usage: cruise [-q] [SCRIPT|-]
 *
 * Reads the script (stdin if absent or "-"), prints one line per state
 * transition and per throttle command, and a summary at the end.
 * Exit status: 0 on success, 2 on a malformed script or unreadable file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cruise.h"

int main(int argc, char **argv)
{
    controller c;
    event ev;
    FILE *in = stdin;
    const char *path = NULL;
    char *buf = NULL;
    size_t len;
    int i, rc = 0;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-q") == 0) {
            g_quiet = 1;
        } else if ((argv[i][0] == '-' && argv[i][1] != '\0') || path != NULL) {
            fputs("usage: cruise [-q] [SCRIPT|-]\n", stderr);
            return 2;
        } else {
            path = argv[i];
        }
    }

    if (path != NULL && strcmp(path, "-") != 0) {
        in = fopen(path, "r");
        if (in == NULL) {
            perror(path);
            rc = 2;
            goto out;
        }
    }
    buf = malloc(MAX_LINE + 2);
    if (buf == NULL) {
        fputs("cruise: out of memory\n", stderr);
        rc = 2;
        goto out;
    }

    ctl_init(&c);
    while (!c.stopped && fgets(buf, MAX_LINE + 2, in) != NULL) {
        g_line++;
        len = strlen(buf);
        if (len > MAX_LINE && buf[len - 1] != '\n')
            die("line longer than %d characters", MAX_LINE);
        if (parse_line(buf, &ev) == 0)
            continue;
        dispatch(&c, &ev);
    }
    if (ferror(in)) {
        perror(path != NULL ? path : "stdin");
        rc = 2;
        goto out;
    }
    report_summary(&c);

out:
    free(buf);
    if (in != NULL && in != stdin)
        fclose(in);
    return rc;
}
