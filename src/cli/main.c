/* main.c - build/bin/sonde: the command line as a standalone program. */
#include "cli.h"

int main(int argc, char **argv)
{
    sonde_env env = { .python = 0, .package_dir = 0 };
    return sonde_main(argc, argv, &env);
}
