/*
 * floor_init.c - the least a sandbox's first process can be: run ARGV,
 * nothing else.  Built as omnibox-init is (static, with musl where there
 * is musl-gcc), for `make bench`'s floor of the launch (run.sh).
 */
#include <unistd.h>

int
main(int argc, char **argv)
{
	if (argc < 2)
		return 127;
	execv(argv[1], argv + 1);
	return 127;
}
