/* pathological and pathological' (002 Fig. 6): each loop first increments x,
   then tests it. Inputs 0 and -2 print 1 and 1 in the original, 1 and 3 in the
   modified version; the multiply-visited-node condition holds. */
#include <stdio.h>

int pathological(int x)
{
    while (++x < 0) {           /* P1 */
        while (++x < 0)         /* P2 */
            ;
    }
    printf("%d\n", x);          /* S4 */
    return 0;
}

int pathological2(int x)
{
    while (++x < 0) {           /* P1' */
inner:
        while (++x < 0)         /* P2' */
            ;
        while (++x < 0)         /* P3' */
            goto inner;
        x = x + 2;              /* P4' */
        break;
    }
    printf("%d\n", x);          /* S4' */
    return 0;
}
