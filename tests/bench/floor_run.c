/*
 * floor_run.c - the least a launcher can be: start ARGV (bwrap) and wait
 * for it, nothing else.  Linked as omnibox-run is (dynamically, with the
 * system's C library), for `make bench`'s floor of the launch (run.sh).
 */
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

int
main(int argc, char **argv)
{
	pid_t pid;
	int status;

	if (argc < 2 || posix_spawnp(&pid, argv[1], NULL, NULL, argv + 1, environ) != 0 ||
	    waitpid(pid, &status, 0) < 0)
		return 127;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
