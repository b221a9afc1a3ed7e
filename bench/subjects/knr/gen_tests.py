#!/usr/bin/env python3
"""Generate the test universe of the knr subject.

Writes inputs/tNNNN.in (command scripts) and universe.txt (one shell command
per test, run with `sh -c` from this directory).  Deterministic: fixed seed.

The universe mixes hand-written category-partition cases (each command in
its normal and error forms, each option, the limits) with random command
scripts run under random options.
"""
import os
import random

SEED = 2718
HERE = os.path.dirname(os.path.abspath(__file__))
INPUTS = os.path.join(HERE, "inputs")

# (options, script); a script of None reads a file given on the command line
HAND = [
    ("", ""),
    ("", "push 1 2 3\nprint\n"),
    ("", "put 1 2 3\nprint\n"),
    ("-v", "push 5\nput 6\npush 4\nprint\nlen\n"),
    ("-q", "push 1\nprint\n"),
    ("-vq", "push 1 2\nsum\n"),
    ("", "print\nlen\nsum\n"),
    ("", "avg\nmax\nmin\n"),
    ("", "push 7 -3 12 0\navg\nmax\nmin\nsum\n"),
    ("", "push -7 -2\navg\n"),
    ("", "push x\npush 1x\npush 0x\npush 0x1g\npush -\npush +\nprint\n"),
    ("", "push 0x10 0XfF -0x1 +12\nprint\n"),
    ("", "push 999999 1000000 1000001 -1000001 99999999999\nprint\n"),
    ("-l 10", "push 5 10 11 -11 0xff\nprint\nmap mul 3\nprint\nmap add 100\nprint\n"),
    ("-l 1", "push 1 2 -2\nprint\n"),
    ("-l 0", "print\n"),
    ("-l -5", "print\n"),
    ("-l x", "print\n"),
    ("-l", "print\n"),
    ("-lq 5", "print\n"),
    ("-x", "print\n"),
    ("-v -x", "print\n"),
    ("-", "push 1\nprint\n"),
    ("", "pop\npush 1 2 3\npop\nprint\npop 2\nprint\npop\n"),
    ("", "push 1 2 3\npop 0\npop 4\npop x\npop -1\npop 65\npop 3\nprint\n"),
    ("", "push 1 2\npop 1 2\nprint\n"),
    ("", "push 1 2 3\nclear\nprint\nclear\nlen\n"),
    ("", "push 1 2 3\nrev\nprint\nclear\nrev\nprint\n"),
    ("", "push 3 1 2 3 1\nsort\nprint\nsort desc\nprint\nsort up\nprint\n"),
    ("", "sort\nprint\nuniq\nprint\n"),
    ("", "put 1 1 2 2 2 3 1 1\nuniq\nprint\n"),
    ("", "put 1 2 3 4 5\ntake 2\nprint\n"),
    ("", "put 1 2 3 4 5\ndrop 2\nprint\n"),
    ("", "put 1 2 3\ntake 0\nprint\nput 1 2 3\ndrop 0\nprint\n"),
    ("", "put 1 2 3\ntake 9\nprint\ndrop 9\nprint\n"),
    ("", "take\ndrop\ntake x\ndrop -1\ntake 65\nprint\n"),
    ("", "put 1 2 3\nmirror\nprint\nmirror\nprint\n"),
    ("", "mirror\nprint\n"),
    ("", "put " + " ".join(str(i) for i in range(40)) + "\nmirror\nlen\n"),
    ("", "put " + " ".join(str(i) for i in range(32)) + "\nmirror\nlen\nmirror\nlen\n"),
    ("", "put " + " ".join(str(i) for i in range(70)) + "\nlen\npush 1\n"),
    ("", "put " + " ".join(["1"] * 40) + "\nput " + " ".join(["2"] * 40) + "\nlen\nsum\n"),
    ("", "put 1 -2 3\nmap add 10\nprint\nmap mul -2\nprint\nmap neg\nprint\nmap abs\nprint\n"),
    ("", "put 7 -7 8\nmap mod 3\nprint\nmap mod 0\nmap mod -2\nprint\n"),
    ("", "put 1\nmap\nmap sub 1\nmap add\nmap add x\nmap neg 1\nprint\n"),
    ("", "put 1 2 3 4 5 6\nfilter odd\nprint\n"),
    ("", "put 1 2 3 4 5 6\nfilter even\nprint\n"),
    ("", "put 1 2 3 4 5 6\nfilter lt 4\nprint\nfilter gt 1\nprint\n"),
    ("", "put 1 2 3 2 1\nfilter eq 2\nprint\nput 5 2\nfilter ne 2\nprint\n"),
    ("", "put 1 2\nfilter\nfilter le 1\nfilter lt\nfilter lt x\nfilter odd 3\nprint\n"),
    ("", "put -3 -2 -1 0\nfilter odd\nprint\n"),
    ("", "filter even\nmap neg\nprint\n"),
    ("", "# a comment\n\n   \n\t\npush 1 # one\nprint # now\n"),
    ("", "push 1\r\nput 2\r\nprint\r\n"),
    ("", "bogus\nPUSH 1\npushx 1\nprint\n"),
    ("", "print extra\nlen 1\nsum x\nclear now\nrev it\nuniq 2\n"),
    ("", "push 12345678901234567\nprint\n"),
    ("", "push " + "1" * 20 + "\nprint\n"),
    ("", "x" * 150 + "\npush 1\nprint\n"),
    ("", "push " + " ".join(["9"] * 55) + "\nlen\n"),
    ("", "push 1\nprint"),
    ("", "push 2\n" + "y" * 200),
    ("-v", "push 3 1 2\nsort\nprint\nmirror\nuniq\nprint\navg\n"),
    ("-q", "avg\nbogus\n"),
    ("-l 3", "put -9 9 2\nmap mul 2\nprint\nsum\navg\n"),
    ("-v -l 100", "put 50 60\nmap add 60\nprint\nfilter gt 99\nprint\n"),
]

COMMANDS = [
    ("push", 10), ("put", 10), ("pop", 5), ("clear", 1), ("print", 10),
    ("len", 3), ("sum", 4), ("avg", 3), ("max", 3), ("min", 3), ("rev", 4),
    ("sort", 4), ("uniq", 3), ("take", 3), ("drop", 3), ("mirror", 2),
    ("map", 8), ("filter", 8), ("comment", 1), ("junk", 1),
]

MAPS = ["add", "mul", "mod", "neg", "abs"]
FILTERS = ["lt", "gt", "eq", "ne", "odd", "even"]


def value(rng):
    r = rng.random()
    if r < 0.6:
        return str(rng.randint(-20, 20))
    if r < 0.75:
        return str(rng.randint(-2000000, 2000000))
    if r < 0.85:
        return "0x%x" % rng.randint(0, 300)
    if r < 0.95:
        return str(rng.randint(0, 5))
    return rng.choice(["x", "1x", "--1", "0x", "+7", "-0"])


def command(rng):
    total = sum(w for _, w in COMMANDS)
    r = rng.randrange(total)
    for cmd, w in COMMANDS:
        if r < w:
            break
        r -= w
    if cmd in ("push", "put"):
        return cmd + " " + " ".join(value(rng) for _ in range(rng.randint(0, 6)))
    if cmd in ("pop", "take", "drop"):
        if rng.random() < 0.2 and cmd == "pop":
            return cmd
        return "%s %s" % (cmd, rng.choice(["0", "1", "2", "3", "5", "x", "-1", "70"]))
    if cmd == "sort":
        return rng.choice(["sort", "sort", "sort desc", "sort up"])
    if cmd == "map":
        op = rng.choice(MAPS + ["sub"])
        if op in ("neg", "abs") and rng.random() < 0.8:
            return "map " + op
        return "map %s %s" % (op, rng.choice(["0", "1", "2", "3", "-2", "7", "x", ""]))
    if cmd == "filter":
        op = rng.choice(FILTERS + ["le"])
        if op in ("odd", "even") and rng.random() < 0.8:
            return "filter " + op
        return "filter %s %s" % (op, rng.choice(["0", "1", "2", "-1", "5", "x", ""]))
    if cmd == "comment":
        return "# " + rng.choice(["note", "push 1", ""])
    if cmd == "junk":
        return rng.choice(["bogus", "Print", "len 3", "sum it", "x" * 130])
    return cmd


def script(rng):
    lines = [command(rng) for _ in range(rng.randint(1, 18))]
    return "\n".join(lines) + ("\n" if rng.random() < 0.95 else "")


def options(rng):
    opts = []
    if rng.random() < 0.25:
        opts.append("-v")
    if rng.random() < 0.15:
        opts.append("-q")
    if rng.random() < 0.15:
        opts.append("-l %d" % rng.choice([1, 5, 10, 100, 1000]))
    if rng.random() < 0.03:
        opts.append(rng.choice(["-z", "-l", "-l 0"]))
    return " ".join(opts)


def main():
    rng = random.Random(SEED)
    os.makedirs(INPUTS, exist_ok=True)
    for f in os.listdir(INPUTS):
        os.remove(os.path.join(INPUTS, f))
    cases = list(HAND)
    while len(cases) < 300:
        cases.append((options(rng), script(rng)))
    universe = []
    for i, (opts, text) in enumerate(cases, 1):
        name = "t%04d.in" % i
        with open(os.path.join(INPUTS, name), "w", newline="") as f:
            f.write(text)
        opts = (opts + " ") if opts else ""
        # every tenth test names its input file instead of reading stdin
        if i % 10 == 0 and opts.strip() != "-":
            universe.append("./knr %sinputs/%s" % (opts, name))
        else:
            universe.append("./knr %s< inputs/%s" % (opts, name))
    universe.append("./knr inputs/missing.in")
    universe.append("./knr inputs/t0001.in inputs/t0002.in")
    with open(os.path.join(HERE, "universe.txt"), "w") as f:
        f.write("\n".join(universe) + "\n")


if __name__ == "__main__":
    main()
