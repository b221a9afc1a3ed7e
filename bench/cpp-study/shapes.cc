#include "shapes.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

int Log::closed = 0;

std::string Shape::describe(int width) const {
    std::string s = name_;
    while ((int)s.size() < width) s += '.';
    return s + std::to_string(area());
}

int total(const std::vector<Shape *> &shapes) {
    int t = 0;
    for (Shape *s : shapes) t += s->area();
    return t;
}

int total(const std::vector<Shape *> &shapes, int minimum) {
    int t = 0;
    for (Shape *s : shapes)
        if (s->area() >= minimum) t += s->area();
    return t;
}

static Shape *make(const char *spec) {
    int n = std::atoi(spec + 1);
    switch (spec[0]) {
    case 'r': return new Rect(n, n + 1);
    case 's': return new Square(n);
    case 'c': return new Circle(n);
    default: throw std::invalid_argument(spec);
    }
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    std::string mode = argv[1];
    std::vector<Shape *> shapes;
    try {
        for (int i = 2; i < argc; i++) shapes.push_back(make(argv[i]));
    } catch (const std::invalid_argument &e) {
        std::printf("bad shape %s\n", e.what());
        return 0;
    }
    if (mode == "list") {
        for (Shape *s : shapes) std::printf("%s\n", s->describe().c_str());
    } else if (mode == "total") {
        std::printf("%d\n", total(shapes));
    } else if (mode == "big") {
        std::printf("%d\n", total(shapes, 10));
    } else if (mode == "sort") {
        std::sort(shapes.begin(), shapes.end(), [](Shape *a, Shape *b) { return a->area() < b->area(); });
        for (Shape *s : shapes) std::printf("%s ", s->name().c_str());
        std::printf("\n");
    } else if (mode == "max") {
        std::vector<int> areas;
        for (Shape *s : shapes) areas.push_back(s->area());
        std::printf("%d\n", biggest(areas));
    } else if (mode == "scaled") {
        for (Shape *s : shapes) std::printf("%d\n", scale(s->area()));
    }
    for (Shape *s : shapes) delete s;
    std::printf("closed %d\n", Log::closed);
    return 0;
}
