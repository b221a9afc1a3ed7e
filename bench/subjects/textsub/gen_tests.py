#!/usr/bin/env python3
"""Generate the test universe of the textsub subject.

Writes inputs/tNNNN.in (texts) and universe.txt (one shell command per test,
run with `sh -c` from this directory); the pattern, the replacement and the
options vary per test and are part of the command.  Deterministic: fixed seed.

The universe mixes hand-written category-partition cases (each pattern and
replacement construct, each option, each error) with random patterns,
replacements and texts drawn from a small alphabet so that they match often.
"""
import os
import random
import shlex

SEED = 2718
HERE = os.path.dirname(os.path.abspath(__file__))
INPUTS = os.path.join(HERE, "inputs")

TEXT = ("the quick brown fox\njumps over the lazy dog\n"
        "Pack my box with 5 dozen liquor jugs.\n\n"
        "\tindented line, with a tab\n"
        "a1 b22 c333 d4444 x_y\n"
        "price: $12.50 (was $15.00) [sale]\n"
        "aaa bbb aaab abab\n")

# (options, pattern, replacement, input); FILE in the options means: pass the
# input file by name instead of on stdin.
HAND = [
    ("", "fox", "cat", TEXT),
    ("", "o", "0", TEXT),
    ("-g", "o", "0", TEXT),
    ("-g", "the", "THE", TEXT),
    ("-gi", "the", "a", TEXT),
    ("-i", "PACK", "[&]", TEXT),
    ("-g", ".", "<&>", "abc\n\nxy\n"),
    ("-g", "a*", "-", "abc\nbaaac\n\nxyz\n"),
    ("-g", "x*", "-", "abc\n"),
    ("", "a*", "-", "baaac\n"),
    ("-g", "a+", "A", TEXT),
    ("-g", "ab?", "X", "a ab abb b\n"),
    ("-g", "colou?r", "hue", "color colour colouur\n"),
    ("-g", "b*a+b*", "_", "bab aaab bbbb a b\n"),
    ("", "^", "> ", TEXT),
    ("", "$", " <", TEXT),
    ("", "^$", "(empty)", TEXT),
    ("-g", "^a", "A", "aaa\nbab\n"),
    ("-g", "a$", "A", "aaa\naab\n"),
    ("", "^the", "The", TEXT),
    ("", "dog$", "cat", TEXT),
    ("-g", "a^b", "X", "a^b ab\n"),
    ("-g", "a$b", "X", "a$b ab\n"),
    ("-g", "\\$", "USD ", TEXT),
    ("-g", "\\$[0-9]+\\.[0-9][0-9]", "<&>", TEXT),
    ("-g", "\\d+", "#", TEXT),
    ("-g", "\\D+", ".", "a1b22c\n"),
    ("-g", "\\w+", "w", TEXT),
    ("-g", "\\W", "", TEXT),
    ("-g", "\\s+", " ", TEXT),
    ("-g", "\\S+", "s", "a  b\tc\n"),
    ("-g", "\\t", "TAB", TEXT),
    ("-g", "\\.", "!", TEXT),
    ("-g", "\\[\\w*\\]", "()", TEXT),
    ("-g", "\\\\", "/", "a\\b\\\\c\n"),
    ("-g", "[aeiou]", "", TEXT),
    ("-g", "[^aeiou ]", "_", "hello world\n"),
    ("-g", "[a-c]+", "<&>", TEXT),
    ("-g", "[0-9a-fA-F]+", "H", "deadBEEF 0x1f zz\n"),
    ("-g", "[]x]", "!", "a]b x\n"),
    ("-g", "[^]x]", ".", "a]b x\n"),
    ("-g", "[-a]", "+", "a-b\n"),
    ("-g", "[a-]", "+", "a-b\n"),
    ("-g", "[\\]\\-]", "#", "a]b-c\n"),
    ("-g", "[\\t ]", "_", TEXT),
    ("-g", "[$.]", "", TEXT),
    ("-gi", "[a-c]", "#", "ABC abc xyz\n"),
    ("-gi", "[^a-c]", "#", "ABC abc xyz\n"),
    ("-gi", "\\w", "w", "Ab_1 ?\n"),
    ("-g", "o", "&&", TEXT),
    ("-g", "o", "\\&", TEXT),
    ("-g", "o", "\\\\", TEXT),
    ("-g", "o", "[\\t]", TEXT),
    ("", " ", "\\n", TEXT),
    ("-g", "\\w+", "\\U&", TEXT),
    ("-g", "\\w+", "\\L&", "Hello WORLD\n"),
    ("-g", "[a-z]+", "\\U&\\E-&", "one two\n"),
    ("", "quick", "\\Uvery &", TEXT),
    ("", "x", "\\q", "x\n"),
    ("", "x", "", "axb\n"),
    ("-p", "o", "0", TEXT),
    ("-n", "o", "0", TEXT),
    ("-pn", "a", "A", TEXT),
    ("-c", "o", "0", TEXT),
    ("-gc", "o", "0", TEXT),
    ("-pnc", "zzz", "y", TEXT),
    ("-gipnc", "A", "a", TEXT),
    ("", "zzz", "y", TEXT),
    ("-g", "a", "b", ""),
    ("-g", "a", "b", "no newline at end a"),
    ("-g", "a", "b", "crlf a\r\nline a\r\n"),
    ("--", "-x", "y", "a-x -x\n"),
    ("-g --", "-", "+", "a-b-c\n"),
    ("-g", "-", "+", "a-b-c\n"),
    ("-g --", "--", "=", "a--b\n"),
    ("FILE", "o", "0", TEXT),
    ("-g FILE", "[a-z]", "", TEXT),
    ("", "", "x", TEXT),
    ("", "\\", "x", TEXT),
    ("", "[abc", "x", TEXT),
    ("", "[a-", "x", TEXT),
    ("", "[\\", "x", TEXT),
    ("", "[", "x", TEXT),
    ("", "[z-a]", "x", TEXT),
    ("", "*a", "x", TEXT),
    ("", "^*", "x", TEXT),
    ("", "a**", "x", TEXT),
    ("", "a+?", "x", TEXT),
    ("-g", "a?*", "x", TEXT),
    ("-g", "\\w+*", "x", TEXT),
    ("-g", "", "x", "abc\n"),
    ("-g", "[a\\", "x", TEXT),
    ("-g", "ab\\", "x", TEXT),
    ("-i", "[a-c]x\\", "x", TEXT),
    ("", "a\\tb", "x", "a\tb\n"),
    ("-g", "\\t+", "->", "a\t\tb\tc\n"),
    ("-g", "[a-c]*[c-a]", "x", TEXT),
    ("-g", "[a-", "x", TEXT),
    ("-gi", "[A-C]+", "<&>", "abc ABC xyz\n"),
    ("-i", "[^A-Z ]+", "#", "abc ABC xyz\n"),
    ("", "a" * 64, "x", "a" * 70 + "\n"),
    ("", "a" * 65, "x", TEXT),
    ("", "^$", "x", ""),
    ("", "a", "\\", TEXT),
    ("", "a", "x\\1", TEXT),
    ("-x", "a", "b", TEXT),
    ("-gz", "a", "b", TEXT),
    ("-q", "a", "b", TEXT),
    ("", "-", "+", "a-b\n"),
    ("-n", "-", "+", "a-b\n"),
    ("-i", "", "x", TEXT),
    ("", "a", "", None),
    ("-g", "a", "b", "NOARG"),
    ("FILE FILE", "a", "b", TEXT),
    ("", "a", "b", "MISSING"),
    ("-g", "a", "b", "ok a\n" + "a" * 1001 + "\nafter\n"),
    ("-g", "a", "b", "a" * 1000 + "\n"),
    ("-g", "a", "b", "a" * 1000),
    ("-g", ".", "&&&&&&&&&", "x" * 900 + "\nshort\n"),
    ("-g", "a*b*c*", "-", "abcabcabc aabbcc\n"),
    ("-g", ".*", "[&]", TEXT),
    ("", "^.*$", "<&>", TEXT),
    ("-g", "\\w+@\\w+\\.\\w+", "<mail>", "write to ann@example.org or bob@test.net\n"),
]

ALPHA = "abcxy 01"


def random_item(rng):
    k = rng.randrange(12)
    if k < 6:
        return rng.choice("abcxy01 ")
    if k == 6:
        return "."
    if k == 7:
        return rng.choice(["\\d", "\\w", "\\s", "\\D", "\\W", "\\S", "\\.", "\\ ",
                           "\\t", "\\a", "\\$", "\\^"])
    if k < 10:
        neg = "^" if rng.randrange(3) == 0 else ""
        return "[" + neg + rng.choice(SET_BODIES) + "]"
    return rng.choice(["a", "b", "x", "$", "^"])


# Ways to make a pattern invalid, appended to a valid random prefix.
BAD_ENDINGS = ["\\", "[ab", "[a-", "[\\", "[", "[c-a]", "[9-0x]", "**", "*+", "+?", "x+*",
               "a" * 65, "." * 40 + "[ab]" * 25]
BAD_STARTS = ["", "*", "+a", "?b", "^*"]

SET_BODIES = ["abc", "a-c", "xy0", "0-9", "a", "b-y", " a", "]a", "\\]", "\\t ",
              "a-", "-a", "A-C", "\\\\b"]


def random_pattern(rng):
    k = rng.randrange(12)
    if k == 0:
        return random_pattern(rng).rstrip("*+?$") + rng.choice(BAD_ENDINGS)
    if k == 1 and rng.randrange(3) == 0:
        return rng.choice(BAD_STARTS)
    items = []
    stars = 0
    for _ in range(rng.randint(1, 6)):
        it = random_item(rng)
        q = rng.randrange(8)
        if q == 0 and stars < 2:
            it += "*"
            stars += 1
        elif q == 1 and stars < 2:
            it += "+"
            stars += 1
        elif q == 2:
            it += "?"
        items.append(it)
    pat = "".join(items)
    if rng.randrange(6) == 0:
        pat = "^" + pat
    if rng.randrange(6) == 0:
        pat += "$"
    return pat


def random_replacement(rng):
    if rng.randrange(20) == 0:
        return rng.choice(["\\", "x\\", "\\1", "&\\9"])
    parts = []
    for _ in range(rng.randint(0, 4)):
        parts.append(rng.choice(["&", "X", "-", "[", "]", "\\&", "\\U", "\\L",
                                 "\\E", "\\t", "\\n", "\\q", "zz", "&&", "\\\\"]))
    return "".join(parts)


def random_text(rng):
    k = rng.randrange(40)
    if k == 0:
        return "short\n" + "a" * rng.randint(1001, 1100) + "\nnot reached\n"
    if k < 4:
        return "x" * rng.randint(850, 999) + "\n"
    lines = []
    for _ in range(rng.randint(0, 12)):
        n = rng.randint(0, 50)
        lines.append("".join(rng.choice(ALPHA + "ABC.z") for _ in range(n)))
    text = "\n".join(lines)
    if lines and rng.randrange(5):
        text += "\n"
    return text


def main():
    rng = random.Random(SEED)
    cases = list(HAND)
    for _ in range(230):
        opts = rng.choice(["", "-g", "-g", "-i", "-gi", "-p", "-gp", "-n",
                           "-gc", "-gn", "-c", "-gpnc", "-g -i", "-ig"])
        pat, repl, text = random_pattern(rng), random_replacement(rng), random_text(rng)
        how = rng.randrange(40)
        if how < 6:
            opts += " FILE"
        elif how < 8:
            opts += " --"
        elif how == 8:
            opts += " " + rng.choice(["-z", "-gz", "-"])
        elif how == 9:
            text = rng.choice([None, "NOARG", "MISSING"])
        elif how == 10:
            pat = "-" + pat
            opts += " --"
        elif how == 11:
            opts += " FILE FILE"
        if text is not None and text[:1] == "x" and len(text) > 800:
            pat, repl = rng.choice([(".", "&&&&&&&&&&"), ("x", "\\t\\t\\t\\t\\t\\t\\t\\t\\t"),
                                    ("x", "[&]")])
            opts = "-g"
        cases.append((opts.strip(), pat, repl, text))

    os.makedirs(INPUTS, exist_ok=True)
    for old in os.listdir(INPUTS):
        if old.endswith(".in"):
            os.remove(os.path.join(INPUTS, old))
    lines = []
    for i, (opts, pat, repl, text) in enumerate(cases, 1):
        name = "inputs/t%04d.in" % i
        words = opts.split()
        via_file = "FILE" in words
        words = [w for w in words if w != "FILE"]
        args = ["./textsub"] + words
        if text is None:          # usage: replacement missing
            args += [shlex.quote(pat)]
            text = TEXT
        elif text == "NOARG":     # usage: pattern and replacement missing
            text = TEXT
        else:
            args += [shlex.quote(pat), shlex.quote(repl)]
        if text == "MISSING":
            args.append("inputs/no-such-file.in")
            text = ""
        with open(os.path.join(HERE, name), "w", newline="") as f:
            f.write(text)
        if via_file:
            args += [name] * opts.split().count("FILE")
        else:
            args += ["<", name]
        lines.append(" ".join(args))
    with open(os.path.join(HERE, "universe.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("%d tests" % len(lines))


if __name__ == "__main__":
    main()
