#!/bin/sh
# fake-dtc.sh IN.dts OUT.dtb - stands in for dtc.
#
# Writes a minimal but valid flattened device tree (version 17): a root node
# with one property, "model", taken from the first `model = "..."` of the
# (preprocessed) source.  Only sh and printf, so no dtc is needed.
set -e

in=$1
out=$2

model=$(sed -n 's/^[[:space:]]*model[[:space:]]*=[[:space:]]*"\([^"]*\)".*/\1/p' "$in" | head -n 1)
[ -n "$model" ] || model=fakelinux

# u32 N: N as 4 big-endian bytes
u32() {
	printf "$(printf '\\%03o\\%03o\\%03o\\%03o' \
		$(($1 >> 24 & 255)) $(($1 >> 16 & 255)) $(($1 >> 8 & 255)) $(($1 & 255)))"
}

len=$((${#model} + 1))		# with the terminating NUL
padded=$(((len + 3) / 4 * 4))
struct_size=$((28 + padded))	# begin node, name, prop, len, nameoff, value, end node, end
strings_size=6			# "model\0"
off_rsvmap=40
off_struct=56
off_strings=$((off_struct + struct_size))
total=$((off_strings + strings_size))

{
	u32 3490578157		# magic 0xd00dfeed
	u32 $total
	u32 $off_struct
	u32 $off_strings
	u32 $off_rsvmap
	u32 17			# version
	u32 16			# last compatible version
	u32 0			# boot cpu
	u32 $strings_size
	u32 $struct_size
	u32 0; u32 0; u32 0; u32 0	# empty memory reservation map
	u32 1			# FDT_BEGIN_NODE
	u32 0			# "" (root), padded
	u32 3			# FDT_PROP
	u32 $len
	u32 0			# name offset of "model"
	printf '%s' "$model"
	i=$((len - 1))
	while [ $i -lt $padded ]; do printf '\000'; i=$((i + 1)); done
	u32 2			# FDT_END_NODE
	u32 9			# FDT_END
	printf 'model\000'
} > "$out.tmp"
mv -f "$out.tmp" "$out"
