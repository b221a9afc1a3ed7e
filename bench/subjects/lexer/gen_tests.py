#!/usr/bin/env python3
"""Generate the test universe of the lexer subject.

Writes inputs/tNNNN.in and universe.txt (one shell command per test, run with
`sh -c` from this directory).  Deterministic: a fixed seed, no clock, no
environment.  Rerun after editing; the files are committed.

The universe mixes
  * hand-written category-partition cases, one or a few per feature and per
    error class (numbers, strings, comments, brackets, options, limits), and
  * random token streams drawn from a grammar of valid and invalid tokens,
    run with random option combinations.
"""
import os
import random
import shlex

SEED = 1987
HERE = os.path.dirname(os.path.abspath(__file__))
INPUTS = os.path.join(HERE, "inputs")

KEYWORDS = ["and", "break", "continue", "else", "false", "fn", "for", "if",
            "in", "let", "nil", "not", "or", "return", "true", "while"]
OPERATORS = ["<<=", ">>=", "**=", "...", "==", "!=", "<=", ">=", "&&", "||",
             "<<", ">>", "+=", "-=", "*=", "/=", "%=", "++", "--", "->", "=>",
             "..", "::", "**", "+", "-", "*", "/", "%", "=", "<", ">", "!",
             "&", "|", "^", "~", "?", ":", "."]

# (arguments, input bytes); the input is fed on stdin unless the arguments
# name a file themselves (then the input is written but passed by name).
HAND = [
    ("", b""),
    ("", b"   \t\n\n  \r\n\f"),
    ("", b"x"),
    ("", b"let x = 1;\n"),
    ("", b"if a == b { return a; } else { return b; }\n"),
    ("-n", b"while i < 10 { i += 1; }\n"),
    ("", " ".join(KEYWORDS).encode() + b"\n"),
    ("", " ".join(OPERATORS).encode() + b"\n"),
    ("", b"<<=<<<>>=>>>**=***...... ===!==\n"),
    ("", b"a->b=>c::d..e...f\n"),
    ("", b"_ _x x_ __init__ A1 z9_9 Let IF While\n"),
    ("", b"a" * 31 + b" " + b"b" * 32 + b"\n"),
    ("", b"0 7 42 2147483647 2147483648 99999999999999999999\n"),
    ("", b"0x0 0xff 0XAbC 0x7fffffff 0x80000000 0x 0xg 0x1G\n"),
    ("", b"0b0 0b1011 0B1 0b 0b2 0b10b\n"),
    ("", b"00 007 0 0.5 00.5\n"),
    ("", b"1_000 1__0 1_ 10_000_000 _1\n"),
    ("", b"1.5 0.25 3.14159 1. 1..5 1.e5 .5\n"),
    ("", b"1e5 1E5 1e+5 1e-5 2.5e10 1e 1e+ 1e- 1ex\n"),
    ("", b"12ab 3x 0x1fz 7_a 1.5f 1e5L\n"),
    ("", b'"" "a" "hello world" "tab\\there"\n'),
    ("", b'"\\n\\t\\r\\0\\\\\\"\\\'" "\\x41\\x7a\\x00"\n'),
    ("", b'"\\q" "\\x4" "\\xzz" "ok\\"still"\n'),
    ("", b'"\\q\\x4\\q" "\\x4\\q" "\\q\n'),
    ("", b'"unterminated\n"next line"\n'),
    ("", b'"ends at eof'),
    ("", b'"backslash at end\\\n'),
    ("", b'"backslash at eof\\'),
    ("", b'"' + b"x" * 64 + b'" "' + b"y" * 65 + b'"\n'),
    ("", b'"' + b"\\x41" * 70 + b'"\n'),
    ("", b"'a' 'Z' '\\n' '\\'' '\\x20' '0'\n"),
    ("", b"'' 'ab' '\\q' 'x\n'\\\n"),
    ("", b"'unterminated"),
    ("", b"// just a comment\n"),
    ("-k", b"x // comment at end of file"),
    ("-k", b"// just a comment\nx // trailing\n"),
    ("", b"/* block */ x /* two\nlines */ y\n"),
    ("-k", b"/* block */ x /* two\nlines */ y\n"),
    ("-k", b"/* outer /* inner */ still outer */ z\n"),
    ("", b"/* /* */ unterminated nest\n"),
    ("-k", b"/* unterminated"),
    ("-k", b"/**/ /***/ /* * / */ //\n"),
    ("-k", b"/* " + b"long comment text " * 10 + b"*/\n"),
    ("", b"a / b /= c //x\n"),
    ("", b"( ) [ ] { } , ;\n"),
    ("", b"f(a[i], {b}) ;\n"),
    ("", b")\n]\n}\n"),
    ("", b"( ]\n[ }\n{ )\n"),
    ("", b"(((\n[[\n{\n"),
    ("", b"(" * 16 + b")" * 16 + b"\n"),
    ("", b"(" * 17 + b")" * 17 + b"\n"),
    ("", b"{" * 20 + b"\n"),
    ("", b"@ $ ` # \\\n"),
    ("", b"x\x00y\x01z\x7f\n"),
    ("", b"caf\xc3\xa9 \xff\xfe\n"),
    ("", b"\tx\n\t\ty\n  \tz\n1234567\tw\n"),
    ("", b"a\r\nb\r\n"),
    ("-n", b"no newline at end"),
    ("-s", b"let x = 1; let y = \"s\"; 'c' 1.5 // c\n"),
    ("-sk", b"let x = 1; /* c */ // d\n@\n"),
    ("-nk", b"x /* c */ y\n"),
    ("-n -k", b"fn f() { return 0x10; }\n"),
    ("-x", b"x\n"),
    ("-n -q", b"x\n"),
    ("FILE", b"let from_a_file = true;\n"),
    ("-n FILE", b"if x { y }\n"),
    ("-", b"x - y\n"),
    ("-s -", b"x - y\n"),
    ("inputs/no-such-file.in", b""),
    ("FILE FILE", b"x\n"),
    ("", b"let s = \"" + b"big " * 20000 + b"\";\n"),
    ("-s", b"x = 1;\n" * 9362),
    ("-n", b"y;\n" * 22000),
    ("-k FILE", b"/*" + b"z" * 66000 + b"*/"),
]


def random_token(rng, clean):
    """One random token; a clean token is always well formed."""
    kind = rng.randrange(16 if clean else 20)
    if kind < 4:
        n = rng.randint(1, 12)
        first = rng.choice("abcxyz_ABQ")
        return first + "".join(rng.choice("abcdefxyz_0129") for _ in range(n - 1))
    if kind < 6:
        return rng.choice(KEYWORDS)
    if kind < 9:
        return rng.choice(OPERATORS)
    if kind < 11:
        return rng.choice("()[]{},;")
    if kind == 11:
        big = 2 ** 31 if clean else 2 ** 33
        return rng.choice([str(rng.randrange(1000)), str(rng.randrange(1, big)),
                           "0x%x" % rng.randrange(big), "0X%X" % rng.randrange(big),
                           "0b" + bin(rng.randrange(64))[2:], "0B1",
                           "%d_%03d" % (rng.randrange(1, 99), rng.randrange(1000))])
    if kind == 12:
        return rng.choice(["%d.%d" % (rng.randrange(100), rng.randrange(100)),
                           "%de%d" % (rng.randrange(10), rng.randrange(20)),
                           "%dE+%d" % (rng.randrange(10), rng.randrange(20)),
                           "%d.%de-%d" % (rng.randrange(10), rng.randrange(10), rng.randrange(9))])
    if kind == 13:
        body = []
        for _ in range(rng.randrange(8)):
            body.append(rng.choice(["a", "b", " ", "Z", "\\n", "\\t", "\\r", "\\0",
                                    "\\\\", "\\\"", "\\'", "'", "9",
                                    "\\x%02x" % rng.randrange(256)]))
        return '"' + "".join(body) + '"'
    if kind == 14:
        return "'" + rng.choice(["a", "\\n", "\\'", "\\x41", "\\\\", "z", " "]) + "'"
    if kind == 15:
        return rng.choice(["// note\n", "/* c */", "/* a\nb */", "/* /* n */ */", "//\n",
                           "/* * / */", "/**/"])
    if kind == 16:  # malformed tokens
        return rng.choice(["0x", "0b", "0B2", "09", "1e", "1e+", "1_", "1__2", "12ab",
                           "0x1g", "'ab'", "''", "'\\q'", '"\\q"', '"\\x4"',
                           '"\\q\\x4"', '"\\x4\\q"', '"\\xzz"', '"\\q\n', '"open\n',
                           '"cont\\\n', "1..5", "2.x", "3. ",
                           "(" * 17, "@", "$", "#", "`", "\\", "\x00", "\xe9"])
    if kind == 17:
        return "v" * rng.randint(28, 36)
    if kind == 18:
        return '"' + "s" * rng.randint(60, 70) + '"'
    return rng.choice(["\n", "\t", "\n\n", " ", "\r\n", "\f"])


def random_source(rng, clean):
    """Random tokens.  A clean source has only well-formed tokens, separated
    by blanks, and balanced brackets; others may have anything."""
    parts = []
    open_brackets = []
    for _ in range(rng.randint(1, 60)):
        tok = random_token(rng, clean)
        if clean and tok in "([{":
            open_brackets.append(")]}"["([{".index(tok)])
        elif clean and tok in ")]}":
            tok = open_brackets.pop() if open_brackets else ";"
        parts.append(tok)
        blanks = [" ", "\n", "\t"] if clean else [" ", " ", "", "\n", "\t"]
        parts.append(rng.choice(blanks))
    parts.extend(reversed(open_brackets))
    text = "".join(parts)
    ending = rng.randrange(10)
    if ending == 0 and not clean:
        text += rng.choice(['"open', '"esc\\', "/* open", "/* /* */", "'", "(", "[{",
                            "// eof"])
    elif ending < 8:
        text += "\n"
    elif ending == 9:
        text += "// no newline after this comment"
    return text.encode()


def main():
    rng = random.Random(SEED)
    cases = list(HAND)
    option_sets = ["", "", "", "-n", "-k", "-nk", "-s", "-sk", "-n -k", "-kn"]
    for _ in range(250):
        opts = rng.choice(option_sets)
        how = rng.randrange(40)
        if how < 6:
            args = (opts + " FILE").strip()
        elif how < 8:
            args = (opts + " -").strip()
        elif how == 8:
            args = opts + " " + rng.choice(["-z", "-nz", "FILE FILE", "- FILE"])
        elif how == 9:
            args = (opts + " inputs/no-such-file.in").strip()
        else:
            args = opts
        cases.append((args, random_source(rng, rng.randrange(2) == 0)))

    os.makedirs(INPUTS, exist_ok=True)
    for old in os.listdir(INPUTS):
        if old.endswith(".in"):
            os.remove(os.path.join(INPUTS, old))
    lines = []
    for i, (args, data) in enumerate(cases, 1):
        name = "inputs/t%04d.in" % i
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(data)
        words = [name if w == "FILE" else w for w in args.split()]
        cmd = " ".join(["./lexer"] + [shlex.quote(w) for w in words])
        if name not in words:
            cmd += " < " + name
        lines.append(cmd)
    with open(os.path.join(HERE, "universe.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("%d tests" % len(lines))


if __name__ == "__main__":
    main()
