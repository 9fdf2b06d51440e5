#!/bin/sh
# merge_config.sh - merge Kconfig fragments onto a base config.
#
# fakelinux's own implementation of the command line of the kernel's
# scripts/kconfig/merge_config.sh:
#
#   merge_config.sh [-m] [-n] [-r] [-y] [-s] [-O dir] BASE FRAGMENT...
#
# Later values win over earlier ones; each redefinition is reported.  With
# -m the merged file is written to DIR/.config (or $KCONFIG_CONFIG) as is;
# without it, make is run (in the current directory, with O=DIR when -O is
# given) with KCONFIG_ALLCONFIG set to the merged file and alldefconfig (or
# allnoconfig with -n), and values that did not make it are reported.
# Temporary files go to the current directory, as the real script's do:
# run it from a writable directory (the plugin uses the build directory).

set -e

usage() {
	echo "Usage: $0 [OPTIONS] [CONFIG [...]]"
	echo "  -h    display this help text"
	echo "  -m    only merge the fragments, do not execute the make command"
	echo "  -n    use allnoconfig instead of alldefconfig"
	echo "  -r    list redundant entries when merging fragments"
	echo "  -y    make builtin have precedence over modules"
	echo "  -O    dir to put generated output files.  Consider setting \$KCONFIG_CONFIG instead."
	echo "  -s    strict mode. Fail if the fragment redefines any value."
}

RUNMAKE=true
ALLTARGET=alldefconfig
WARNREDUN=false
BUILTIN=false
OUTPUT=.
STRICT=false

while true; do
	case $1 in
	-n) ALLTARGET=allnoconfig; shift ;;
	-m) RUNMAKE=false; shift ;;
	-h) usage; exit 0 ;;
	-r) WARNREDUN=true; shift ;;
	-y) BUILTIN=true; shift ;;
	-s) STRICT=true; shift ;;
	-O)
		if [ -d "$2" ]; then
			OUTPUT=$(printf '%s\n' "$2" | sed 's:/*$::')
			[ -n "$OUTPUT" ] || OUTPUT=/
		else
			echo "output directory $2 does not exist" 1>&2
			exit 1
		fi
		shift 2
		;;
	*) break ;;
	esac
done

if [ "$#" -lt 1 ]; then
	usage
	exit 0
fi

if [ -z "$KCONFIG_CONFIG" ]; then
	if [ "$OUTPUT" != . ]; then
		KCONFIG_CONFIG="$OUTPUT/.config"
	else
		KCONFIG_CONFIG=.config
	fi
fi

INITFILE=$1
shift

TMP_FILE=$(mktemp ./.tmp.config.XXXXXXXXXX)
MERGE_FILE=$(mktemp ./.merge_tmp.config.XXXXXXXXXX)
trap 'rm -f "$TMP_FILE" "$MERGE_FILE" "$TMP_FILE.new"' EXIT

if [ -r "$INITFILE" ]; then
	cat "$INITFILE" > "$TMP_FILE"
else
	echo "The base file '$INITFILE' does not exist. Starting from an empty one..." >&2
	: > "$TMP_FILE"
fi

echo "Using $INITFILE as base"

STRICT_MODE_VIOLATED=false
for ORIG_MERGE_FILE in "$@"; do
	echo "Merging $ORIG_MERGE_FILE"
	if [ ! -r "$ORIG_MERGE_FILE" ]; then
		echo "The merge file '$ORIG_MERGE_FILE' does not exist.  Exit." >&2
		exit 1
	fi
	cat "$ORIG_MERGE_FILE" > "$MERGE_FILE"
	# Pass 1 reads the fragment, pass 2 the merged-so-far file: print the
	# messages on stdout and the new merged file on $TMP_FILE.new.
	rc=0
	awk -v frag="$ORIG_MERGE_FILE" -v warnredun="$WARNREDUN" \
	    -v builtin="$BUILTIN" -v out="$TMP_FILE.new" '
	function sym(line,    s) {
		if (line ~ /^CONFIG_[A-Za-z0-9_]+=/) {
			s = line
			sub(/=.*/, "", s)
			return s
		}
		if (line ~ /^# CONFIG_[A-Za-z0-9_]+ is not set$/) {
			split(line, w, " ")
			return w[2]
		}
		return ""
	}
	# echo with unquoted words, as the original prints these lines
	function words(s) {
		gsub(/[ \t]+/, " ", s)
		sub(/^ /, "", s)
		sub(/ $/, "", s)
		return s
	}
	FILENAME == ARGV[1] {
		fl[++nf] = $0
		s = sym($0)
		if (s != "" && !(s in infrag)) { fsyms[++nfs] = s; infrag[s] = 1 }
		if (s != "") newval[s] = $0
		next
	}
	{
		bl[++nb] = $0
		s = sym($0)
		if (s != "") prevval[s] = $0
	}
	END {
		for (k = 1; k <= nfs; k++) {
			s = fsyms[k]
			if (!(s in prevval))
				continue
			if (builtin == "true" && newval[s] ~ /=m$/ && prevval[s] ~ /=y$/) {
				print "Previous value: " words(prevval[s])
				print "New value: " words(newval[s])
				print "-y passed, will not demote y to m"
				print ""
				keepbase[s] = 1
			} else if (prevval[s] != newval[s]) {
				print "Value of " s " is redefined by fragment " frag ":"
				print "Previous value: " words(prevval[s])
				print "New value: " words(newval[s])
				print ""
				redefined = 1
			} else if (warnredun == "true") {
				print "Value of " s " is redundant by fragment " frag ":"
			}
		}
		for (i = 1; i <= nb; i++) {
			s = sym(bl[i])
			if (s != "" && (s in infrag) && !(s in keepbase))
				continue
			print bl[i] > out
		}
		print "" > out
		for (i = 1; i <= nf; i++) {
			s = sym(fl[i])
			if (s != "" && (s in keepbase))
				continue
			print fl[i] > out
		}
		close(out)
		exit redefined ? 3 : 0
	}' "$MERGE_FILE" "$TMP_FILE" || rc=$?
	case $rc in
	0) ;;
	3) if [ "$STRICT" = true ]; then STRICT_MODE_VIOLATED=true; fi ;;
	*) exit "$rc" ;;
	esac
	mv -f "$TMP_FILE.new" "$TMP_FILE"
done

if [ "$STRICT_MODE_VIOLATED" = true ]; then
	echo "The fragment redefined a value and strict mode had been passed."
	exit 1
fi

if [ "$RUNMAKE" = false ]; then
	cat "$TMP_FILE" > "$KCONFIG_CONFIG"
	echo "#"
	echo "# merged configuration written to $KCONFIG_CONFIG (needs make)"
	echo "#"
	exit 0
fi

OUTPUT_ARG=
if [ "$OUTPUT" != . ]; then
	OUTPUT_ARG="O=$OUTPUT"
fi

${MAKE:-make} KCONFIG_ALLCONFIG="$TMP_FILE" $OUTPUT_ARG $ALLTARGET

# Report the requested values that did not make it (unmet dependencies,
# unknown symbols).
awk '
function sym(line,    s) {
	if (line ~ /^CONFIG_[A-Za-z0-9_]+=/) { s = line; sub(/=.*/, "", s); return s }
	if (line ~ /^# CONFIG_[A-Za-z0-9_]+ is not set$/) { split(line, w, " "); return w[2] }
	return ""
}
FILENAME == ARGV[1] { s = sym($0); if (s != "") { req[s] = $0; n++; order[n] = s }; next }
{ s = sym($0); if (s != "") act[s] = $0 }
END {
	for (i = 1; i <= n; i++) {
		s = order[i]
		if (req[s] != act[s]) {
			print "Value requested for " s " not in final .config"
			print "Requested value:  " req[s]
			print "Actual value:     " act[s]
			print ""
		}
	}
}' "$TMP_FILE" "$KCONFIG_CONFIG"
