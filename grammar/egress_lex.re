/*
 * egress_lex.re - the tokens of one egress rule (re2c).
 *
 * A rule has four parts with different lexical rules, so the lexer keeps a
 * mode: the method list up to the first white space, the host, the port
 * from a ':' and the path from the first '/' after the host.  A TCP rule
 * ("tcp HOST:PORT") starts with the word "tcp" (any case) where the methods
 * go; "tcpx" is a (bad) method, being longer, and "tcp,GET" a TCP token that
 * the grammar rejects before the comma.  Every byte ends up in some
 * token; bytes that can never be valid get their own token kinds (BADCHAR,
 * BADPATH, SCHEME, HOSTSPACE, STAR) so that the grammar rejects them and the
 * driver can say precisely what is wrong.
 *
 * The input is bounded, not NUL-terminated, and may hold NUL bytes: YYPEEK
 * returns 0 past the limit, and re2c's end-of-input rule ($, with
 * re2c:eof = 0) checks the limit whenever it sees a 0, so a NUL inside the
 * rule is an ordinary (invalid) byte and the lexer never reads past LIM.
 */
#include <stddef.h>

#include "egress_gram.h"
#include "grammar/egress_internal.h"

enum {
	LEX_METHODS,    /* "GET,POST" */
	LEX_HOST_START, /* first token of the host: a scheme or "*." may appear */
	LEX_HOST,       /* labels and dots, until ':' starts the port or '/' the path */
	LEX_PORT_TAIL,  /* after the port: the path, or an invalid byte */
	LEX_PATH_TAIL,  /* after the path token: only an invalid byte can follow */
};

/*!re2c
	re2c:api = custom;
	re2c:api:style = free-form;
	re2c:define:YYCTYPE = "unsigned char";
	re2c:define:YYPEEK = "(cur < lim ? *cur : 0)";
	re2c:define:YYSKIP = "++cur;";
	re2c:define:YYBACKUP = "mar = cur;";
	re2c:define:YYRESTORE = "cur = mar;";
	re2c:define:YYLESSTHAN = "lim - cur < @@{len}";
	re2c:yyfill:enable = 0;
	re2c:eof = 0;

	ws = [ \t\n\v\f\r];
*/

void
egress_lex_init(struct egress_lexer *lx, const char *text, size_t begin, size_t end)
{
	lx->text = (const unsigned char *)text;
	lx->cur = lx->text + begin;
	lx->lim = lx->text + end;
	lx->mode = LEX_METHODS;
}

static int
lex_methods(struct egress_lexer *lx)
{
	const unsigned char *cur = lx->cur, *lim = lx->lim;
	int kind;

	/*!re2c
		'tcp'            { kind = TK_TCP; goto done; }
		[^, \t\n\v\f\r]+ { kind = TK_METHOD; goto done; }
		","              { kind = TK_COMMA; goto done; }
		ws+              { kind = TK_WS; lx->mode = LEX_HOST_START; goto done; }
		$                { kind = 0; goto done; }
	*/
done:
	lx->cur = cur;
	return kind;
}

static int
lex_host(struct egress_lexer *lx)
{
	const unsigned char *cur = lx->cur, *lim = lx->lim;
	int kind;

	/*!re2c
		[A-Za-z0-9-]+            { kind = TK_LABEL; goto done; }
		"."                      { kind = TK_DOT; goto done; }
		"*"                      { kind = TK_STAR; goto done; }
		":" [^/\x00-\x20\x7f]*   { kind = TK_PORT; lx->mode = LEX_PORT_TAIL; goto done; }
		"/" [^\x00-\x20\x7f]*    { kind = TK_PATH; lx->mode = LEX_PATH_TAIL; goto done; }
		ws+                      { kind = TK_HOSTSPACE; goto done; }
		*                        { kind = TK_BADCHAR; goto done; }
		$                        { kind = 0; goto done; }
	*/
done:
	lx->cur = cur;
	return kind;
}

/* The first token of the host: "*." or a mistaken "scheme://", else as lex_host. */
static int
lex_host_start(struct egress_lexer *lx)
{
	const unsigned char *cur = lx->cur, *lim = lx->lim, *mar;
	int kind;

	lx->mode = LEX_HOST;
	/*!re2c
		[A-Za-z][A-Za-z0-9+-]* "://" { kind = TK_SCHEME; goto done; }
		"*."                         { kind = TK_WILD; goto done; }
		*                            { return lex_host(lx); }
		$                            { kind = 0; goto done; }
	*/
done:
	lx->cur = cur;
	return kind;
}

/* After ":PORT" only a path may follow. */
static int
lex_port_tail(struct egress_lexer *lx)
{
	const unsigned char *cur = lx->cur, *lim = lx->lim;
	int kind;

	/*!re2c
		"/" [^\x00-\x20\x7f]*    { kind = TK_PATH; lx->mode = LEX_PATH_TAIL; goto done; }
		*                        { kind = TK_BADPATH; goto done; }
		$                        { kind = 0; goto done; }
	*/
done:
	lx->cur = cur;
	return kind;
}

/* The path token stops only before a white space or control byte. */
static int
lex_path_tail(struct egress_lexer *lx)
{
	const unsigned char *cur = lx->cur, *lim = lx->lim;
	int kind;

	/*!re2c
		*  { kind = TK_BADPATH; goto done; }
		$  { kind = 0; goto done; }
	*/
done:
	lx->cur = cur;
	return kind;
}

void
egress_lex_next(struct egress_lexer *lx, struct egress_token *tok)
{
	const unsigned char *start = lx->cur;

	switch (lx->mode) {
	case LEX_METHODS:
		tok->kind = lex_methods(lx);
		break;
	case LEX_HOST_START:
		tok->kind = lex_host_start(lx);
		break;
	case LEX_HOST:
		tok->kind = lex_host(lx);
		break;
	case LEX_PORT_TAIL:
		tok->kind = lex_port_tail(lx);
		break;
	default:
		tok->kind = lex_path_tail(lx);
		break;
	}
	tok->offset = (size_t)(start - lx->text);
	tok->length = (size_t)(lx->cur - start);
}
