/*
 * egress_gram.y - the structure of one egress rule (lemon).
 *
 *   rule    = methods WS host [port] [path]
 *           | TCP WS host PORT
 *   methods = METHOD { COMMA METHOD }
 *   host    = [WILD] LABEL { DOT LABEL }
 *
 * Tokens come from egress_lex.re.  The actions only pass spans of the rule
 * text to the driver (egress.c), which checks them and builds the rule; a
 * syntax error is turned into a precise message there from the offending
 * token and the one before it.  Every list is left-recursive, so the parser
 * stack stays a few entries deep however long the rule is.
 */

%name egress_gram
%token_prefix TK_
%token_type {struct egress_token}
%extra_argument {struct egress_parse *st}
%start_symbol rule

%include {
#include <assert.h>
#include <stddef.h>

#include "grammar/egress_internal.h"

/* The parser object lives on the caller's stack; no allocation. */
#define egress_gram_ENGINEALWAYSONSTACK 1
}

/* Every byte of a rule becomes one of these; the last five are never valid. */
%token METHOD COMMA WS WILD LABEL DOT PORT PATH TCP.
%token SCHEME STAR HOSTSPACE BADCHAR BADPATH.

%syntax_error {
	egress_report_syntax_error(st, &TOKEN);
}

%stack_overflow {
	egress_report_internal_error(st, &st->prev);
}

%parse_accept {
	st->accepted = true;
}

%type methods {unsigned}
%type method {unsigned}
%type host {struct egress_host}
%type domain {struct egress_host}
%type path {struct egress_token}
%type port {unsigned}

rule ::= methods(M) WS host(H) port(N) path(P). {
	egress_build_rule(st, M, &H, N, &P);
}

/* A TCP stream: no methods, no path, and the port is required. */
rule ::= TCP WS host(H) PORT(T). {
	egress_build_tcp_rule(st, &H, egress_check_port(st, &T));
}

/* Without a port: 0, the default of the request's kind (443 or 80). */
port(N) ::= . {
	N = 0;
}
port(N) ::= PORT(T). {
	N = egress_check_port(st, &T);
}

methods(A) ::= method(M). {
	A = M;
}
methods(A) ::= methods(B) COMMA method(M). {
	A = B | M;
}

method(M) ::= METHOD(W). {
	M = egress_check_method(st, &W);
}

host(H) ::= WILD domain(D). {
	H = D;
	H.wildcard = true;
	egress_check_host(st, &H);
}
host(H) ::= domain(D). {
	H = D;
	egress_check_host(st, &H);
}

domain(D) ::= LABEL(L). {
	egress_check_label(st, &L);
	D.offset = L.offset;
	D.length = L.length;
	D.wildcard = false;
}
domain(D) ::= domain(B) DOT LABEL(L). {
	egress_check_label(st, &L);
	D = B;
	D.length = L.offset + L.length - B.offset;
}

/* A rule without a path allows every path: kind 0 marks "not given". */
path(P) ::= . {
	P.kind = 0;
	P.offset = 0;
	P.length = 0;
}
path(P) ::= PATH(T). {
	egress_check_path(st, &T);
	P = T;
}

%code {
void
egress_gram_parse(struct egress_parse *st, struct egress_lexer *lx)
{
	yyParser parser;
	struct egress_token tok;

	egress_gramInit(&parser);
	do {
		egress_lex_next(lx, &tok);
		if (tok.kind == TK_TCP && st->prev.kind == 0)
			st->tcp = true;
		egress_gram(&parser, tok.kind, tok, st);
		st->prev = tok;
	} while (tok.kind != 0 && !st->failed);
	egress_gramFinalize(&parser);
}
}
