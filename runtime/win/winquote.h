/*
 * winquote.h - one Windows command line from an argument vector.
 *
 * CreateProcess takes a single string, and the started program splits it
 * again by the rules of CommandLineToArgvW (which the C runtimes follow):
 * blanks separate arguments, double quotes group, and backslashes are
 * literal except in runs that end at a double quote, where each pair
 * stands for one backslash and an odd one escapes the quote.  The first
 * argument, the program, is split differently: up to the next blank, or
 * between a pair of quotes with no escapes at all.
 *
 * winquote_build() writes the string that splits back into exactly the
 * given vector, so an argument can never become two, or an option.
 * Portable C (no Windows headers): the unit tests run it on Linux.
 */
#ifndef OMNIBOX_WIN_WINQUOTE_H
#define OMNIBOX_WIN_WINQUOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

/*
 * The command line for ARGV[0..ARGC) in a new malloc'd string (in *OUT).
 * Returns 0; -1 with *OUT NULL when ARGC is 0, when ARGV[0] holds a double
 * quote (no command line can express one in the program name; nor can a
 * file name hold one) or when memory runs out.
 */
int winquote_build(const wchar_t *const *argv, size_t argc, wchar_t **out);

/*
 * Append argument ARG (the program when FIRST) to OUT, which has room
 * for winquote_arg_len(ARG, FIRST) more characters; no terminator.
 * Returns the number of characters written.
 */
size_t winquote_arg(const wchar_t *arg, bool first, wchar_t *out);

/* How many characters winquote_arg() writes for ARG. */
size_t winquote_arg_len(const wchar_t *arg, bool first);

#endif
