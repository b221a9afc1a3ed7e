#define SQUARE(v) ((v) * (v))
#define LIMIT 10
#define SWAP(a, b) do { \
        int t_ = (a);   \
        (a) = (b);      \
        (b) = t_;       \
    } while (0)

static int clamp(int v)
{
    if (v > LIMIT)
        return LIMIT;
    return v;
}
