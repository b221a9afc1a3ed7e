/* Old-style (K&R) definitions in every form the front end must read. */
typedef struct node { int v; struct node *next; } List, *NodePtr;

add(a, b) int a, b; { if (a > b) return a - b; return a + b; }

static skip(n) int n;
{
    while (n > 0)
        n--;
    return n;
}

List *append_ele(a_list, a_ele)
List *a_list;
List *a_ele;
{
    if (!a_list)
        return a_ele;
    a_list->next = a_ele;
    return a_list;
}

NodePtr get(x) int x; { if (x) return 0; return 0; }

static char *name(p) register char *p; { return p ? p : "-"; }

double half(x) float x; { return x / 2; }

unsigned total(v, n) int v[]; unsigned n;
{
    unsigned t = 0;
    while (n--)
        t += v[n];
    return t;
}

main(argc, argv)
int argc;
char **argv;
{
    int r = add(argc, 2);
    r += skip(3);
    if (get(r))
        return 1;
    return r > 3;
}

/* a qualifier first in the parameter declarations (zlib 1.2.13's gz_open) */
int first_const(p, n)
    const char *p;
    int n;
{
    if (n < 0)
        return 0;
    return p[n];
}

int first_volatile(n) volatile int n; { return n + 1; }

int first_atomic(n) _Atomic(int) n; { return n; }
