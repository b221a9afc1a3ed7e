/*
 * config.h - limits and tuning constants of the cruise controller.
 *
 * Speeds are kept in tenths of km/h inside the program ("x10" values) so
 * that sensor readings such as "52.5" need no floating point.
 */
#ifndef CRUISE_CONFIG_H
#define CRUISE_CONFIG_H

/* Script syntax */
#define MAX_LINE             128  /* longest script line, newline excluded */
#define MAX_WORDS            4    /* command word plus at most three more */

/* Vehicle and driver limits */
#define MAX_SPEED_KMH        300  /* largest sensor reading */
#define MIN_ENGAGE_KMH       30   /* the controller holds no lower speed */
#define MAX_ENGAGE_KMH       180  /* ... nor a higher one */
#define MIN_GEAR             3    /* lowest gear the controller may drive in */
#define MAX_GEAR             6
#define GEAR_NEUTRAL         0
#define GEAR_REVERSE         (-1)
#define MAX_GRADE            15   /* road grade, percent, either sign */

/* Controller behaviour */
#define SET_STEP_KMH         2    /* one "inc" or "dec" press */
#define MAX_ADJUST_STEPS     20
#define MAX_SPEED_JUMP_KMH   25   /* larger jumps: bad sensor */
#define REVERSE_MAX_KMH      5    /* reverse above this speed is a fault */
#define BRAKE_HOLD_TICKS     3    /* ticks without engaging after brake */
#define OVERRIDE_MAX_TICKS   20   /* longer overrides cancel */
#define PEDAL_DEADBAND       5    /* pedal <= this: released */
#define MAX_TICKS_PER_EVENT  1000

/* PI throttle: anti-windup clamp, tenths of km/h times ticks */
#define INTEGRAL_LIMIT       4000

#define KMH_X10(kmh)         ((kmh) * 10)
#define CLAMP(v, lo, hi)     ((v) < (lo) ? (lo) : (v) > (hi) ? (hi) : (v))

#endif /* CRUISE_CONFIG_H */
