/*
 * lexer - tokenizer for Mini, a small expression language.
 *
 * usage: lexer [-nsk] [FILE]
 *   -n  leave out the line:column of each token
 *   -s  print only the summary
 *   -k  report comments as COMMENT tokens (they are skipped otherwise)
 *
 * Reads FILE (or stdin) and prints one token per line, then a summary.
 * Malformed tokens are printed as ERROR tokens and scanning goes on.
 * Everything is written to stdout.  Exit status: 0, 1 if any ERROR token
 * was found, 2 for a usage error or unreadable input.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INPUT   65536  /* bytes of source accepted */
#define MAX_IDENT   31     /* longest identifier */
#define MAX_STRING  64     /* longest decoded string literal */
#define MAX_DEPTH   16     /* bracket nesting */
#define MAX_SHOWN   40     /* token text longer than this is abbreviated */
#define INT_LIMIT   2147483647UL

enum category {
    C_KEYWORD, C_IDENT, C_INT, C_FLOAT, C_STRING, C_CHAR, C_OP, C_PUNCT,
    C_COMMENT, C_ERROR, N_CATEGORIES
};

static const char *const category_names[N_CATEGORIES] = {
    "KEYWORD", "IDENT", "INT", "FLOAT", "STRING", "CHAR", "OP", "PUNCT",
    "COMMENT", "ERROR"
};

static const char *const keywords[] = {
    "and", "break", "continue", "else", "false", "fn", "for", "if", "in",
    "let", "nil", "not", "or", "return", "true", "while"
};

/* Operators, longest first so that the longest match wins. */
static const char *const operators[] = {
    "<<=", ">>=", "**=", "...",
    "==", "!=", "<=", ">=", "&&", "||", "<<", ">>", "+=", "-=", "*=", "/=",
    "%=", "++", "--", "->", "=>", "..", "::", "**",
    "+", "-", "*", "/", "%", "=", "<", ">", "!", "&", "|", "^", "~", "?",
    ":", "."
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static char src[MAX_INPUT + 1];
static size_t src_len;
static size_t pos;             /* next byte to scan */
static int line = 1, col = 1;  /* position of src[pos] */

static size_t tok_start;       /* the token being scanned */
static int tok_line, tok_col;

static int opt_nopos, opt_summary, opt_comments;
static long counts[N_CATEGORIES];
static int lines_seen;

static struct {
    char ch;
    int line, col;
} brackets[MAX_DEPTH];
static int depth;

static int peek(size_t ahead)
{
    return pos + ahead < src_len ? (unsigned char)src[pos + ahead] : EOF;
}

static int advance(void)
{
    int c = (unsigned char)src[pos++];

    if (c == '\n') {
        line++;
        col = 1;
    } else if (c == '\t') {
        col += 8 - (col - 1) % 8;
    } else {
        col++;
    }
    return c;
}

/* The ctype functions accept EOF and answer false for it. */
static int is_word_char(int c)
{
    return isalnum(c) || c == '_';
}

static int hex_value(int c)
{
    return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
}

/* Print bytes with C-style escapes (a backslash itself only if asked),
   abbreviated if long. */
static void print_escaped(const char *s, size_t n, int escape_backslash)
{
    size_t i, shown = n > MAX_SHOWN ? MAX_SHOWN : n;

    for (i = 0; i < shown; i++) {
        unsigned char c = (unsigned char)s[i];

        if (c == '\n')
            fputs("\\n", stdout);
        else if (c == '\t')
            fputs("\\t", stdout);
        else if (c == '\\' && escape_backslash)
            fputs("\\\\", stdout);
        else if (isprint(c))
            putchar(c);
        else
            printf("\\x%02x", c);
    }
    if (shown < n)
        printf("...(%lu bytes)", (unsigned long)n);
}

/* Print a token: position, category, its text, then an optional note. */
static void emit(enum category cat, const char *fmt, ...)
{
    va_list ap;

    counts[cat]++;
    if (opt_summary)
        return;
    if (!opt_nopos)
        printf("%d:%d ", tok_line, tok_col);
    printf("%-7s ", category_names[cat]);
    print_escaped(src + tok_start, pos - tok_start, 0);
    if (fmt != NULL) {
        putchar(' ');
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
    }
    putchar('\n');
}

static void scan_word(void)
{
    size_t n, i;

    while (is_word_char(peek(0)))
        advance();
    n = pos - tok_start;
    if (n > MAX_IDENT) {
        emit(C_ERROR, "(identifier longer than %d)", MAX_IDENT);
        return;
    }
    for (i = 0; i < COUNT(keywords); i++) {
        if (strlen(keywords[i]) == n
            && memcmp(keywords[i], src + tok_start, n) == 0) {
            emit(C_KEYWORD, NULL);
            return;
        }
    }
    emit(C_IDENT, NULL);
}

/* Accumulate one digit, remembering if the value left the int range. */
static void add_digit(unsigned long *value, int base, int digit, int *overflow)
{
    if (*overflow)
        return;
    *value = *value * base + digit;
    if (*value > INT_LIMIT)
        *overflow = 1;
}

static void scan_number(void)
{
    unsigned long value = 0;
    int first = advance(), overflow = 0, is_float = 0;
    const char *err = NULL;

    if (first == '0' && (peek(0) == 'x' || peek(0) == 'X')) {
        advance();
        if (!isxdigit(peek(0)))
            err = "hex literal without digits";
        while (isxdigit(peek(0)))
            add_digit(&value, 16, hex_value(advance()), &overflow);
    } else if (first == '0' && (peek(0) == 'b' || peek(0) == 'B')) {
        advance();
        if (peek(0) != '0' && peek(0) != '1')
            err = "binary literal without digits";
        while (peek(0) == '0' || peek(0) == '1')
            add_digit(&value, 2, advance() - '0', &overflow);
    } else {
        value = (unsigned long)(first - '0');
        if (first == '0' && isdigit(peek(0)))
            err = "leading zero in decimal literal";
        while (peek(0) == '_' || isdigit(peek(0))) {
            if (advance() == '_') {
                if (!isdigit(peek(0)))
                    err = "misplaced '_' in number";
                continue;
            }
            add_digit(&value, 10, src[pos - 1] - '0', &overflow);
        }
        if (peek(0) == '.' && isdigit(peek(1))) {
            is_float = 1;
            advance();
            while (isdigit(peek(0)))
                advance();
        }
        if (peek(0) == 'e' || peek(0) == 'E') {
            is_float = 1;
            advance();
            if (peek(0) == '+' || peek(0) == '-')
                advance();
            if (!isdigit(peek(0)))
                err = "exponent without digits";
            while (isdigit(peek(0)))
                advance();
        }
    }
    if (is_word_char(peek(0))) {
        err = "invalid suffix on number";
        while (is_word_char(peek(0)))
            advance();
    }
    if (err != NULL)
        emit(C_ERROR, "(%s)", err);
    else if (is_float)
        emit(C_FLOAT, NULL);
    else if (overflow)
        emit(C_ERROR, "(integer literal too large)");
    else
        emit(C_INT, "= %lu", value);
}

/* A string ("...") or character ('.') literal with escapes. */
static void scan_quoted(int quote)
{
    char value[MAX_STRING];
    size_t n = 0;
    const char *err = NULL;
    int c;

    advance();
    for (;;) {
        c = peek(0);
        if (c == EOF || c == '\n') {
            if (err == NULL)
                err = c == EOF ? "unterminated literal" : "newline in literal";
            break;
        }
        advance();
        if (c == quote)
            break;
        if (c == '\\') {
            c = peek(0);
            if (c == EOF || c == '\n')
                continue;
            advance();
            switch (c) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case '0': c = '\0'; break;
            case '\\': case '"': case '\'':
                break;
            case 'x':
                if (isxdigit(peek(0)) && isxdigit(peek(1))) {
                    c = hex_value(advance()) * 16;
                    c += hex_value(advance());
                } else if (err == NULL) {
                    err = "\\x needs two hex digits";
                }
                break;
            default:
                if (err == NULL)
                    err = "unknown escape sequence";
                break;
            }
        }
        if (n < MAX_STRING)
            value[n] = (char)c;
        n++;
    }
    if (err == NULL && n > MAX_STRING)
        err = "literal too long";
    if (err == NULL && quote == '\'' && n != 1)
        err = n == 0 ? "empty character literal" : "character literal too long";
    if (err != NULL) {
        emit(C_ERROR, "(%s)", err);
    } else if (quote == '\'') {
        emit(C_CHAR, "= %d", (unsigned char)value[0]);
    } else {
        emit(C_STRING, NULL);
        if (!opt_summary) {
            printf("        value [");
            print_escaped(value, n, 1);
            printf("] %lu bytes\n", (unsigned long)n);
        }
    }
}

static void scan_comment(void)
{
    int nest = 1;

    if (src[pos + 1] == '/') {
        while (peek(0) != EOF && peek(0) != '\n')
            advance();
    } else {
        advance();
        advance();
        while (nest > 0) {
            if (peek(0) == EOF) {
                emit(C_ERROR, "(unterminated comment)");
                return;
            }
            if (peek(0) == '/' && peek(1) == '*') {
                advance();
                nest++;
            } else if (peek(0) == '*' && peek(1) == '/') {
                advance();
                nest--;
            }
            advance();
        }
    }
    if (opt_comments)
        emit(C_COMMENT, NULL);
}

static void scan_bracket(int c)
{
    int want;

    advance();
    if (c == '(' || c == '[' || c == '{') {
        if (depth == MAX_DEPTH) {
            emit(C_ERROR, "(brackets nested deeper than %d)", MAX_DEPTH);
            return;
        }
        brackets[depth].ch = (char)c;
        brackets[depth].line = tok_line;
        brackets[depth].col = tok_col;
        depth++;
        emit(C_PUNCT, NULL);
        return;
    }
    want = c == ')' ? '(' : c == ']' ? '[' : '{';
    if (depth == 0) {
        emit(C_ERROR, "(unmatched '%c')", c);
    } else if (brackets[depth - 1].ch != want) {
        depth--;
        emit(C_ERROR, "(does not match '%c' at %d:%d)", brackets[depth].ch,
             brackets[depth].line, brackets[depth].col);
    } else {
        depth--;
        emit(C_PUNCT, NULL);
    }
}

static void scan_operator(void)
{
    size_t i, n;

    for (i = 0; i < COUNT(operators); i++) {
        n = strlen(operators[i]);
        if (pos + n <= src_len && memcmp(src + pos, operators[i], n) == 0) {
            while (n-- > 0)
                advance();
            emit(C_OP, NULL);
            return;
        }
    }
    advance();
    emit(C_ERROR, "(unexpected character)");
}

static void scan(void)
{
    int c;

    while (pos < src_len) {
        c = peek(0);
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f') {
            advance();
            continue;
        }
        tok_start = pos;
        tok_line = line;
        tok_col = col;
        if (isalpha(c) || c == '_')
            scan_word();
        else if (isdigit(c))
            scan_number();
        else if (c == '"' || c == '\'')
            scan_quoted(c);
        else if (c == '/' && (peek(1) == '/' || peek(1) == '*'))
            scan_comment();
        else if (c != '\0' && strchr("()[]{}", c) != NULL)
            scan_bracket(c);
        else if (c == ',' || c == ';')
            advance(), emit(C_PUNCT, NULL);
        else
            scan_operator();
    }
    /* Report brackets still open, innermost first, where they were opened. */
    while (depth > 0) {
        depth--;
        tok_start = pos;
        tok_line = brackets[depth].line;
        tok_col = brackets[depth].col;
        emit(C_ERROR, "(unclosed '%c')", brackets[depth].ch);
    }
}

static void summary(void)
{
    long total = 0;
    int i;

    for (i = 0; i < N_CATEGORIES; i++)
        total += counts[i];
    printf("--- %d lines, %ld tokens, %ld errors\n", lines_seen, total,
           counts[C_ERROR]);
    for (i = 0; i < N_CATEGORIES; i++)
        if (counts[i] > 0)
            printf("%-7s %ld\n", category_names[i], counts[i]);
}

int main(int argc, char **argv)
{
    FILE *in = stdin;
    const char *path = NULL;
    const char *p;
    size_t i;
    int a;

    for (a = 1; a < argc; a++) {
        if (argv[a][0] == '-' && argv[a][1] != '\0') {
            for (p = argv[a] + 1; *p != '\0'; p++) {
                switch (*p) {
                case 'n': opt_nopos = 1; break;
                case 's': opt_summary = 1; break;
                case 'k': opt_comments = 1; break;
                default:
                    printf("lexer: unknown option -%c\n"
                           "usage: lexer [-nsk] [FILE]\n", *p);
                    return 2;
                }
            }
        } else if (path == NULL) {
            path = argv[a];
        } else {
            printf("usage: lexer [-nsk] [FILE]\n");
            return 2;
        }
    }
    if (path != NULL && strcmp(path, "-") != 0) {
        in = fopen(path, "rb");
        if (in == NULL) {
            printf("lexer: cannot open %s\n", path);
            return 2;
        }
    }
    src_len = fread(src, 1, sizeof src, in);
    if (in != stdin)
        fclose(in);
    if (src_len > MAX_INPUT) {
        printf("lexer: input longer than %d bytes\n", MAX_INPUT);
        return 2;
    }
    for (i = 0; i < src_len; i++)
        if (src[i] == '\n' || i + 1 == src_len)
            lines_seen++;
    scan();
    summary();
    return counts[C_ERROR] > 0 ? 1 : 0;
}
