# autoconf.awk - .config -> include/generated/autoconf.h, as Kbuild writes it:
#   CONFIG_X=y -> #define CONFIG_X 1        CONFIG_X=m -> #define CONFIG_X_MODULE 1
#   CONFIG_X="s" / 123 / 0x1f -> #define CONFIG_X "s" / 123 / 0x1f
BEGIN {
	print "/*"
	print " * Automatically generated file; DO NOT EDIT."
	print " */"
}
/^CONFIG_[A-Za-z0-9_]+=/ {
	name = $0
	sub(/=.*/, "", name)
	v = substr($0, length(name) + 2)
	if (v == "y")
		print "#define " name " 1"
	else if (v == "m")
		print "#define " name "_MODULE 1"
	else if (v != "")
		print "#define " name " " v
}
