#!/bin/sh
# watch.sh SECONDS COMMAND [ARG...] - COMMAND, ended if it runs longer than
# SECONDS, once the processes still running have been listed: a suite that
# hangs fails within its limit, naming where it hung, instead of holding
# the whole run until the run's own limit.  Its exit status is COMMAND's,
# or 124 when ended.  COMMAND runs in a session of its own, so that ending
# it ends whatever of it is left in that session.
set -u
limit=$1
shift
what=$1
start=$(date +%s)
setsid -w "$@" &
pid=$!
(
	i=0
	while [ "$i" -lt "$limit" ]; do
		sleep 1
		kill -0 "$pid" 2>/dev/null || exit 0
		i=$((i + 1))
	done
	echo "watch: $* ran over its $limit s; the processes then:"
	ps -eo pid,ppid,pgid,etimes,stat,wchan:24,args --forest |
		awk '$1 != 2 && $2 != 2' | cut -c 1-240
	kill -9 -"$pid" 2>/dev/null
) &
watcher=$!
wait "$pid"
rc=$?
kill "$watcher" 2>/dev/null
wait "$watcher" 2>/dev/null
if [ "$rc" = 137 ] && [ $(($(date +%s) - start)) -ge "$limit" ]; then
	rc=124
fi
echo "watch: $what: $(($(date +%s) - start)) s, exit $rc"
exit "$rc"
