/*
 * textsub - substitute a pattern in every line of a text.
 *
 * usage: textsub [-gipnc] [--] PATTERN REPLACEMENT [FILE]
 *   -g  replace every match in a line, not only the first
 *   -i  letters match in either case
 *   -p  print only the lines in which something was replaced
 *   -n  prefix each printed line with its line number
 *   -c  finish with the number of replacements
 *
 * Pattern:  c literal   .  any character   [set] [^set] with ranges a-z
 *           \d \w \s digit, word, blank (\D \W \S: anything else)
 *           \t tab      \c the character c itself
 *           e* e+ e?    repeat the previous item (greedy)
 *           ^ first / $ last in the pattern: anchor at line start / end
 * Replacement:  & the matched text   \& \\ literal & and backslash
 *               \t tab   \n newline   \U \L upper / lower case from here
 *               on, \E back to unchanged
 *
 * Reads FILE (or stdin).  Everything, including error messages, goes to
 * stdout.  Exit status: 0 if something was replaced, 1 if nothing was,
 * 2 for a bad pattern, bad replacement, usage error or too long a line.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ITEMS  64
#define MAX_LINE   1000
#define MAX_OUT    8000
#define UNBOUNDED  MAX_LINE

struct item {
    int any;                   /* '.' */
    int negated;               /* [^...] and \D \W \S */
    unsigned char set[32];     /* the characters matched, one bit each */
    int min, max;              /* repetition */
};

struct pattern {
    struct item items[MAX_ITEMS];
    int n;
    int bol, eol;
};

static int opt_global, opt_icase, opt_print_changed, opt_number, opt_count;

static char out[MAX_OUT + 1];
static int out_len, out_full;
static int case_mode;          /* 0 unchanged, 'U' upper, 'L' lower */

static void add(struct item *it, int c)
{
    it->set[(unsigned char)c / 8] |= (unsigned char)(1 << ((unsigned char)c % 8));
}

static int has(const struct item *it, int c)
{
    return (it->set[(unsigned char)c / 8] >> ((unsigned char)c % 8)) & 1;
}

static void fail(const char *what, const char *detail)
{
    printf("textsub: %s%s\n", what, detail);
    exit(2);
}

/* \d \w \s and their complements; returns 0 if c names no class. */
static int add_class(struct item *it, int c)
{
    int ch;

    if (strchr("dDwWsS", c) == NULL)
        return 0;
    for (ch = 1; ch < 256; ch++) {
        if ((tolower(c) == 'd' && isdigit(ch))
            || (tolower(c) == 'w' && (isalnum(ch) || ch == '_'))
            || (tolower(c) == 's' && (ch == ' ' || ch == '\t')))
            add(it, ch);
    }
    it->negated = isupper(c) != 0;
    return 1;
}

/* Parse a [...] set starting after the '['; returns the position after ']'. */
static const char *parse_set(struct item *it, const char *p)
{
    int lo, hi, first = 1;

    if (*p == '^') {
        it->negated = 1;
        p++;
    }
    while (*p != ']' || first) {
        first = 0;
        if (*p == '\0')
            fail("bad pattern: ", "missing ]");
        lo = (unsigned char)*p++;
        if (lo == '\\') {
            if (*p == '\0')
                fail("bad pattern: ", "missing ]");
            lo = *p == 't' ? '\t' : (unsigned char)*p;
            p++;
        }
        if (p[0] == '-' && p[1] != ']' && p[1] != '\0') {
            hi = (unsigned char)p[1];
            p += 2;
            if (hi < lo)
                fail("bad pattern: ", "range out of order");
            for (; lo <= hi; lo++)
                add(it, lo);
        } else {
            add(it, lo);
        }
    }
    return p + 1;
}

static void compile(struct pattern *pat, const char *p)
{
    struct item *it;
    int c;

    memset(pat, 0, sizeof *pat);
    if (*p == '\0')
        fail("bad pattern: ", "empty");
    if (*p == '^') {
        pat->bol = 1;
        p++;
    }
    while (*p != '\0') {
        c = (unsigned char)*p++;
        if (c == '$' && *p == '\0') {
            pat->eol = 1;
            break;
        }
        if (c == '*' || c == '+' || c == '?') {
            it = pat->n > 0 ? &pat->items[pat->n - 1] : NULL;
            if (it == NULL || it->min != 1 || it->max != 1)
                fail("bad pattern: ", "nothing to repeat");
            it->min = c == '+' ? 1 : 0;
            it->max = c == '?' ? 1 : UNBOUNDED;
            continue;
        }
        if (pat->n == MAX_ITEMS)
            fail("bad pattern: ", "too many items");
        it = &pat->items[pat->n++];
        it->min = it->max = 1;
        if (c == '.') {
            it->any = 1;
        } else if (c == '[') {
            p = parse_set(it, p);
        } else if (c == '\\') {
            if (*p == '\0')
                fail("bad pattern: ", "ends with \\");
            c = (unsigned char)*p++;
            if (!add_class(it, c))
                add(it, c == 't' ? '\t' : c);
        } else {
            add(it, c);
        }
    }
    if (opt_icase) {
        for (it = pat->items; it < pat->items + pat->n; it++) {
            for (c = 'a'; c <= 'z'; c++) {
                if (has(it, c) || has(it, toupper(c))) {
                    add(it, c);
                    add(it, toupper(c));
                }
            }
        }
    }
}

static int item_matches(const struct item *it, int c)
{
    return it->any || has(it, c) != it->negated;
}

/* Match items k.. at s[i]; returns the end of the match or -1. */
static int match_here(const struct pattern *pat, int k, const char *s, int i,
                      int len)
{
    const struct item *it;
    int n = 0, end;

    if (k == pat->n)
        return !pat->eol || i == len ? i : -1;
    it = &pat->items[k];
    while (n < it->max && i + n < len
           && item_matches(it, (unsigned char)s[i + n]))
        n++;
    for (; n >= it->min; n--) {
        end = match_here(pat, k + 1, s, i + n, len);
        if (end >= 0)
            return end;
    }
    return -1;
}

/* Leftmost match starting at or after from: sets *start, returns end. */
static int search(const struct pattern *pat, const char *s, int from, int len,
                  int *start)
{
    int i, end;

    for (i = from; i <= len; i++) {
        if (pat->bol && i > 0)
            return -1;
        end = match_here(pat, 0, s, i, len);
        if (end >= 0) {
            *start = i;
            return end;
        }
    }
    return -1;
}

static void put(int c)
{
    if (case_mode == 'U')
        c = toupper(c);
    else if (case_mode == 'L')
        c = tolower(c);
    if (out_len == MAX_OUT)
        out_full = 1;
    else
        out[out_len++] = (char)c;
}

static void put_text(const char *s, int n)
{
    int saved = case_mode;

    case_mode = 0;
    while (n-- > 0)
        put((unsigned char)*s++);
    case_mode = saved;
}

static void check_replacement(const char *r)
{
    for (; *r != '\0'; r++) {
        if (*r != '\\')
            continue;
        r++;
        if (*r == '\0')
            fail("bad replacement: ", "ends with \\");
        if (isdigit((unsigned char)*r))
            fail("bad replacement: ", "no groups to refer to");
    }
}

static void put_replacement(const char *r, const char *match, int n)
{
    int i;

    case_mode = 0;
    for (; *r != '\0'; r++) {
        if (*r == '&') {
            for (i = 0; i < n; i++)
                put((unsigned char)match[i]);
            continue;
        }
        if (*r != '\\') {
            put((unsigned char)*r);
            continue;
        }
        switch (*++r) {
        case 'U':
        case 'L':
            case_mode = *r;
            break;
        case 'E':
            case_mode = 0;
            break;
        case 't':
            put('\t');
            break;
        case 'n':
            put('\n');
            break;
        default:
            put((unsigned char)*r);
            break;
        }
    }
    case_mode = 0;
}

/* Rewrite one line into out; returns the number of replacements. */
static int substitute(const struct pattern *pat, const char *repl,
                      const char *s, int len)
{
    int from = 0, start, end, last_end = -1, count = 0;

    out_len = 0;
    out_full = 0;
    for (;;) {
        end = search(pat, s, from, len, &start);
        if (end < 0)
            break;
        if (end == start && start == last_end) {
            /* an empty match right after the previous one: move on */
            if (start == len)
                break;
            put_text(s + from, start - from + 1);
            from = start + 1;
            continue;
        }
        put_text(s + from, start - from);
        put_replacement(repl, s + start, end - start);
        count++;
        last_end = end;
        from = end;
        if (!opt_global)
            break;
        if (end == start) {
            if (start == len)
                break;
            put_text(s + start, 1);
            from = start + 1;
        }
    }
    if (from < len)
        put_text(s + from, len - from);
    return count;
}

static int usage(void)
{
    printf("usage: textsub [-gipnc] [--] PATTERN REPLACEMENT [FILE]\n");
    return 2;
}

int main(int argc, char **argv)
{
    static struct pattern pat;
    char line[MAX_LINE + 2];
    FILE *in = stdin;
    const char *p;
    int a = 1, len, n, newline, line_no = 0;
    long total = 0, lines_changed = 0;

    for (; a < argc && argv[a][0] == '-' && argv[a][1] != '\0'; a++) {
        if (strcmp(argv[a], "--") == 0) {
            a++;
            break;
        }
        for (p = argv[a] + 1; *p != '\0'; p++) {
            switch (*p) {
            case 'g': opt_global = 1; break;
            case 'i': opt_icase = 1; break;
            case 'p': opt_print_changed = 1; break;
            case 'n': opt_number = 1; break;
            case 'c': opt_count = 1; break;
            default: return usage();
            }
        }
    }
    if (argc - a < 2 || argc - a > 3)
        return usage();
    compile(&pat, argv[a]);
    check_replacement(argv[a + 1]);
    if (argc - a == 3 && (in = fopen(argv[a + 2], "r")) == NULL)
        fail("cannot open ", argv[a + 2]);

    while (fgets(line, sizeof line, in) != NULL) {
        line_no++;
        len = (int)strlen(line);
        newline = line[len - 1] == '\n';
        if (newline)
            line[--len] = '\0';
        else if (len > MAX_LINE)
            fail("line too long", "");
        n = substitute(&pat, argv[a + 1], line, len);
        if (out_full) {
            printf("textsub: line %d: result longer than %d, left as is\n",
                   line_no, MAX_OUT);
            n = 0;
            memcpy(out, line, (size_t)len);
            out_len = len;
        }
        total += n;
        lines_changed += n > 0;
        if (opt_print_changed && n == 0)
            continue;
        if (opt_number)
            printf("%d:", line_no);
        fwrite(out, 1, (size_t)out_len, stdout);
        if (newline)
            putchar('\n');
    }
    if (in != stdin)
        fclose(in);
    if (opt_count)
        printf("%ld replacements in %ld lines\n", total, lines_changed);
    return total > 0 ? 0 : 1;
}
