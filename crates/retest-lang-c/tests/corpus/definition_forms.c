/* Function definitions in the forms C allows: attributes anywhere, a storage class without a type, declarators that return pointers to functions, definitions a macro writes, old-style lists with other types. */
#include <stdlib.h>
__attribute__((noinline)) static int f1(void) { return 1; }
static __attribute__((unused)) int f2(void) { return 2; }
int __attribute__((cold)) f3(void) { return 3; }
void f4(void) __attribute__((noreturn));
void f4(void) { exit(1); }
static f5(a) { return a; }
extern f6() { return 6; }
const f7() { return 7; }
static f8(void) { return 0; }
inline static int f9(void) { return 9; }
int (*f10(void))(void) { return f1; }
_Noreturn void f11(void) { abort(); }
#define DEF(n) int n(void) { return __LINE__; }
DEF(m1) DEF(m2)
static int f12(int x) __attribute__((unused));
static int f12(int x) { return x; }
unsigned long long f13(register int n) { return n; }
struct s { int a; } f14(void) { struct s r = {1}; return r; }
enum e { A, B } f15(void) { return A; }
int f16(int n, int a[static n]) { return a[0]; }
int f17(x, y) int x; double y; { return x + (int) y; }
int f18(void) asm("f18_alias");
int f18(void) { return 18; }
