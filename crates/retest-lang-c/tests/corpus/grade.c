/* calcGrade of Chittimalli & Harrold (004), Figs. 1-3, ported to C.
   Versions selected with -DGRADE_V=0, 1 or 2. */
#include <stdio.h>

#ifndef GRADE_V
#define GRADE_V 0
#endif

int calcGrade(int finalScore, int midTermScore)
{
    int grade = 0;                          /* s1 */
    if (finalScore > 70) {                  /* s2 */
        if (midTermScore > 80) {            /* s3 */
            grade = 4;                      /* s4 */
        } else {
            grade = 3;                      /* s5 */
        }
#if GRADE_V == 0
    } else if (finalScore < 50) {           /* s6 */
        grade = 2;                          /* s7 */
    } else {
        grade = 3;                          /* s8 */
    }
#elif GRADE_V == 1
    } else if (finalScore > 60) {           /* s6: change c1 */
        grade = 3;                          /* s7 */
    } else if (finalScore < 35) {           /* s8: change c2 */
        grade = 1;                          /* s9 */
    } else {
        grade = 2;                          /* s10 */
    }
#else
    } else if (finalScore > 60) {           /* s6 */
        grade = 3;                          /* s7 */
    } else if (finalScore < 30) {           /* s8: change c3 */
        grade = 1;                          /* s9 */
    } else {
        grade = 2;                          /* s10 */
    }
#endif
    printf("Grade = %d\n", grade);          /* s9 / s11 */
    return grade;                           /* s10 / s12 */
}
