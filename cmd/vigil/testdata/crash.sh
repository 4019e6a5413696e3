#!/bin/sh
# crash.sh HOW ONLY SERVER ARGS... runs SERVER ARGS as a server that dies
# mid-run, for the tests of run/server-exit:
#   HOW = SIG:SECONDS   send it signal SIG (SEGV, ABRT, ...) after SECONDS;
#   HOW = panic:N       (a failpoint build of etcd) panic at the backend
#                       commit after N commits, through gofail's
#                       beforeCommit failpoint.
# ONLY is "-", or a text that must be in one of ARGS for the server to
# die (certify's phase dir, 2-etcd-run): it lives otherwise.
how=$1 only=$2
shift 2
arm=1
if [ "$only" != "-" ]; then
	arm=0
	for a in "$@"; do
		case "$a" in *"$only"*) arm=1 ;; esac
	done
fi
if [ $arm = 1 ]; then
	case "$how" in
	panic:*)
		GOFAIL_FAILPOINTS="beforeCommit=${how#panic:}*off->panic(\"vigil\")"
		export GOFAIL_FAILPOINTS
		;;
	*:*)
		# $$ is the server once exec has run.
		(sleep "${how#*:}" && kill -"${how%%:*}" $$) &
		;;
	esac
fi
exec "$@"
