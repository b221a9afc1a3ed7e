/*
 * knr - a list calculator in old-style (K&R) C.
 *
 * Reads commands from FILE (default: standard input), one per line, and
 * applies each to a list of integers:
 *
 *	push V...	put V...	pop [N]		clear
 *	print		len		sum		avg
 *	max		min		rev		sort [desc]
 *	uniq		take N		drop N		mirror
 *	map add|mul|mod|neg|abs [K]
 *	filter lt|gt|eq|ne|odd|even [K]
 *
 * `#` starts a comment.  Values are clamped to [-LIMIT, LIMIT] (option
 * -l LIMIT, default 1000000); the list holds at most 64 values.  -v echoes
 * each command, -q leaves out the summary.  Every message goes to standard
 * output; the exit status is 1 when a command failed, 2 on a usage error.
 *
 * Every function is defined the old way, with its parameters declared
 * between the declarator and the body, and most rely on implicit int.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>

#define MAXLINE	120
#define MAXLEN	64
#define MAXVAL	1000000L
#define MAXWORD	16

typedef struct list {
	long	val;
	struct list *next;
} List;

static int verbose, quiet, lineno, errors;
static long limit = MAXVAL;
static char line[MAXLINE + 2];
static char *cp;

static List *cons();
static List *reverse();
static List *append();
static int length();

add(a, b)
	int a, b;
{
	return a + b;
}

static long
clamp(v)
	long v;
{
	if (v > limit)
		return limit;
	if (v < -limit)
		return -limit;
	return v;
}

static
error(msg, arg)
	char *msg, *arg;
{
	errors = add(errors, 1);
	printf("line %d: %s", lineno, msg);
	if (arg != NULL && *arg != '\0')
		printf(" '%s'", arg);
	printf("\n");
	return 0;
}

/* Skips blanks (at most n of them when n > 0); returns how many. */
static
skip(n)
	int n;
{
	register int k = 0;

	while (*cp == ' ' || *cp == '\t' || *cp == '\r') {
		if (n > 0 && k >= n)
			break;
		cp++;
		k++;
	}
	return k;
}

/* The next word of the line, or NULL at its end or at a comment. */
static char *
word(buf)
	char *buf;
{
	int n = 0;

	skip(0);
	while (*cp != '\0' && *cp != '\n' && *cp != '#' && !isspace((unsigned char) *cp)) {
		if (n < MAXWORD - 1)
			buf[n++] = *cp;
		cp++;
	}
	buf[n] = '\0';
	return n > 0 ? buf : NULL;
}

/* Parses a decimal or 0x hexadecimal number; 0 when s is not one. */
static
number(s, vp)
	char *s;
	long *vp;
{
	long v = 0;
	int neg = 0, digits = 0, base = 10, d;

	if (*s == '-' || *s == '+') {
		neg = *s == '-';
		s++;
	}
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (; *s != '\0'; s++) {
		if (isdigit((unsigned char) *s))
			d = *s - '0';
		else if (base == 16 && isxdigit((unsigned char) *s))
			d = tolower((unsigned char) *s) - 'a' + 10;
		else
			return 0;
		if (v > 100 * MAXVAL)
			return 0;
		v = v * base + d;
		digits++;
	}
	if (digits == 0)
		return 0;
	*vp = clamp(neg ? -v : v);
	return 1;
}

static List *
cons(v, next)
	long v;
	List *next;
{
	List *p;

	p = (List *) malloc(sizeof(List));
	if (p == NULL) {
		printf("out of memory\n");
		exit(3);
	}
	p->val = v;
	p->next = next;
	return p;
}

static List *
append(a, v)
	List *a;
	long v;
{
	List *p;

	if (a == NULL)
		return cons(v, (List *) NULL);
	for (p = a; p->next != NULL; p = p->next)
		;
	p->next = cons(v, (List *) NULL);
	return a;
}

static List *
reverse(a)
	List *a;
{
	List *r = NULL, *n;

	while (a != NULL) {
		n = a->next;
		a->next = r;
		r = a;
		a = n;
	}
	return r;
}

static int
length(a)
	List *a;
{
	int n = 0;

	for (; a != NULL; a = a->next)
		n++;
	return n;
}

static
freelist(a)
	List *a;
{
	List *n;

	while (a != NULL) {
		n = a->next;
		free((char *) a);
		a = n;
	}
	return 0;
}

/* Insertion sort, stable; descending when desc. */
static List *
sort(a, desc)
	List *a;
	int desc;
{
	List *out = NULL, *n, **pp;

	while (a != NULL) {
		n = a->next;
		for (pp = &out; *pp != NULL; pp = &(*pp)->next)
			if (desc ? (*pp)->val < a->val : (*pp)->val > a->val)
				break;
		a->next = *pp;
		*pp = a;
		a = n;
	}
	return out;
}

/* Drops adjacent repeats. */
static List *
uniq(a)
	List *a;
{
	List *p, *n;

	for (p = a; p != NULL && p->next != NULL;) {
		if (p->val == p->next->val) {
			n = p->next;
			p->next = n->next;
			free((char *) n);
		} else
			p = p->next;
	}
	return a;
}

/* The first n values (take) or all but them (drop). */
static List *
cut(a, n, keep_head)
	List *a;
	int n, keep_head;
{
	List *p, *rest;

	if (n <= 0) {
		if (keep_head) {
			freelist(a);
			return NULL;
		}
		return a;
	}
	for (p = a; p != NULL && n > 1; p = p->next)
		n--;
	if (p == NULL)
		return keep_head ? a : (freelist(a), (List *) NULL);
	rest = p->next;
	p->next = NULL;
	if (keep_head) {
		freelist(rest);
		return a;
	}
	freelist(a);
	return rest;
}

static long
apply(op, v, k)
	int op;
	long v, k;
{
	switch (op) {
	case 'a':
		return clamp(v + k);
	case 'm':
		return clamp(v * k);
	case '%':
		return v % k;
	case 'n':
		return -v;
	case '|':
		return v < 0 ? -v : v;
	}
	return v;
}

static
keep(op, v, k)
	int op;
	long v, k;
{
	switch (op) {
	case '<':
		return v < k;
	case '>':
		return v > k;
	case '=':
		return v == k;
	case '!':
		return v != k;
	case 'o':
		return v % 2 != 0;
	case 'e':
		return v % 2 == 0;
	}
	return 1;
}

static List *
filter(a, op, k)
	List *a;
	int op;
	long k;
{
	List *out = NULL, *n;

	while (a != NULL) {
		n = a->next;
		if (keep(op, a->val, k)) {
			a->next = out;
			out = a;
		} else
			free((char *) a);
		a = n;
	}
	return reverse(out);
}

static
print(a)
	List *a;
{
	if (a == NULL) {
		printf("empty\n");
		return 0;
	}
	printf("[");
	for (; a != NULL; a = a->next)
		printf(a->next != NULL ? "%ld " : "%ld", a->val);
	printf("]\n");
	return 0;
}

/* Folds the list with '+', '>' (max) or '<' (min). */
static long
fold(a, op)
	List *a;
	int op;
{
	long r = a->val;

	for (a = a->next; a != NULL; a = a->next)
		if (op == '+')
			r += a->val;
		else if (op == '>' ? a->val > r : a->val < r)
			r = a->val;
	return r;
}

/* The operator letter of a map or filter word, or 0. */
static
opcode(w, filtering)
	char *w;
	int filtering;
{
	static char *maps[] = { "add", "mul", "mod", "neg", "abs", NULL };
	static char *filters[] = { "lt", "gt", "eq", "ne", "odd", "even", NULL };
	static char mapc[] = "am%n|";
	static char filterc[] = "<>=!oe";
	char **t = filtering ? filters : maps;
	int i;

	for (i = 0; t[i] != NULL; i++)
		if (strcmp(t[i], w) == 0)
			return filtering ? filterc[i] : mapc[i];
	return 0;
}

/* An optional count argument (default 1); -1 when it is not a count. */
static
count(w)
	char *w;
{
	long v;

	if (w == NULL)
		return 1;
	if (!number(w, &v) || v < 0 || v > MAXLEN)
		return -1;
	return (int) v;
}

static List *
command(a)
	List *a;
{
	char cmd[MAXWORD], arg[MAXWORD], num[MAXWORD], *w;
	long v;
	int n, op;

	cp = line;
	if (word(cmd) == NULL)
		return a;
	if (verbose)
		printf("> %s\n", cmd);
	if (strcmp(cmd, "push") == 0 || strcmp(cmd, "put") == 0) {
		while ((w = word(arg)) != NULL) {
			if (!number(w, &v))
				error("not a number", w);
			else if (length(a) >= MAXLEN) {
				error("list full", w);
				break;
			} else if (cmd[1] == 'u' && cmd[2] == 's')
				a = cons(v, a);
			else
				a = append(a, v);
		}
	} else if (strcmp(cmd, "pop") == 0) {
		if ((n = count(word(arg))) < 0)
			error("bad count", arg);
		else if (n > length(a))
			error("not enough values", cmd);
		else
			while (n-- > 0) {
				List *next = a->next;

				free((char *) a);
				a = next;
			}
	} else if (strcmp(cmd, "clear") == 0) {
		freelist(a);
		a = NULL;
	} else if (strcmp(cmd, "print") == 0)
		print(a);
	else if (strcmp(cmd, "len") == 0)
		printf("%d\n", length(a));
	else if (strcmp(cmd, "sum") == 0)
		printf("%ld\n", a == NULL ? 0L : fold(a, '+'));
	else if (strcmp(cmd, "avg") == 0 || strcmp(cmd, "max") == 0 || strcmp(cmd, "min") == 0) {
		if (a == NULL)
			error("empty list", cmd);
		else if (cmd[0] == 'a')
			printf("%ld\n", fold(a, '+') / length(a));
		else
			printf("%ld\n", fold(a, cmd[1] == 'a' ? '>' : '<'));
	} else if (strcmp(cmd, "rev") == 0)
		a = reverse(a);
	else if (strcmp(cmd, "sort") == 0) {
		w = word(arg);
		if (w != NULL && strcmp(w, "desc") != 0)
			error("bad order", w);
		else
			a = sort(a, w != NULL);
	} else if (strcmp(cmd, "uniq") == 0)
		a = uniq(a);
	else if (strcmp(cmd, "take") == 0 || strcmp(cmd, "drop") == 0) {
		if ((w = word(arg)) == NULL || (n = count(w)) < 0)
			error("bad count", w);
		else
			a = cut(a, n, cmd[0] == 't');
	} else if (strcmp(cmd, "mirror") == 0) {
		if (2 * length(a) > MAXLEN)
			error("list full", cmd);
		else {
			List *copy = NULL, *p;

			/* the values in reverse order, after the list */
			for (p = a; p != NULL; p = p->next)
				copy = cons(p->val, copy);
			a = reverse(a);
			while (copy != NULL) {
				p = copy->next;
				copy->next = a;
				a = copy;
				copy = p;
			}
			a = reverse(a);
		}
	} else if (strcmp(cmd, "map") == 0 || strcmp(cmd, "filter") == 0) {
		int filtering = cmd[0] == 'f';

		if ((w = word(arg)) == NULL || (op = opcode(w, filtering)) == 0)
			error(filtering ? "bad filter" : "bad map", w);
		else if ((w = word(num)) == NULL && op != 'n' && op != '|' && op != 'o' && op != 'e')
			error("missing operand", arg);
		else if (w != NULL && !number(w, &v))
			error("not a number", w);
		else if (op == '%' && v == 0)
			error("division by zero", arg);
		else if (filtering)
			a = filter(a, op, w != NULL ? v : 0L);
		else {
			List *p;

			for (p = a; p != NULL; p = p->next)
				p->val = apply(op, p->val, w != NULL ? v : 0L);
		}
	} else
		error("unknown command", cmd);
	if (word(arg) != NULL && strcmp(cmd, "push") != 0 && strcmp(cmd, "put") != 0)
		error("extra words after", cmd);
	return a;
}

static
usage()
{
	printf("usage: knr [-vq] [-l LIMIT] [FILE]\n");
	return 2;
}

main(argc, argv)
	int argc;
	char **argv;
{
	FILE *in = stdin;
	List *list = NULL;
	char *p;
	int i, c;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++)
		for (p = argv[i] + 1; *p != '\0'; p++) {
			if (*p == 'v')
				verbose = 1;
			else if (*p == 'q')
				quiet = 1;
			else if (*p != 'l') {
				printf("knr: unknown option -%c\n", *p);
				return usage();
			} else if (p[1] == '\0' && i + 1 < argc && number(argv[i + 1], &limit) && limit > 0) {
				i++;
				break;
			} else {
				printf("knr: -l needs a positive limit\n");
				return usage();
			}
		}
	if (i < argc && strcmp(argv[i], "-") != 0) {
		in = fopen(argv[i], "r");
		if (in == NULL) {
			printf("knr: cannot open %s\n", argv[i]);
			return 2;
		}
	}
	if (i + 1 < argc)
		return usage();
	while (fgets(line, sizeof line, in) != NULL) {
		lineno++;
		if (strchr(line, '\n') == NULL && !feof(in)) {
			error("line too long", (char *) NULL);
			while ((c = getc(in)) != EOF && c != '\n')
				;
			continue;
		}
		list = command(list);
	}
	if (in != stdin)
		fclose(in);
	if (!quiet)
		printf("%d lines, %d errors, %d values\n", lineno, errors, length(list));
	freelist(list);
	return errors > 0 ? 1 : 0;
}
