// A small C++ program for the C++ change study (bench/cpp-study/run.sh):
// classes with virtual methods, a template, lambdas, exceptions, destructors
// with side effects, default arguments, overloads and inline header code.
#pragma once
#include <string>
#include <vector>

inline int scale(int x) { return x * 2; }

struct Log {
    static int closed;
};

class Shape {
public:
    explicit Shape(std::string name) : name_(std::move(name)) {}
    virtual ~Shape() { Log::closed++; }
    virtual int area() const = 0;
    virtual std::string describe(int width = 8) const;
    const std::string &name() const { return name_; }

protected:
    std::string name_;
};

class Rect : public Shape {
public:
    Rect(int w, int h) : Shape("rect"), w_(w), h_(h) {}
    int area() const override { return w_ * h_; }

protected:
    int w_, h_;
};

class Square : public Rect {
public:
    explicit Square(int s) : Rect(s, s) { name_ = "square"; }
};

class Circle : public Shape {
public:
    explicit Circle(int r) : Shape("circle"), r_(r) {}
    int area() const override { return 3 * r_ * r_; }

private:
    int r_;
};

template <typename T> T biggest(const std::vector<T> &v) {
    T best = v.at(0);
    for (const T &x : v)
        if (x > best) best = x;
    return best;
}

int total(const std::vector<Shape *> &shapes);
int total(const std::vector<Shape *> &shapes, int minimum);
