/* main.c - build/bin/sonde: the command line as a standalone program. */
#include "cli.h"
#include "../sampler/native/session.h"

int main(int argc, char **argv)
{
    sonde_env env = { .python = 0, .package_dir = 0, .native = &sonde_native_sampler };
    return sonde_main(argc, argv, &env);
}
