/* Elevator::go of Rothermel, Harrold & Dedhia (003, Fig. 1), ported to C.
   -DELEVATOR_V=1 gives go' of Fig. 6 (line 40 changed, line 44.1 added). */
#include <stdio.h>

#ifndef ELEVATOR_V
#define ELEVATOR_V 0
#endif

#define UP 1
#define DOWN 2
typedef int Direction;

struct elevator {
    int current_floor;
    Direction current_direction;
    int top_floor;
    int bottom_floor;
};

static void add(int *a, int b) { *a = *a + b; }
static void up(struct elevator *e) { e->current_direction = UP; }
static void down(struct elevator *e) { e->current_direction = DOWN; }

static int valid_floor(struct elevator *e, int floor)
{
    if ((floor > e->top_floor) || (floor < e->bottom_floor))
        return 0;
    return 1;
}

void go(struct elevator *e, int floor)
{
    int valid = valid_floor(e, floor);                  /* 31 */
    (void)valid;
    if (!valid_floor(e, floor)) {                       /* 32 */
        printf("Invalid floor request\n");              /* 33 */
        return;                                         /* 34 */
    }
    if (floor > e->current_floor) {                     /* 36 */
        up(e);                                          /* 37 */
        printf("Elevator is going up\n");               /* 38 */
    }
#if ELEVATOR_V == 0
    else if (floor < e->current_floor) {                /* 40 */
        down(e);                                        /* 41 */
        printf("Elevator is going down\n");             /* 42 */
    }
    else
        return;                                         /* 45 */
#else
    else if (floor <= e->current_floor) {               /* 40' */
        down(e);                                        /* 41 */
        printf("Elevator is going down\n");             /* 42 */
    }
    else {
        printf("Elevator is already there\n");          /* 44.1 */
        return;                                         /* 45 */
    }
#endif
    if (e->current_direction == UP) {                   /* 46 */
        while ((e->current_floor != floor)
               && (e->current_floor <= e->top_floor))   /* 47, 48 */
            add(&e->current_floor, 1);                  /* 49 */
    }
    else {
        while ((e->current_floor != floor)
               && (e->current_floor >= e->bottom_floor)) /* 52, 53 */
            add(&e->current_floor, -1);                 /* 54 */
    }
}
