/*
 * seccomp_gen.c - build-time tool: write the seccomp outputs that depend on
 * no policy (seccomp.h, enum seccomp_output) into a directory, one file
 * each, built by seccomp_output_build() from the tables.  omnibox-compile
 * carries what it writes (seccomp_blobs.S, seccomp_carried.c).
 *
 *   seccomp_gen DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../compiler/base/fileio.h"
#include "seccomp.h"

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fputs("usage: seccomp_gen DIR\n", stderr);
		return 2;
	}
	for (int k = 0; k < SECCOMP_OUT_COUNT; k++) {
		struct textbuf out = {0};
		char err[256], *path;
		int rc;

		if (seccomp_output_build((enum seccomp_output)k, &out, err, sizeof(err)) < 0) {
			fprintf(stderr, "seccomp_gen: %s: %s\n", seccomp_output_file[k], err);
			return 1;
		}
		if (asprintf(&path, "%s/%s", argv[1], seccomp_output_file[k]) < 0)
			abort();
		rc = file_write_atomic(path, out.data ? out.data : "", out.len, true);
		if (rc < 0) {
			fprintf(stderr, "seccomp_gen: %s: %s\n", path, strerror(-rc));
			return 1;
		}
		free(path);
		tb_free(&out);
	}
	return 0;
}
