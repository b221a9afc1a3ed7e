/*
 * controller.c - the cruise control state machine.
 *
 *   OFF --on--> STANDBY --set/resume--> ACTIVE <--pedal released-- OVERRIDE
 *                  ^                      |  \--driver accelerates--^
 *                  +--brake/cancel/gear---+
 *   any state but OFF --implausible input--> FAULT --off--> OFF
 *
 * Every transition is reported by enter(); refusals are reported as notes.
 */
#include <assert.h>
#include <stddef.h>

#include "cruise.h"

/* Per-gear limits, indexed by gear - GEAR_REVERSE. */
const gear_limits gear_table[MAX_GEAR + 2] = {
    /* min  max  throttle torque */
    {   0,   0,   0,     60 },   /* R */
    {   0,   0,   0,      0 },   /* N */
    {   0,  40,  30,    220 },   /* 1 */
    {  10,  70,  45,    160 },   /* 2 */
    {  25, 100,  60,    120 },   /* 3 */
    {  35, 140,  75,    100 },   /* 4 */
    {  45, 180,  85,     85 },   /* 5 */
    {  55, 200,  90,     70 },   /* 6 */
};

const gear_limits *limits_for_gear(int gear)
{
    assert(gear >= GEAR_REVERSE && gear <= MAX_GEAR);
    return &gear_table[gear - GEAR_REVERSE];
}

static int driving(const controller *c)
{
    return c->state == ST_ACTIVE || c->state == ST_OVERRIDE;
}

static void enter(controller *c, cc_state to, const char *why)
{
    cc_state from = c->state;

    c->state = to;
    c->transitions++;
    if (to == ST_ACTIVE)
        c->pi.integral = 0;
    if (to == ST_OVERRIDE)
        c->override_ticks = 0;
    if (to != ST_ACTIVE)
        c->throttle = 0;
    report_transition(from, to, why);
}

/*
 * Why the controller may not take over now, or NULL if it may: it needs a
 * speed it is allowed to hold, a driving gear whose band covers that speed,
 * and no driver input that would override it at once.
 */
static const char *engage_blocker(const controller *c)
{
    int kmh = c->speed_x10 / 10;
    const gear_limits *g = limits_for_gear(c->gear);

    if (kmh >= MIN_ENGAGE_KMH && kmh <= MAX_ENGAGE_KMH && c->gear >= MIN_GEAR
        && !(c->brake_hold > 1 || c->pedal > PEDAL_DEADBAND))
        return kmh < g->min_kmh || kmh > g->max_kmh
            ? "speed outside gear range" : NULL;
    if (c->brake_hold > 0)
        return "brake";
    if (c->pedal > PEDAL_DEADBAND)
        return "accelerator pressed";
    if (c->gear < MIN_GEAR)
        return "gear too low";
    return kmh < MIN_ENGAGE_KMH ? "too slow" : "too fast";
}

void ctl_init(controller *c)
{
    static const controller zero;

    *c = zero;
    c->state = ST_OFF;
    c->gear = GEAR_NEUTRAL;
}

void ctl_power(controller *c, int on)
{
    if (on && c->state == ST_OFF) {
        enter(c, ST_STANDBY, "main switch on");
    } else if (!on && c->state != ST_OFF) {
        c->setpoint_kmh = 0;
        enter(c, ST_OFF, "main switch off");
    }
}

void ctl_speed(controller *c, int speed_x10)
{
    int jump = speed_x10 - c->speed_x10;
    int plausible = !c->have_speed
        || (jump <= KMH_X10(MAX_SPEED_JUMP_KMH)
            && jump >= -KMH_X10(MAX_SPEED_JUMP_KMH));

    c->speed_x10 = speed_x10;
    c->have_speed = 1;
    if (!plausible && c->state != ST_OFF && c->state != ST_FAULT)
        enter(c, ST_FAULT, "implausible speed jump");
}

void ctl_set(controller *c)
{
    int kmh = CLAMP((c->speed_x10 + 5) / 10, MIN_ENGAGE_KMH,
                    MAX_ENGAGE_KMH);
    const char *why;

    switch (c->state) {
    case ST_ACTIVE:
    case ST_OVERRIDE:
        c->setpoint_kmh = kmh;
        note("setpoint %d km/h", c->setpoint_kmh);
        break;
    case ST_STANDBY:
        why = engage_blocker(c);
        if (why != NULL) {
            note("set refused: %s", why);
            break;
        }
        c->setpoint_kmh = kmh;
        enter(c, ST_ACTIVE, "set");
        break;
    case ST_OFF:
    case ST_FAULT:
        note("set ignored in %s", state_name(c->state));
        break;
    }
}

void ctl_resume(controller *c)
{
    const char *why;

    if (c->state != ST_STANDBY) {
        note("resume ignored in %s", state_name(c->state));
        return;
    }
    if (c->setpoint_kmh == 0) {
        note("resume refused: no setpoint stored");
        return;
    }
    why = engage_blocker(c);
    if (why != NULL)
        note("resume refused: %s", why);
    else
        enter(c, ST_ACTIVE, "resume");
}

void ctl_cancel(controller *c)
{
    switch (c->state) {
    case ST_OVERRIDE:
        note("override ended after %d ticks", c->override_ticks);
        /* fall through */
    case ST_ACTIVE:
        enter(c, ST_STANDBY, "cancel");
        break;
    case ST_OFF:
    case ST_STANDBY:
    case ST_FAULT:
        break;
    }
}

void ctl_brake(controller *c)
{
    c->brake_hold = BRAKE_HOLD_TICKS;
    if (driving(c))
        enter(c, ST_STANDBY, "brake");
}

void ctl_pedal(controller *c, int percent)
{
    const char *why;

    c->pedal = percent;
    if (c->state == ST_ACTIVE && percent > PEDAL_DEADBAND
        && percent > c->throttle) {
        enter(c, ST_OVERRIDE, "driver accelerates");
    } else if (c->state == ST_OVERRIDE && percent <= PEDAL_DEADBAND) {
        why = engage_blocker(c);
        enter(c, why == NULL ? ST_ACTIVE : ST_STANDBY,
              why == NULL ? "accelerator released" : why);
    }
}

void ctl_gear(controller *c, int gear)
{
    c->gear = gear;
    if (gear == GEAR_REVERSE && c->speed_x10 > KMH_X10(REVERSE_MAX_KMH)
        && !(c->state == ST_OFF || c->state == ST_FAULT))
        enter(c, ST_FAULT, "reverse selected while moving");
    else if (driving(c) && gear < MIN_GEAR)
        enter(c, ST_STANDBY,
              gear == GEAR_NEUTRAL ? "neutral" : "gear too low");
}

void ctl_adjust(controller *c, int delta_kmh)
{
    int wanted = c->setpoint_kmh + delta_kmh;

    if (!driving(c)) {
        note("%s ignored in %s", delta_kmh > 0 ? "inc" : "dec",
             state_name(c->state));
        return;
    }
    c->setpoint_kmh = CLAMP(wanted, MIN_ENGAGE_KMH, MAX_ENGAGE_KMH);
    note("setpoint %d km/h%s", c->setpoint_kmh,
         c->setpoint_kmh != wanted ? " (limited)" : "");
}

/* One control period: run the throttle loop, then move the vehicle model. */
void ctl_tick(controller *c)
{
    const gear_limits *g = limits_for_gear(c->gear);
    int kmh = c->speed_x10 / 10;
    int saturated;

    c->ticks++;
    if (c->brake_hold > 0)
        c->brake_hold--;
    switch (c->state) {
    case ST_ACTIVE:
        if (kmh < g->min_kmh || kmh > g->max_kmh) {
            enter(c, ST_STANDBY, "speed outside gear range");
            break;
        }
        c->throttle = throttle_step(&c->pi, KMH_X10(c->setpoint_kmh),
                                    c->speed_x10, g->max_throttle, &saturated);
        c->active_ticks++;
        c->throttle_sum += c->throttle;
        if (c->throttle > c->throttle_max)
            c->throttle_max = c->throttle;
        if (saturated)
            c->saturated++;
        report_throttle(c, saturated);
        break;
    case ST_OVERRIDE:
        if (++c->override_ticks > OVERRIDE_MAX_TICKS)
            enter(c, ST_STANDBY, "override too long");
        break;
    case ST_OFF:
    case ST_STANDBY:
    case ST_FAULT:
        break;
    }
    if (c->sim)
        c->speed_x10 = vehicle_step(
            c->speed_x10, c->state == ST_ACTIVE ? c->throttle : c->pedal,
            g->torque, c->grade, c->brake_hold > 0);
}
