// testlib_cxx.cpp - a C++ library whose blocking function is a template
// member in an anonymous namespace: its symbol demangles to
// "(anonymous namespace)::Kernel<3>::run(int, int)".
#include <unistd.h>

namespace {
template <int N> struct Kernel {
    __attribute__((noipa)) static int run(int fd, int n)
    {
        char c = 0;
        ssize_t got = read(fd, &c, 1);   // blocks here
        return (int)got + c + n * N;
    }
};
}  // namespace

extern "C" __attribute__((noipa)) int tlx_outer(int ready_fd, int fd, int n)
{
    if (write(ready_fd, "ready\n", 6) != 6)
        return -1;
    return Kernel<3>::run(fd, n) + 1;
}
