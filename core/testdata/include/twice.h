// twice.h: a header found through ProgramOptions.IncludePaths in tests.
#define TWICE(x) ((x) * 2)
