int g(int);

int branches(int a, int b, int c, int d) {
  int x = 0;
  if ((a && b) || c) { x = 1; }
  if (!(a || b) || c) { x += 2; } else { x -= 1; }
  while (a > 0 && !b) { a--; }
  do { x--; } while (x > 0 && (a || d));
  for (int i = 0; i < c || b; i++) { x += g(i); if (x > 10) break; }
  x = (a || b) + (c && d);
  if (a) { if (b) { x = 7; } }
  return x;
}

int nested(int a, int b, int c) {
  if (c && g(a && b)) return 1;
  if (a ? b : c) return 2;
  return 0;
}
