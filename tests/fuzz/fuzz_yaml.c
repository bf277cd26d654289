/*
 * fuzz_yaml.c - libFuzzer target for the YAML front end.
 *
 * Any input must either compile or produce diagnostics, never crash, leak
 * or read out of bounds; a compiled policy must survive every emitter and
 * every terminal selection.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "compiler/policy.h"
#include "emitters/diff.h"
#include "emitters/emit.h"
#include "emitters/explain.h"
#include "emitters/query.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena *a = arena_new();
	const char *text = (const char *)data;
	struct policy *p;
	struct diag d;
	FILE *sink;

	diag_init(&d, a, "fuzz.yaml", text, size);
	p = policy_compile(a, &d, "fuzz.yaml", text, size);
	if (p) {
		for (const struct emitter *e = emitters; e->name; e++) {
			/* The seccomp filter does not depend on the policy: skip its cost. */
			if (!strncmp(e->name, "seccomp", 7))
				continue;
			for (int t = 0; t < TARGET_COUNT; t++) {
				struct textbuf out = {0};

				if (e->targets & TARGET_BIT(t))
					e->emit(p, (enum target)t, &d, &out);
				tb_free(&out);
			}
		}
		/* --explain, --query and --diff read the same IR. */
		{
			static const char *const queries[] = {
			    "read .env", "write .git/hooks/pre-commit", "write ~/.bashrc",
			    "exec /usr/bin/ssh", "GET https://api.github.com/repos/x/y?q=1",
			    "PUT http://a.example.com:8080/x/../y", NULL};
			struct textbuf out = {0};
			struct diff_list w, n;
			bool all;

			for (int t = 0; t < TARGET_COUNT; t++) {
				explain_target(p, (enum target)t, &out, &all);
				for (size_t q = 0; queries[q]; q++) {
					struct query qq;
					struct decision dd;
					char err[128];

					if (query_parse(a, queries[q], &qq, err, sizeof(err)) == 0)
						query_decide(a, p, (enum target)t, &qq, &dd);
				}
			}
			diff_policies(a, p, p, &w, &n);
			diff_format(&w, &n, "json", "a", "b", &out);
			tb_free(&out);
		}
		for (size_t i = 0; i < p->n_terminals; i++) {
			struct policy *tp = policy_select_terminal(a, &d, p, p->terminals[i].name);
			struct textbuf out = {0};

			if (tp)
				emit_ir(tp, TARGET_LINUX, &d, &out);
			tb_free(&out);
		}
	}
	/* Printing walks the source for each caret: exercise it too. */
	sink = fopen("/dev/null", "w");
	if (sink) {
		diag_print(&d, sink, true);
		fclose(sink);
	}
	arena_free(a);
	return 0;
}
