/*
 * sched - a priority process scheduler simulation.
 *
 * usage: sched [-v] [-a AGE] [-q QUANTUM] [N1 [N2 [N3 [N4]]]]
 *   N1..N4       processes created at start with priority 1..4 (4 is highest)
 *   -a AGE       a ready process that waited AGE ticks moves up one priority
 *   -q QUANTUM   the running process is preempted after QUANTUM ticks
 *   -v           report every change of the running process
 *
 * Reads commands from stdin, one per line ('#' starts a comment):
 *   new PRIO [NAME]   create a ready process
 *   block             the running process waits for an event
 *   unblock N         the N-th blocked process (1 = oldest) becomes ready
 *   quantum           the running process goes to the back of its queue
 *   upgrade PRIO N    the N-th process of queue PRIO moves one priority up
 *   kill NAME         remove a process, ready or blocked
 *   finish            the running process terminates
 *   flush             all ready processes terminate, in scheduling order
 *   tick [N]          time passes: N ticks (default 1)
 *   status            print the queues
 * The running process is the first of the highest non-empty ready queue.
 * Prints each process as it finishes and, at the end, the finishing order.
 * Errors in a command are reported and the command is skipped.
 * All output goes to stdout.  Exit status 0, or 2 for a usage error.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_PRIO     4
#define MAX_PROCS  32
#define MAX_NAME   11
#define MAX_LINE   100
#define MAX_TICKS  10000
#define BLANKS     " \t\r\n"

enum pstate { READY, BLOCKED, DONE };

struct process {
    char name[16];  /* user names have at most MAX_NAME characters */
    int prio;
    enum pstate state;
    int ran;       /* ticks spent running */
    int waited;    /* ticks spent ready but not running */
    int age;       /* ticks waited since the last promotion */
    int slice;     /* ticks run since last scheduled */
};

struct queue {
    int n;
    int ids[MAX_PROCS];
};

static struct process procs[MAX_PROCS];
static int n_procs;
static struct queue ready[N_PRIO + 1];  /* index 1..N_PRIO */
static struct queue blocked;
static int finished[MAX_PROCS];
static int n_finished;

static int opt_verbose, opt_age, opt_quantum;
static int line_no;
static int last_running = -1;
static long now;

static void error(const char *msg, const char *arg)
{
    printf("error: line %d: %s%s%s\n", line_no, msg, arg ? " " : "",
           arg ? arg : "");
}

static void push(struct queue *q, int id)
{
    q->ids[q->n++] = id;
}

static int remove_at(struct queue *q, int i)
{
    int id = q->ids[i];

    memmove(q->ids + i, q->ids + i + 1, (size_t)(q->n - i - 1) * sizeof(int));
    q->n--;
    return id;
}

/* Position of id in q, which must hold it. */
static int find(const struct queue *q, int id)
{
    int i = 0;

    while (q->ids[i] != id)
        i++;
    return i;
}

/* The running process, or -1 if no process is ready. */
static int running(void)
{
    int p;

    for (p = N_PRIO; p >= 1; p--)
        if (ready[p].n > 0)
            return ready[p].ids[0];
    return -1;
}

/* Parse a whole decimal number in lo..hi; -1 (after an error) otherwise. */
static int number(const char *word, int lo, int hi, const char *what)
{
    char *end;
    long v;

    if (word == NULL) {
        error("missing", what);
        return -1;
    }
    errno = 0;
    v = strtol(word, &end, 10);
    if (end == word || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
        printf("error: line %d: bad %s '%s' (want %d..%d)\n", line_no, what,
               word, lo, hi);
        return -1;
    }
    return (int)v;
}

static int create(int prio, const char *name)
{
    struct process *pr;
    int i;

    if (n_procs == MAX_PROCS) {
        error("process table full", NULL);
        return -1;
    }
    if (name != NULL) {
        if (strlen(name) > MAX_NAME) {
            error("name too long:", name);
            return -1;
        }
        for (i = 0; i < n_procs; i++) {
            if (strcmp(procs[i].name, name) == 0) {
                error("duplicate name", name);
                return -1;
            }
        }
    }
    pr = &procs[n_procs];
    memset(pr, 0, sizeof *pr);
    if (name != NULL)
        strcpy(pr->name, name);
    else
        snprintf(pr->name, sizeof pr->name, "P%d", n_procs + 1);
    pr->prio = prio;
    pr->state = READY;
    push(&ready[prio], n_procs);
    return n_procs++;
}

static void finish(int id)
{
    struct process *pr = &procs[id];

    pr->state = DONE;
    finished[n_finished++] = id;
    printf("finish %s (prio %d, ran %d, waited %d)\n", pr->name, pr->prio,
           pr->ran, pr->waited);
}

/* Move a ready process to the back of queue prio. */
static void requeue(int id, int prio)
{
    struct queue *from = &ready[procs[id].prio];

    remove_at(from, find(from, id));
    procs[id].prio = prio;
    procs[id].age = 0;
    push(&ready[prio], id);
}

static void tick(void)
{
    int cur = running(), p, i, id;

    now++;
    for (p = 1; p <= N_PRIO; p++) {
        for (i = 0; i < ready[p].n; i++) {
            id = ready[p].ids[i];
            if (id == cur) {
                procs[id].ran++;
                procs[id].slice++;
            } else {
                procs[id].waited++;
                procs[id].age++;
            }
        }
    }
    /* Aging: scan from the top so a promoted process is not promoted twice. */
    for (p = N_PRIO - 1; opt_age > 0 && p >= 1; p--) {
        for (i = 0; i < ready[p].n; i++) {
            id = ready[p].ids[i];
            if (procs[id].age < opt_age)
                continue;
            requeue(id, p + 1);
            i--;
            if (opt_verbose)
                printf("  %ld: %s aged to prio %d\n", now, procs[id].name,
                       p + 1);
        }
    }
    if (cur >= 0 && opt_quantum > 0 && procs[cur].slice >= opt_quantum) {
        procs[cur].slice = 0;
        requeue(cur, procs[cur].prio);
        if (opt_verbose)
            printf("  %ld: %s quantum expired\n", now, procs[cur].name);
    }
}

static void print_queue(const char *label, const struct queue *q)
{
    int i;

    printf("  %s:", label);
    if (q->n == 0)
        printf(" (empty)");
    for (i = 0; i < q->n; i++)
        printf(" %s", procs[q->ids[i]].name);
    putchar('\n');
}

static void status(void)
{
    char label[16];
    int p;

    printf("status at tick %ld, running %s\n", now,
           running() >= 0 ? procs[running()].name : "nothing");
    for (p = N_PRIO; p >= 1; p--) {
        sprintf(label, "prio %d", p);
        print_queue(label, &ready[p]);
    }
    print_queue("blocked", &blocked);
}

/* Run one command line, already split into words. */
static void command(char **w, int n)
{
    int cur = running(), prio, k, id, i;

    if (strcmp(w[0], "new") == 0) {
        prio = number(n > 1 ? w[1] : NULL, 1, N_PRIO, "priority");
        if (prio < 0)
            return;
        if (n > 3) {
            error("too many words", NULL);
            return;
        }
        create(prio, n > 2 ? w[2] : NULL);
    } else if (strcmp(w[0], "block") == 0 || strcmp(w[0], "quantum") == 0
               || strcmp(w[0], "finish") == 0) {
        if (cur < 0) {
            error("no process is running for", w[0]);
        } else if (w[0][0] == 'b') {
            remove_at(&ready[procs[cur].prio], 0);
            procs[cur].state = BLOCKED;
            procs[cur].slice = 0;
            push(&blocked, cur);
        } else if (w[0][0] == 'q') {
            procs[cur].slice = 0;
            requeue(cur, procs[cur].prio);
        } else {
            remove_at(&ready[procs[cur].prio], 0);
            finish(cur);
        }
    } else if (strcmp(w[0], "unblock") == 0) {
        if (blocked.n == 0) {
            error("nothing is blocked", NULL);
            return;
        }
        k = number(n > 1 ? w[1] : NULL, 1, blocked.n, "blocked index");
        if (k < 0)
            return;
        id = remove_at(&blocked, k - 1);
        procs[id].state = READY;
        procs[id].age = 0;
        push(&ready[procs[id].prio], id);
    } else if (strcmp(w[0], "upgrade") == 0) {
        prio = number(n > 1 ? w[1] : NULL, 1, N_PRIO - 1, "priority");
        if (prio < 0)
            return;
        if (ready[prio].n == 0) {
            printf("error: line %d: queue %d is empty\n", line_no, prio);
            return;
        }
        k = number(n > 2 ? w[2] : NULL, 1, ready[prio].n, "queue index");
        if (k >= 0)
            requeue(ready[prio].ids[k - 1], prio + 1);
    } else if (strcmp(w[0], "kill") == 0) {
        for (id = 0; n > 1 && id < n_procs; id++)
            if (strcmp(procs[id].name, w[1]) == 0)
                break;
        if (n < 2 || id == n_procs || procs[id].state == DONE) {
            error("no such process", n > 1 ? w[1] : NULL);
            return;
        }
        if (procs[id].state == BLOCKED)
            remove_at(&blocked, find(&blocked, id));
        else
            remove_at(&ready[procs[id].prio], find(&ready[procs[id].prio], id));
        procs[id].state = DONE;
        printf("kill %s\n", procs[id].name);
    } else if (strcmp(w[0], "flush") == 0) {
        while ((cur = running()) >= 0) {
            remove_at(&ready[procs[cur].prio], 0);
            finish(cur);
        }
    } else if (strcmp(w[0], "tick") == 0) {
        k = n > 1 ? number(w[1], 1, MAX_TICKS, "tick count") : 1;
        for (i = 0; i < k; i++)
            tick();
    } else if (strcmp(w[0], "status") == 0) {
        status();
    } else {
        error("unknown command", w[0]);
    }
}

static int usage(void)
{
    printf("usage: sched [-v] [-a AGE] [-q QUANTUM] [N1 [N2 [N3 [N4]]]]\n");
    return 2;
}

int main(int argc, char **argv)
{
    char buf[MAX_LINE + 2], *w[4], *s;
    int a, n, p = 1, count, i, cur;

    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "-v") == 0) {
            opt_verbose = 1;
        } else if (strcmp(argv[a], "-a") == 0 || strcmp(argv[a], "-q") == 0) {
            if (a + 1 == argc || !isdigit((unsigned char)argv[a + 1][0]))
                return usage();
            *(argv[a][1] == 'a' ? &opt_age : &opt_quantum) = atoi(argv[a + 1]);
            a++;
        } else if (isdigit((unsigned char)argv[a][0]) && p <= N_PRIO) {
            count = atoi(argv[a]);
            for (i = 0; i < count; i++)
                if (create(p, NULL) < 0)
                    return 2;
            p++;
        } else {
            return usage();
        }
    }

    while (fgets(buf, sizeof buf, stdin) != NULL) {
        line_no++;
        if (strchr(buf, '\n') == NULL && !feof(stdin)) {
            error("line too long", NULL);
            while ((a = getchar()) != EOF && a != '\n')
                continue;
            continue;
        }
        if ((s = strchr(buf, '#')) != NULL)
            *s = '\0';
        n = 0;
        for (s = strtok(buf, BLANKS); s != NULL; s = strtok(NULL, BLANKS)) {
            if (n == 4) {
                n = 5;
                break;
            }
            w[n++] = s;
        }
        if (n == 0)
            continue;
        if (n > 4) {
            error("too many words", NULL);
            continue;
        }
        command(w, n);
        cur = running();
        if (opt_verbose && cur != last_running)
            printf("  %ld: running %s\n", now,
                   cur >= 0 ? procs[cur].name : "nothing");
        last_running = cur;
    }

    printf("order:");
    for (i = 0; i < n_finished; i++)
        printf(" %s", procs[finished[i]].name);
    printf("%s\n", n_finished == 0 ? " (none)" : "");
    status();
    return 0;
}
