// A CPU-bound C++ program for the instrumentation overhead benchmark (run.sh):
// what C++ code spends its time on — virtual calls through a class hierarchy,
// templates, lambdas, std::vector/std::string/std::unordered_map, sorting,
// RAII objects and an occasional exception. Deterministic; prints a checksum.
//   ./kernel ROUNDS
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

std::uint64_t state = 88172645463325252ull;

std::uint64_t next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

// an expression tree evaluated through virtual calls
struct Expr {
    virtual ~Expr() = default;
    virtual long eval(long x) const = 0;
    virtual int depth() const { return 1; }
};

struct Const final : Expr {
    explicit Const(long v) : v_(v) {}
    long eval(long) const override { return v_; }
    long v_;
};

struct Var final : Expr {
    long eval(long x) const override { return x; }
};

struct Binary : Expr {
    Binary(std::unique_ptr<Expr> l, std::unique_ptr<Expr> r) : l_(std::move(l)), r_(std::move(r)) {}
    int depth() const override { return 1 + std::max(l_->depth(), r_->depth()); }
    std::unique_ptr<Expr> l_, r_;
};

struct Add final : Binary {
    using Binary::Binary;
    long eval(long x) const override { return l_->eval(x) + r_->eval(x); }
};

struct Mul final : Binary {
    using Binary::Binary;
    long eval(long x) const override { return (l_->eval(x) * r_->eval(x)) % 1000003; }
};

struct Div final : Binary {
    using Binary::Binary;
    long eval(long x) const override {
        long d = r_->eval(x);
        if (d == 0) {
            // now and then an exception unwinds through the evaluation
            if (x % 256 == 255)
                throw std::domain_error("division by zero");
            d = 1;
        }
        return l_->eval(x) / d;
    }
};

std::unique_ptr<Expr> build(int depth) {
    if (depth == 0 || next() % 4 == 0) {
        if (next() % 2)
            return std::make_unique<Var>();
        return std::make_unique<Const>(static_cast<long>(next() % 17));
    }
    auto l = build(depth - 1);
    auto r = build(depth - 1);
    switch (next() % 3) {
    case 0:
        return std::make_unique<Add>(std::move(l), std::move(r));
    case 1:
        return std::make_unique<Mul>(std::move(l), std::move(r));
    default:
        return std::make_unique<Div>(std::move(l), std::move(r));
    }
}

template <typename T, typename Less>
void insertion_sort(std::vector<T> &v, Less less) {
    for (std::size_t i = 1; i < v.size(); ++i) {
        T key = v[i];
        std::size_t j = i;
        while (j > 0 && less(key, v[j - 1])) {
            v[j] = v[j - 1];
            --j;
        }
        v[j] = key;
    }
}

struct Word {
    std::string text;
    int count = 0;
};

// counts the words of generated text, and sorts them by count then text
long words(int n) {
    std::unordered_map<std::string, int> counts;
    std::string w;
    for (int i = 0; i < n; ++i) {
        w.clear();
        int len = 1 + static_cast<int>(next() % 3);
        for (int k = 0; k < len; ++k)
            w.push_back(static_cast<char>('a' + next() % 6));
        ++counts[w];
    }
    std::vector<Word> all;
    all.reserve(counts.size());
    for (const auto &[text, count] : counts)
        all.push_back(Word{text, count});
    insertion_sort(all, [](const Word &a, const Word &b) {
        return a.count != b.count ? a.count > b.count : a.text < b.text;
    });
    long sum = 0;
    for (std::size_t i = 0; i < all.size(); ++i)
        sum += static_cast<long>(i + 1) * all[i].count + static_cast<long>(all[i].text.size());
    return sum;
}

class Histogram {
  public:
    explicit Histogram(int buckets) : cells_(static_cast<std::size_t>(buckets), 0) {}
    void add(long v) {
        std::size_t b = static_cast<std::size_t>((v < 0 ? -v : v) % static_cast<long>(cells_.size()));
        ++cells_[b];
    }
    long checksum() const {
        long s = 0;
        for (std::size_t i = 0; i < cells_.size(); ++i)
            s = s * 31 + cells_[i];
        return s;
    }

  private:
    std::vector<long> cells_;
};

} // namespace

int main(int argc, char **argv) {
    int rounds = argc > 1 ? std::atoi(argv[1]) : 20;
    long total = 0;
    int thrown = 0;
    for (int r = 0; r < rounds; ++r) {
        Histogram h(97);
        auto e = build(12);
        for (long x = 0; x < 2000; ++x) {
            try {
                long v = e->eval(x);
                h.add(v);
            } catch (const std::domain_error &) {
                ++thrown;
                if (e->depth() > 20)
                    break;
            }
        }
        total = total * 7 + h.checksum() + words(4000);
    }
    std::printf("%ld %d\n", total, thrown);
    return 0;
}
