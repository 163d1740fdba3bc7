int puts(const char *);
static const char *msg = "regression seed: feature string";
__attribute__((noinline)) int leaf(int x) { puts(msg); return x + 1; }
__attribute__((noinline)) int mid(int x) { return leaf(x) * 3; }
int main(int argc, char **argv) { (void)argv; return mid(argc); }
