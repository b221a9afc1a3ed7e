// Elevator, AlarmElevator and Alarm of Rothermel, Harrold & Dedhia (003,
// Figs. 1, 2, 10 and 13). -DELEVATOR_V=1 gives go' and which_floor of Fig. 6.
#include <cstdio>
#include <cstdlib>

#ifndef ELEVATOR_V
#define ELEVATOR_V 0
#endif

#define UP 1
#define DOWN 2
#define MAXWEIGHT 1000
#define FIRE 1
#define WEIGHT 2
typedef int Direction;

class Alarm {
public:
    Alarm()
        { alarm_on = 0; }
    void set_alarm()
        { alarm_on = 1; }
    void reset_alarm()
        { alarm_on = 0; }
    int is_alarm_on()
        { return alarm_on; }
    int alarm_type;
protected:
    int alarm_on;
};

class Elevator {
public:
    Elevator(int l_top_floor) {
        current_floor = 1;
        current_direction = UP;
        top_floor = l_top_floor;
        bottom_floor = 1;
    }

    virtual ~Elevator() {}

    void up() {
        current_direction = UP;
    }

    void down() {
        current_direction = DOWN;
    }

    Direction direction() {
        return current_direction;
    }

    virtual void go(int floor) {
        if (!valid_floor(floor)) {
            printf("Invalid floor request\n");
            return;
        }
        if (floor > current_floor) {
            up();
            printf("Elevator is going up\n");
        }
#if ELEVATOR_V == 0
        else if (floor < current_floor) {
            down();
            printf("Elevator is going down\n");
        }
        else
            return;
#else
        else if (floor <= current_floor) {
            down();
            printf("Elevator is going down\n");
        }
        else {
            printf("Elevator is already there\n");
            return;
        }
#endif
        if (direction() == UP) {
            while ((current_floor != floor) &&
                   (current_floor <= top_floor))
                add(current_floor, 1);
        }
        else {
            while ((current_floor != floor) &&
                   (current_floor >= bottom_floor))
                add(current_floor, -1);
        }
    }

#if ELEVATOR_V == 1
    int which_floor() {
        return current_floor;
    }
#endif

private:
    void add(int &a, const int &b) {
        a = a + b;
    }

    int valid_floor(int floor) {
        if ((floor > top_floor) ||
            (floor < bottom_floor))
            return 0;
        return 1;
    };
protected:
    int current_floor;
    Direction current_direction;
    int top_floor;
    int bottom_floor;
};

class AlarmElevator : public Elevator {
public:
    AlarmElevator(int top_floor) : Elevator(top_floor) {
        elevAlarm = new Alarm();
        fire_alarm_on = 0;
    }
    ~AlarmElevator() { delete elevAlarm; }
    void go(int floor) override {
        if (!(fire_alarm_on))
            Elevator::go(floor);
    }
    void check_weight(int weight) {
        if (weight > MAXWEIGHT) {
            elevAlarm->alarm_type = WEIGHT;
            check_alarm(elevAlarm);
        }
    }
    void check_alarm(Alarm *x) {
        if (x->alarm_type == FIRE) {
            x->set_alarm();
            fire_alarm_on = 1;
        }
        else if ((x->alarm_type == WEIGHT)
                && !(fire_alarm_on)) {
            x->set_alarm();
            x->reset_alarm();
        }
        else {
            x->reset_alarm();
            fire_alarm_on = 0;
        }
    }
protected:
    Alarm *elevAlarm;
    int fire_alarm_on;
};

// main of Fig. 13, with the starting floor and the request from the command
// line so that tests t1..t4 of Fig. 4 can be run.
int main(int argc, char **argv) {
    Elevator *eptr;
    if (argc > 3) {
        eptr = new AlarmElevator(10);
    }
    else {
        eptr = new Elevator(10); }
    int start = argc > 1 ? atoi(argv[1]) : 1;
    int floor = argc > 2 ? atoi(argv[2]) : 5;
    if (start > 1) eptr->go(start);
    eptr->go(floor);
    delete eptr;
    return 0;
}
