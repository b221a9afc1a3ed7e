/* Listings 1 and 2 of Kauffman et al., "Annotating Control-Flow Graphs for
   Formalized Test Coverage Criteria". */
int listing1(int a, int b)
{
    int x;
    x = 0;
    if (a && b) {
        x = 1;
    }
    return x;
}

int listing2(int a, int b, int c)
{
    int x;
    x = ((a && b) || c);
    return x;
}
