/*
 * report.c - all output of the cruise controller.
 *
 * Every line about an event starts with the script line number, so that a
 * reader can match the output to the script.  Fatal errors go to stderr.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cruise.h"

int g_line;   /* script line being processed, 0 before the first */
int g_quiet;  /* -q: leave out the per-tick throttle lines */

static const char *const state_names[] = {
    "OFF", "STANDBY", "ACTIVE", "OVERRIDE", "FAULT"
};

/* Format tenths as a decimal, e.g. 525 -> "52.5". */
static const char *tenths(char *buf, size_t size, int x10)
{
    int mag = x10 < 0 ? -x10 : x10;

    snprintf(buf, size, "%s%d.%d", x10 < 0 ? "-" : "", mag / 10, mag % 10);
    return buf;
}

const char *state_name(cc_state s)
{
    return state_names[s];
}

void die(const char *fmt, ...)
{
    va_list ap;

    fflush(stdout);
    fprintf(stderr, "cruise: line %d: ", g_line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

static void line_out(const char *prefix, const char *fmt, va_list ap)
{
    printf("%4d: %s", g_line, prefix);
    vprintf(fmt, ap);
    putchar('\n');
}

void warn(controller *c, const char *fmt, ...)
{
    va_list ap;

    c->warnings++;
    va_start(ap, fmt);
    line_out("warning: ", fmt, ap);
    va_end(ap);
}

void note(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    line_out("", fmt, ap);
    va_end(ap);
}

void report_transition(cc_state from, cc_state to, const char *why)
{
    printf("%4d: %s -> %s (%s)\n", g_line, state_name(from), state_name(to),
           why);
}

void report_throttle(const controller *c, int saturated)
{
    char speed[16];

    if (g_quiet)
        return;
    printf("%4d: tick %ld throttle %d%%%s speed %s set %d\n", g_line, c->ticks,
           c->throttle, saturated ? " (limit)" : "",
           tenths(speed, sizeof speed, c->speed_x10), c->setpoint_kmh);
}

void report_status(const controller *c)
{
    char speed[16];

    note("status %s speed %s set %d gear %d pedal %d brake-hold %d grade %d%s",
         state_name(c->state), tenths(speed, sizeof speed, c->speed_x10),
         c->setpoint_kmh, c->gear, c->pedal, c->brake_hold, c->grade,
         c->sim ? " sim" : "");
}

void report_summary(const controller *c)
{
    char speed[16];
    long mean = c->active_ticks > 0 ? c->throttle_sum / c->active_ticks : 0;

    puts("--- summary ---");
    printf("lines %d, events %ld, warnings %d%s\n", g_line, c->events,
           c->warnings, c->stopped ? ", stopped by end" : "");
    printf("ticks %ld (active %ld), transitions %ld\n", c->ticks,
           c->active_ticks, c->transitions);
    printf("throttle max %d%%, mean %ld%%, at limit %d ticks\n",
           c->throttle_max, mean, c->saturated);
    printf("final %s, speed %s km/h, set %d km/h, gear %d\n",
           state_name(c->state), tenths(speed, sizeof speed, c->speed_x10),
           c->setpoint_kmh, c->gear);
}
