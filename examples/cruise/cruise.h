/*
 * cruise.h - types shared by the modules of the cruise controller.
 *
 *   parse.c       script lines -> words, numbers
 *   commands.c    command name -> handler (dispatch table)
 *   controller.c  the state machine and the per-gear limit table
 *   throttle.c    PI throttle computation and the vehicle model
 *   report.c      everything written to stdout or stderr
 */
#ifndef CRUISE_H
#define CRUISE_H

#include "config.h"

#ifdef __GNUC__
#define NORETURN __attribute__((noreturn))
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define NORETURN
#define PRINTF_LIKE(f, a)
#endif

typedef enum {
    ST_OFF,       /* main switch off; nothing is remembered */
    ST_STANDBY,   /* switched on, driver in control */
    ST_ACTIVE,    /* controller commands the throttle */
    ST_OVERRIDE,  /* driver accelerates past the controller, which waits */
    ST_FAULT      /* implausible input; only switching off leaves this */
} cc_state;

/* What one gear allows; see gear_table in controller.c. */
typedef struct {
    int min_kmh;       /* speed band the controller may use */
    int max_kmh;
    int max_throttle;  /* ceiling while ACTIVE, percent */
    int torque;        /* pull of the gear in the vehicle model, percent */
} gear_limits;

/* Index gear - GEAR_REVERSE: reverse, neutral, then gears 1..MAX_GEAR. */
extern const gear_limits gear_table[MAX_GEAR + 2];

typedef struct {
    int integral;      /* summed error, tenths of km/h times ticks */
} pi_state;

typedef struct {
    cc_state state;
    int speed_x10;     /* current speed, tenths of km/h */
    int have_speed;    /* a reading has arrived since start */
    int setpoint_kmh;  /* remembered set speed, 0 if none */
    int gear;
    int pedal;         /* driver accelerator, percent */
    int brake_hold;    /* ticks left in which engaging is refused */
    int override_ticks;
    int grade;         /* road grade for the vehicle model, percent */
    int sim;           /* vehicle model moves the speed on each tick */
    int throttle;      /* last throttle command, percent */
    int stopped;       /* the script said "end" */
    pi_state pi;

    /* statistics for the summary */
    long events, ticks, active_ticks, transitions, throttle_sum;
    int throttle_max, saturated, warnings;
} controller;

/* One script line split into words; argv[0] is the lower-cased command. */
typedef struct {
    int argc;
    char *argv[MAX_WORDS];
} event;

/* report.c */
extern int g_line;
extern int g_quiet;
void die(const char *fmt, ...) NORETURN PRINTF_LIKE(1, 2);
void warn(controller *c, const char *fmt, ...) PRINTF_LIKE(2, 3);
void note(const char *fmt, ...) PRINTF_LIKE(1, 2);
const char *state_name(cc_state s);
void report_transition(cc_state from, cc_state to, const char *why);
void report_throttle(const controller *c, int saturated);
void report_status(const controller *c);
void report_summary(const controller *c);

/* parse.c */
int parse_line(char *line, event *ev);
int parse_int(const char *word, int lo, int hi, const char *what);
int parse_tenths(const char *word, int max_whole, const char *what);
int parse_gear(const char *word);
int parse_switch(const char *word, const char *what);

/* commands.c */
void dispatch(controller *c, const event *ev);

/* controller.c */
const gear_limits *limits_for_gear(int gear);
void ctl_init(controller *c);
void ctl_power(controller *c, int on);
void ctl_speed(controller *c, int speed_x10);
void ctl_set(controller *c);
void ctl_resume(controller *c);
void ctl_cancel(controller *c);
void ctl_brake(controller *c);
void ctl_pedal(controller *c, int percent);
void ctl_gear(controller *c, int gear);
void ctl_adjust(controller *c, int delta_kmh);
void ctl_tick(controller *c);

/* throttle.c */
int throttle_step(pi_state *pi, int set_x10, int speed_x10, int ceiling,
                  int *saturated);
int vehicle_step(int speed_x10, int drive, int torque, int grade, int braking);

#endif /* CRUISE_H */
