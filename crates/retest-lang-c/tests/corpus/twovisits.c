/* twovisits and twovisits' (002 Fig. 5): both print 1 for x == 0 in the
   original; the modified version prints 2. For every other x they agree. */
#include <stdio.h>

void twovisits(int x)
{
    int y;
    if (x == 0)             /* P1 */
        x = 1;              /* S2 */
    y = x;                  /* S3 */
    printf("%d\n", y);      /* S4 */
}

void twovisits2(int x)
{
    int y;
    if (x == 0) {           /* P1' */
        x = 1;              /* S2' */
        printf("2\n");      /* S5' */
    } else {
        y = x;              /* S3' */
        printf("%d\n", y);  /* S4' */
    }
}
