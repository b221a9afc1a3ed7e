// C++ ways to leave code part-way: an exception unwinding through three
// frames, an uncaught one (std::terminate, SIGABRT), std::exit, std::thread and
// std::async. Run as `./faults MODE`.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <stdexcept>
#include <thread>

static int depth3(int v) {
    if (v > 0)
        throw std::runtime_error("deep");
    return v;
}

static int depth2(int v) {
    int r = depth3(v);
    std::puts("depth2 after");
    return r;
}

static int depth1(int v) {
    int r = depth2(v);
    std::puts("depth1 after");
    return r;
}

static void leave(int code) {
    std::puts("leaving");
    std::exit(code);
}

static int worker(int v) {
    int s = 0;
    for (int i = 0; i < v; ++i)
        s += i;
    return s;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (std::strcmp(mode, "unwind") == 0) {
        try {
            depth1(1);
        } catch (const std::exception &e) {
            std::printf("caught %s\n", e.what());
        }
        return 0;
    }
    if (std::strcmp(mode, "terminate") == 0) {
        depth1(1);
        return 0;
    }
    if (std::strcmp(mode, "exit") == 0)
        leave(3);
    if (std::strcmp(mode, "thread") == 0) {
        int r = 0;
        std::thread t([&r] { r = worker(4); });
        t.join();
        std::printf("%d\n", r);
        return 0;
    }
    if (std::strcmp(mode, "async") == 0) {
        auto f = std::async(std::launch::async, worker, 5);
        std::printf("%d\n", f.get());
        return 0;
    }
    return 1;
}
