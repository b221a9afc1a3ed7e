/*
 * commands.c - the command language: each command's name, how many
 * arguments it takes, and what it runs (see the table at the end).
 */
#include <string.h>

#include "cruise.h"

typedef void (*handler)(controller *c, const event *ev);

/* A command runs either a plain controller operation or a handler that
   converts the arguments first. */
struct command {
    const char *name;
    int min_args;
    int max_args;
    void (*op)(controller *c);
    handler run;
};

static void cmd_power(controller *c, const event *ev)
{
    ctl_power(c, strcmp(ev->argv[0], "on") == 0);
}

static void cmd_speed(controller *c, const event *ev)
{
    ctl_speed(c, parse_tenths(ev->argv[1], MAX_SPEED_KMH, "speed"));
}

static void cmd_accel(controller *c, const event *ev)
{
    ctl_pedal(c, parse_int(ev->argv[1], 0, 100, "accel"));
}

static void cmd_gear(controller *c, const event *ev)
{
    ctl_gear(c, parse_gear(ev->argv[1]));
}

static void cmd_tick(controller *c, const event *ev)
{
    int n = ev->argc > 1
        ? parse_int(ev->argv[1], 1, MAX_TICKS_PER_EVENT, "tick") : 1;

    while (n-- > 0)
        ctl_tick(c);
}

/* inc and dec take an optional number of presses. */
static void cmd_adjust(controller *c, const event *ev)
{
    int presses = ev->argc > 1
        ? parse_int(ev->argv[1], 1, MAX_ADJUST_STEPS, ev->argv[0]) : 1;

    ctl_adjust(c, (ev->argv[0][0] == 'i' ? 1 : -1) * presses * SET_STEP_KMH);
}

static void cmd_sim(controller *c, const event *ev)
{
    c->sim = parse_switch(ev->argv[1], "sim");
}

static void cmd_grade(controller *c, const event *ev)
{
    c->grade = parse_int(ev->argv[1], -MAX_GRADE, MAX_GRADE, "grade");
}

static void cmd_status(controller *c, const event *ev)
{
    (void)ev;
    report_status(c);
}

static void cmd_end(controller *c, const event *ev)
{
    (void)ev;
    c->stopped = 1;
}

static const struct command commands[] = {
    { "on",     0, 0, NULL,       cmd_power },
    { "off",    0, 0, NULL,       cmd_power },
    { "speed",  1, 1, NULL,       cmd_speed },
    { "set",    0, 0, ctl_set,    NULL },
    { "resume", 0, 0, ctl_resume, NULL },
    { "cancel", 0, 0, ctl_cancel, NULL },
    { "brake",  0, 0, ctl_brake,  NULL },
    { "accel",  1, 1, NULL,       cmd_accel },
    { "gear",   1, 1, NULL,       cmd_gear },
    { "tick",   0, 1, NULL,       cmd_tick },
    { "inc",    0, 1, NULL,       cmd_adjust },
    { "dec",    0, 1, NULL,       cmd_adjust },
    { "sim",    1, 1, NULL,       cmd_sim },
    { "grade",  1, 1, NULL,       cmd_grade },
    { "status", 0, 0, NULL,       cmd_status },
    { "end",    0, 0, NULL,       cmd_end },
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])

/* Run one parsed event.  Unknown commands are reported and skipped. */
void dispatch(controller *c, const event *ev)
{
    const struct command *cmd = NULL;
    size_t i;
    int nargs = ev->argc - 1;

    for (i = 0; i < N_COMMANDS; i++) {
        if (strcmp(commands[i].name, ev->argv[0]) != 0)
            continue;
        cmd = &commands[i];
        break;
    }
    if (cmd == NULL) {
        warn(c, "unknown command '%s' ignored", ev->argv[0]);
        return;
    }
    if (nargs < cmd->min_args)
        die("%s: missing argument", cmd->name);
    if (nargs > cmd->max_args)
        die("%s: too many arguments", cmd->name);
    c->events++;
    if (cmd->op != NULL)
        cmd->op(c);
    else
        cmd->run(c, ev);
}
