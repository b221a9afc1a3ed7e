/*
 * parse.c - the event script syntax.
 *
 * A script line holds one command word and its arguments, separated by
 * blanks; '#' starts a comment that runs to the end of the line.  Malformed
 * arguments are fatal (die), unknown commands are not (see commands.c).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cruise.h"

static int is_blank(int ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

/*
 * Split a line into words in place.  Returns the number of words, 0 for a
 * blank or comment-only line.  The command word is lower-cased so that
 * "SET" and "set" are the same command.
 */
int parse_line(char *s, event *ev)
{
    char *p;

    ev->argc = 0;
    for (;;) {
        while (is_blank((unsigned char)*s))
            s++;
        if (*s == '\0' || *s == '#')
            break;
        if (ev->argc == MAX_WORDS)
            die("too many words (at most %d)", MAX_WORDS);
        ev->argv[ev->argc++] = s;
        while (*s != '\0' && *s != '#' && !is_blank((unsigned char)*s)) {
            if (!isprint((unsigned char)*s))
                die("unexpected character 0x%02x", (unsigned char)*s);
            s++;
        }
        if (*s == '#') {
            *s = '\0';
            break;
        }
        if (*s != '\0')
            *s++ = '\0';
    }
    if (ev->argc > 0)
        for (p = ev->argv[0]; *p != '\0'; p++)
            *p = (char)tolower((unsigned char)*p);
    return ev->argc;
}

/* A signed decimal integer in lo..hi. */
int parse_int(const char *word, int lo, int hi, const char *what)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(word, &end, 10);
    if (end == word || *end != '\0')
        die("%s: '%s' is not a number", what, word);
    if (errno == ERANGE || v < lo || v > hi)
        die("%s: %s is out of range %d..%d", what, word, lo, hi);
    return (int)v;
}

/* A non-negative decimal with at most one fractional digit, in tenths. */
int parse_tenths(const char *word, int max_whole, const char *what)
{
    const char *p = word;
    long x10 = 0;

    if (!isdigit((unsigned char)*p))
        die("%s: '%s' is not a number", what, word);
    do {
        x10 = x10 * 10 + (*p++ - '0');
        if (x10 > max_whole)
            die("%s: %s is out of range 0..%d", what, word, max_whole);
    } while (isdigit((unsigned char)*p));
    x10 *= 10;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            die("%s: '%s' is not a number", what, word);
        x10 += *p++ - '0';
        if (isdigit((unsigned char)*p))
            die("%s: %s has more than one decimal", what, word);
    }
    if (*p != '\0')
        die("%s: '%s' is not a number", what, word);
    if (x10 > KMH_X10(max_whole))
        die("%s: %s is out of range 0..%d", what, word, max_whole);
    return (int)x10;
}

/* A gear: 1..MAX_GEAR, or N (neutral), or R (reverse). */
int parse_gear(const char *word)
{
    if (word[1] == '\0') {
        switch (word[0]) {
        case 'n':
        case 'N':
            return GEAR_NEUTRAL;
        case 'r':
        case 'R':
            return GEAR_REVERSE;
        }
    }
    return parse_int(word, GEAR_NEUTRAL, MAX_GEAR, "gear");
}

/* "on" or "off". */
int parse_switch(const char *word, const char *what)
{
    if (strcmp(word, "on") == 0)
        return 1;
    if (strcmp(word, "off") == 0)
        return 0;
    die("%s: expected on or off, got '%s'", what, word);
}
