#!/usr/bin/env python3
"""The ten C++-specific changes of the study: `changes.py NAME DIR` applies
change NAME to the copy of the program in DIR; `changes.py` lists them."""
import sys

CHANGES = {
    "override-added": ("shapes.h", "    explicit Square(int s) : Rect(s, s) { name_ = \"square\"; }\n",
                       "    explicit Square(int s) : Rect(s, s) { name_ = \"square\"; }\n    int area() const override { return w_ * w_ + 1; }\n"),
    "base-method": ("shapes.cc", "while ((int)s.size() < width) s += '.';", "while ((int)s.size() < width) s += '_';"),
    "member-initialiser": ("shapes.h", "Shape(\"circle\"), r_(r) {}", "Shape(\"circle\"), r_(r + 1) {}"),
    "destructor-side-effect": ("shapes.h", "virtual ~Shape() { Log::closed++; }", "virtual ~Shape() { Log::closed += 2; }"),
    "template-specialisation": ("shapes.h", "int total(const std::vector<Shape *> &shapes);",
                                "template <> inline int biggest(const std::vector<int> &v) { return v.back(); }\n\nint total(const std::vector<Shape *> &shapes);"),
    "throw-or-handler": ("shapes.cc", "} catch (const std::invalid_argument &e) {", "} catch (const std::logic_error &e) {\n        std::printf(\"logic \");"),
    "lambda-comparator": ("shapes.cc", "return a->area() < b->area();", "return a->area() > b->area();"),
    "default-argument": ("shapes.h", "describe(int width = 8) const;", "describe(int width = 9) const;"),
    "new-overload": ("shapes.h", "int total(const std::vector<Shape *> &shapes);",
                     "int total(const std::vector<Shape *> &shapes);\ninline int total(std::vector<Shape *> &shapes) { return -(int)shapes.size(); }"),
    "inline-header-function": ("shapes.h", "inline int scale(int x) { return x * 2; }", "inline int scale(int x) { return x * 3; }"),
}

if len(sys.argv) == 1:
    print("\n".join(CHANGES))
    sys.exit(0)
name, d = sys.argv[1], sys.argv[2]
f, old, new = CHANGES[name]
path = d + "/" + f
text = open(path).read()
assert text.count(old) == 1, (name, old)
open(path, "w").write(text.replace(old, new))
