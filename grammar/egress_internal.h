/*
 * egress_internal.h - what the egress lexer, parser and driver share.
 *
 * Not part of the public interface (that is egress.h).  The lexer
 * (egress_lex.re) cuts one rule into tokens, the lemon grammar
 * (egress_gram.y) decides the structure and calls back into the driver
 * (egress.c) for the semantic checks, the error messages and the
 * construction of the struct egress_rule.
 */
#ifndef OMNIBOX_EGRESS_INTERNAL_H
#define OMNIBOX_EGRESS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "egress.h"

/*
 * One token: KIND is a TK_* code from the generated egress_gram.h (0 at the
 * end of the input); OFFSET and LENGTH locate its bytes in the rule text.
 * Tokens own nothing.
 */
struct egress_token {
	int kind;
	size_t offset, length;
};

/* The lexer's position inside one rule.  It never reads outside [cur, lim). */
struct egress_lexer {
	const unsigned char *text; /* start of the rule text; offsets count from here */
	const unsigned char *cur;  /* next byte to read */
	const unsigned char *lim;  /* one past the last byte to read */
	int mode;		   /* which part of the rule comes next */
};

/* Lex TEXT[BEGIN..END); offsets in tokens stay relative to TEXT. */
void egress_lex_init(struct egress_lexer *lx, const char *text, size_t begin, size_t end);

/* The next token; kind 0 at the end of the input (and again after it). */
void egress_lex_next(struct egress_lexer *lx, struct egress_token *tok);

/* The parts of the host that the grammar hands to the driver. */
struct egress_host {
	size_t offset, length; /* the domain, without "*." */
	bool wildcard;
};

/* The parse of one rule, shared by the grammar actions and the driver. */
struct egress_parse {
	struct arena *arena;	  /* owns the strings of RULE */
	const char *text;	  /* the whole rule text */
	struct egress_rule rule;  /* filled by the top-level grammar action */
	struct egress_error *err; /* filled by the first failure */
	struct egress_token prev; /* the last token the parser accepted */
	bool failed;		  /* ERR holds a message; later ones are dropped */
	bool accepted;		  /* the grammar reduced the whole rule */
	bool tcp;		  /* the rule starts with "tcp": messages speak of TCP */
};

/*
 * Run the lemon parser over the tokens of LX, stopping at the first error.
 * Defined in egress_gram.y so that the parser object can live on the stack.
 */
void egress_gram_parse(struct egress_parse *st, struct egress_lexer *lx);

/* Semantic actions and error reporting, called from the grammar (egress.c). */
unsigned egress_check_method(struct egress_parse *st, const struct egress_token *word);
void egress_check_label(struct egress_parse *st, const struct egress_token *label);
void egress_check_host(struct egress_parse *st, const struct egress_host *host);
void egress_check_path(struct egress_parse *st, const struct egress_token *path);
unsigned egress_check_port(struct egress_parse *st, const struct egress_token *port);
void egress_build_rule(struct egress_parse *st, unsigned methods, const struct egress_host *host,
		       unsigned port, const struct egress_token *path);
void egress_build_tcp_rule(struct egress_parse *st, const struct egress_host *host,
			   unsigned port);
void egress_report_syntax_error(struct egress_parse *st, const struct egress_token *tok);
void egress_report_internal_error(struct egress_parse *st, const struct egress_token *tok);

#endif
