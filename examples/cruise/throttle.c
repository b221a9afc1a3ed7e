/*
 * throttle.c - the PI throttle law and a crude vehicle model.
 *
 * All arithmetic is in integers: speeds in tenths of km/h, throttle in
 * percent.  Integer division truncates toward zero (C99), so small errors
 * produce no proportional action and are left to the integral term.
 */
#include "cruise.h"

/*
 * One step of the PI law.  The feed-forward term is the throttle that holds
 * the set speed on a flat road in 4th gear; the proportional gain is 1.5 %
 * per km/h and the integral gain 2.5 % per km/h and 100 ticks.  While the
 * output is pinned at a limit and the error pushes it further, the integral
 * is frozen (conditional integration), so it does not wind up.
 */
int throttle_step(pi_state *pi, int set_x10, int speed_x10, int ceiling,
                  int *saturated)
{
    int err = set_x10 - speed_x10;
    int feed = set_x10 / 20;
    int p = err * 3 / 20;
    int out = feed + p + pi->integral / 40;

    if (!((out >= ceiling && err > 0) || (out <= 0 && err < 0)))
        pi->integral = CLAMP(pi->integral + err, -INTEGRAL_LIMIT,
                             INTEGRAL_LIMIT);
    *saturated = out > ceiling || out < 0;
    return CLAMP(out, 0, ceiling);
}

/*
 * Speed after one tick: the gear's share of the drive force, minus air and
 * rolling drag (proportional to speed), minus the slope, minus the brake.
 */
int vehicle_step(int speed_x10, int drive, int torque, int grade, int braking)
{
    int force = drive * torque / 100 - speed_x10 / 20 - grade * 3;
    int next = speed_x10 + force - (braking ? 30 : 0);

    return CLAMP(next, 0, KMH_X10(MAX_SPEED_KMH));
}
