#!/bin/sh
# fakelinux's stand-in for the kernel's scripts/min-tool-version.sh: prints
# the oldest version of a tool this tree accepts. The numbers are those
# Linux 6.1 gives for gcc and llvm (llvm needs more on s390: SRCARCH from
# the environment, as Kbuild exports it). Written for fakelinux.

[ $# -eq 1 ] || { echo "usage: $0 gcc|llvm" >&2; exit 1; }

case $1 in
gcc) echo 5.1.0 ;;
llvm)
	if [ "$SRCARCH" = s390 ]; then echo 15.0.0; else echo 11.0.0; fi ;;
*)
	echo "$1: unknown tool" >&2
	exit 1 ;;
esac
