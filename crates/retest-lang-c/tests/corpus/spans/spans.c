#include "defs.h"

int spans(int a, int b)
{
    int total = SQUARE(a);
    if (a <
        b)
        SWAP(a, b);
    total = total +
        clamp(
            b);
#include "body.inc"
    while (total > LIMIT)
        total--;
    return SQUARE(
        total);
}
