/* Procedure avg of Rothermel & Harrold, "A Safe, Efficient Regression Test
   Selection Technique", Fig. 1, ported to C. Statement labels as in the paper. */
#include <stdio.h>

#define MAXN 100

extern double calcavg(int *numarray, int count);

double avg(FILE *fileptr)
{
    int count, n;
    int numarray[MAXN];
    double average;

    count = 0;                              /* S1 */
    fscanf(fileptr, "%d", &n);              /* S2 */
    while (!feof(fileptr)) {                /* P3 */
        if (n < 0)                          /* P4 */
            return -1;                      /* S5 */
        else {
            numarray[count] = n;            /* S6 */
            count++;                        /* S7 */
        }
        fscanf(fileptr, "%d", &n);          /* S8 */
    }
    average = calcavg(numarray, count);     /* S9 */
    return average;                         /* S10 */
}
