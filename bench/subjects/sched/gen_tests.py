#!/usr/bin/env python3
"""Generate the test universe of the sched subject.

Writes inputs/tNNNN.in (command scripts) and universe.txt (one shell command
per test, run with `sh -c` from this directory).  Deterministic: fixed seed.

The universe mixes hand-written category-partition cases (each command in
its normal and error cases, each option, the limits) with random command
scripts run under random options and initial process counts.
"""
import os
import random

SEED = 3141
HERE = os.path.dirname(os.path.abspath(__file__))
INPUTS = os.path.join(HERE, "inputs")

# (arguments, script)
HAND = [
    ("", ""),
    ("1 1 1 1", ""),
    ("3", "finish\nfinish\nfinish\nfinish\n"),
    ("0 0 0 2", "flush\n"),
    ("2 2", "status\nflush\nstatus\n"),
    ("-v 1 1 1", "finish\nfinish\nfinish\n"),
    ("", "new 1\nnew 2\nnew 3\nnew 4\nflush\n"),
    ("", "new 2 web\nnew 2 db\nnew 3 cron\nstatus\nflush\n"),
    ("", "new\nnew 0\nnew 5\nnew x\nnew 2x\nnew -1\nnew 99999999999999999999\nstatus\n"),
    ("", "new 1 a b\nnew 1 abcdefghijkl\nnew 1 abcdefghijk\nnew 2 abcdefghijk\nstatus\n"),
    ("", "new 1 P1\nnew 1\nstatus\n"),
    ("", "block\nquantum\nfinish\nunblock 1\nflush\n"),
    ("2 1", "block\nblock\nblock\nblock\nstatus\n"
            "unblock 2\nunblock 1\nunblock 1\nstatus\nflush\n"),
    ("1", "block\nunblock\nunblock 0\nunblock 2\nunblock one\nunblock 1\nflush\n"),
    ("3 0 2", "quantum\nquantum\nstatus\nfinish\nquantum\nflush\n"),
    ("3 2", "upgrade 1 1\nupgrade 1 3\nupgrade 2 2\nstatus\nflush\n"),
    ("1", "upgrade\nupgrade 4 1\nupgrade 0 1\nupgrade 2 1\nupgrade 1\n"
          "upgrade 1 2\nupgrade 1 1\nupgrade 2 1\nupgrade 3 1\nstatus\n"),
    ("2 1", "kill P1\nkill P1\nkill nobody\nkill\nblock\nkill P3\nstatus\nflush\n"),
    ("1 1", "block\nkill P2\nstatus\n"),
    ("2", "tick\ntick 5\ntick 0\ntick 10001\ntick many\nstatus\nflush\n"),
    ("1 1 1", "tick 3\nfinish\ntick 2\nflush\n"),
    ("-a 3 3", "tick 10\nstatus\nflush\n"),
    ("-a 1 -v 2 2 2", "tick 4\nstatus\nflush\n"),
    ("-q 2 3", "tick 7\nstatus\nflush\n"),
    ("-q 1 -v 1 1", "tick 5\nflush\n"),
    ("-v -a 2 -q 3 2 1 1", "tick 12\nblock\ntick 4\nunblock 1\ntick 6\nflush\n"),
    ("-a 0 -q 0 2", "tick 5\nflush\n"),
    ("-x", "flush\n"),
    ("-a", "flush\n"),
    ("-q x", "flush\n"),
    ("1 1 1 1 1", "flush\n"),
    ("one", "flush\n"),
    ("33", "flush\n"),
    ("32", "new 1\nflush\n"),
    ("8 8 8 7", "new 2 last\nnew 2 over\nflush\n"),
    ("", "# comment only\n\n   \n\t\n"),
    ("1", "finish # done\n  status  \n\tnew\t3\tx\t\nflush\n"),
    ("", "new 1 a\r\nnew 2 b\r\nflush\r\n"),
    ("1", "bogus\nFINISH\nfinish now please go\nflush\n"),
    ("1", "x" * 150 + "\nfinish\n"),
    ("1", "new 1 " + "y" * 95 + "\nfinish\n"),
    ("1", "finish"),
    ("1", "status\n" + "z" * 150),
    ("-v 2 2", "block\nblock\nblock\nblock\nblock\nunblock 3\nunblock 1\nflush\nstatus\n"),
    ("-v", "new 1\nnew 4\nnew 2\nfinish\nfinish\nfinish\n"),
]

COMMAND_WEIGHTS = [
    ("new", 14), ("block", 8), ("unblock", 8), ("quantum", 8), ("upgrade", 8),
    ("kill", 4), ("finish", 10), ("flush", 1), ("tick", 12), ("status", 2),
    ("junk", 1),
]


def random_command(rng, names):
    total = sum(w for _, w in COMMAND_WEIGHTS)
    r = rng.randrange(total)
    for cmd, w in COMMAND_WEIGHTS:
        if r < w:
            break
        r -= w
    if cmd == "new":
        prio = rng.choice([1, 2, 3, 4, 4, 2, 0, 5]) if rng.randrange(8) else rng.choice(["x", ""])
        k = rng.randrange(12)
        if k < 4:
            name = rng.choice(["ed", "vi", "cc", "ld", "sh", "make", "init", "cron"])
            name += str(rng.randrange(20))
            names.append(name)
            return "new %s %s" % (prio, name)
        if k == 4:
            return "new %s %s" % (prio, rng.choice(["averylongname", "x" * 12, "P1"]))
        if k == 5:
            return "new %s a b" % prio
        return ("new %s" % prio).strip()
    if cmd == "unblock":
        return rng.choice(["unblock %d" % rng.choice([1, 1, 1, 2, 3, 5, 0]), "unblock",
                           "unblock x"]) if rng.randrange(6) == 0 else "unblock 1"
    if cmd == "upgrade":
        if rng.randrange(8) == 0:
            return rng.choice(["upgrade", "upgrade 1", "upgrade x 1", "upgrade 1 x"])
        return "upgrade %d %d" % (rng.choice([1, 1, 2, 3, 4]), rng.choice([1, 1, 2, 3, 9]))
    if cmd == "kill":
        pool = names + ["P%d" % rng.randint(1, 12), "nobody", ""]
        return ("kill " + rng.choice(pool)).strip()
    if cmd == "tick" and rng.randrange(20) == 0:
        return rng.choice(["tick 99999999999999999999", "new 99999999999999999999",
                           "unblock 99999999999999999999", "tick 3x", "new 2x",
                           "upgrade 1 1.5"])
    if cmd == "tick":
        return rng.choice(["tick", "tick %d" % rng.randint(1, 9), "tick %d" % rng.randint(10, 40),
                           "tick", "tick 0" if rng.randrange(4) == 0 else "tick 2"])
    if cmd == "junk":
        return rng.choice(["nop", "blok", "finish 3", "new 1 a b c", "# remark", "",
                           "status # with a comment", "x" * rng.randint(101, 140)])
    return cmd


def random_args(rng):
    if rng.randrange(15) == 0:
        return rng.choice(["-a", "-q x", "-v -a 2 -q", "1 1 1 1 1", "-v 0 1 0 1 2", "one",
                           "-z", "33", "9 9 9 9", "-q -1 2", "-a"])
    args = []
    if rng.randrange(3) == 0:
        args.append("-v")
    if rng.randrange(3) == 0:
        args += ["-a", str(rng.choice([1, 2, 3, 5, 8]))]
    if rng.randrange(3) == 0:
        args += ["-q", str(rng.choice([1, 2, 3, 4]))]
    for _ in range(rng.choice([0, 1, 2, 3, 4, 4])):
        args.append(str(rng.choice([0, 1, 1, 2, 3, 4])))
    return " ".join(args)


def main():
    rng = random.Random(SEED)
    cases = list(HAND)
    for _ in range(260):
        names = []
        script = [random_command(rng, names) for _ in range(rng.randint(3, 40))]
        if rng.randrange(4):
            script.append("flush")
        text = "\n".join(script)
        if rng.randrange(10):
            text += "\n"
        elif rng.randrange(2):
            text += "\n" + "y" * 120
        cases.append((random_args(rng), text))

    os.makedirs(INPUTS, exist_ok=True)
    for old in os.listdir(INPUTS):
        if old.endswith(".in"):
            os.remove(os.path.join(INPUTS, old))
    lines = []
    for i, (args, script) in enumerate(cases, 1):
        name = "inputs/t%04d.in" % i
        with open(os.path.join(HERE, name), "w", newline="") as f:
            f.write(script)
        lines.append(" ".join(w for w in ["./sched", args, "<", name] if w))
    with open(os.path.join(HERE, "universe.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("%d tests" % len(lines))


if __name__ == "__main__":
    main()
