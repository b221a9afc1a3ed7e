#!/usr/bin/env python3
"""A C file of N branchy functions (loops, a switch with fall-through,
short-circuit decisions, calls), all function bodies: the front end's
throughput input of issue 30. The body is the criterion bench's
(`crates/retest-lang-c/benches/cfg_build.rs`, `generated`).

usage: gen-functions.py N > gen.c
"""
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
out = ["#include <stdio.h>\n#include <string.h>\n"]
for i in range(n):
    out.append(
        f"int f{i}(int a, int b, const char *p) {{\n"
        "\tint s = 0, k;\n"
        "\tfor (k = 0; k < a; k++) {\n"
        "\t\tif ((k & 1) && (b > k || p[k % 3] == 'x'))\n\t\t\tcontinue;\n"
        "\t\tswitch (k % 4) {\n\t\tcase 0: s += k; break;\n\t\tcase 1: s -= b;\n"
        "\t\tcase 2: s ^= 7; break;\n\t\tdefault: s++;\n\t\t}\n"
        "\t}\n"
        "\twhile (s > 100 && !(s & 3)) s /= 2;\n"
        f"\tdo {{ s--; }} while (s > {i} % 17);\n"
        "\tif (strlen(p) > 3) printf(\"%d\\n\", s);\n"
        "\treturn s > 0 ? s : -s;\n}\n"
    )
sys.stdout.write("".join(out))
