# conf.awk - fakelinux's Kconfig engine (POSIX awk; mawk, gawk, busybox).
#
#   awk -f conf.awk -v mode=MODE -v kconfig=Kconfig [config files...] > .config
#
# Reads the Kconfig file (a small subset of the real language, below), then
# the config files named as operands (later ones win) and prints the
# resulting .config.  The environment supplies $(VAR) references and srctree.
#
# MODE:
#   olddefconfig, defconfig  symbols not set in the input take their default
#   allnoconfig, allyesconfig, allmodconfig, alldefconfig
#                            symbols with a prompt and not set in the input
#                            (KCONFIG_ALLCONFIG) become n / y / m / default
#   savedefconfig            print only the prompted symbols whose value
#                            differs from their default
#
# Kconfig subset:
#   mainmenu "title"          source "file"           # comment
#   config NAME | menuconfig NAME
#     bool|tristate|string|int|hex ["prompt"]
#     def_bool EXPR | def_tristate EXPR    (a type and a default, no prompt)
#     prompt "text"
#     depends on EXPR          (repeatable; the dependencies are and-ed)
#     default VALUE [if EXPR]  (the first whose condition holds wins)
#     help                     (followed by indented text)
#     modules                  (accepted; MODULES is always the modules symbol)
#   menu "x" / endmenu, comment "x", if EXPR / endif
#   EXPR: TERM [&& TERM]..., TERM: [!]SYMBOL | y | m | n
#
# Evaluation follows Kconfig: a symbol whose dependencies are n is not
# written at all, nor is a symbol without a prompt whose value is n (or,
# for string/int/hex, that has no default); a symbol without a prompt
# ignores input values; unknown
# symbols are dropped silently; m becomes y when MODULES is not y; a
# tristate depending on an m symbol is at most m; an invalid value is
# warned about ("<file>:<line>:warning: symbol value 'm' invalid for X") and
# ignored.

function die(msg) {
	printf "%s\n", msg > "/dev/stderr"
	failed = 1
	exit 1
}

function warn(msg) {
	printf "%s\n", msg > "/dev/stderr"
}

function trim(s) {
	sub(/^[ \t]+/, "", s)
	sub(/[ \t]+$/, "", s)
	return s
}

# Replace $(NAME) with the environment variable NAME.
function expand(s,    out, name) {
	out = ""
	while (match(s, /\$\([A-Za-z_][A-Za-z0-9_]*\)/)) {
		name = substr(s, RSTART + 2, RLENGTH - 3)
		out = out substr(s, 1, RSTART - 1) ENVIRON[name]
		s = substr(s, RSTART + RLENGTH)
	}
	return out s
}

# "a \"b\"" -> a "b"
function unquote(s,    out, c, i) {
	s = trim(s)
	if (substr(s, 1, 1) != "\"")
		return s
	s = substr(s, 2)
	out = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\\") {
			i++
			out = out substr(s, i, 1)
		} else if (c == "\"") {
			break
		} else {
			out = out c
		}
	}
	return out
}

# a "b" -> "a \"b\"" (a loop: backslashes in gsub replacements differ
# between awks)
function quote(s,    out, c, i) {
	out = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\\" || c == "\"")
			out = out "\\"
		out = out c
	}
	return "\"" out "\""
}

# Split 'TEXT if EXPR' (outside quotes) into the globals split_val/split_cond.
function split_if(s,    i, c, inq) {
	inq = 0
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\\" && inq) { i++; continue }
		if (c == "\"") inq = !inq
		if (!inq && substr(s, i, 3) ~ /^[ \t]if$/ && substr(s, i + 3, 1) ~ /^[ \t]$/) {
			split_val = trim(substr(s, 1, i - 1))
			split_cond = trim(substr(s, i + 3))
			return
		}
	}
	split_val = trim(s)
	split_cond = ""
}

function and_expr(a, b) {
	if (a == "") return b
	if (b == "") return a
	return a " && " b
}

function check_expr(e, where,    n, t, i) {
	if (e ~ /\|\||[()=<>]/)
		die(where ": unsupported expression '" e "' (only [!]SYMBOL && ...)")
}

function read_kconfig(file,    line, lineno, where, kw, rest, n, parts, t, path) {
	lineno = 0
	if ((getline line < file) < 0)
		die("Kconfig: can't open file \"" file "\"")
	do {
		lineno++
		where = file ":" lineno
		if (inhelp) {
			if (line ~ /^[ \t]/ || line ~ /^$/)
				continue
			inhelp = 0
		}
		line = trim(line)
		if (line == "" || line ~ /^#/)
			continue
		kw = line
		sub(/[ \t].*/, "", kw)
		rest = trim(substr(line, length(kw) + 1))
		if (kw == "config" || kw == "menuconfig") {
			cur = rest
			if (!(cur in type)) {
				nsyms++
				order[nsyms] = cur
				type[cur] = ""
				deps[cur] = ifdeps
				ndefs[cur] = 0
			}
		} else if (kw == "bool" || kw == "tristate" || kw == "string" || kw == "int" || kw == "hex") {
			if (cur == "") die(where ": '" kw "' outside a config entry")
			type[cur] = kw
			split_if(expand(rest))
			if (split_val != "") {
				prompt[cur] = unquote(split_val)
				promptcond[cur] = split_cond
			}
		} else if (kw == "def_bool" || kw == "def_tristate") {
			if (cur == "") die(where ": '" kw "' outside a config entry")
			type[cur] = substr(kw, 5)
			split_if(expand(rest))
			check_expr(split_val, where)
			n = ++ndefs[cur]
			defval[cur, n] = split_val
			defcond[cur, n] = split_cond
		} else if (kw == "prompt") {
			if (cur == "") die(where ": 'prompt' outside a config entry")
			split_if(expand(rest))
			prompt[cur] = unquote(split_val)
			promptcond[cur] = split_cond
		} else if (kw == "depends") {
			rest = expand(rest)
			if (rest !~ /^on[ \t]/) die(where ": expected 'depends on'")
			rest = trim(substr(rest, 3))
			check_expr(rest, where)
			if (cur != "")
				deps[cur] = and_expr(deps[cur], rest)
		} else if (kw == "default") {
			if (cur == "") die(where ": 'default' outside a config entry")
			split_if(expand(rest))
			n = ++ndefs[cur]
			defval[cur, n] = split_val
			defcond[cur, n] = split_cond
		} else if (kw == "modules") {
			# marks the MODULES symbol, which is the only one used
		} else if (kw == "help" || kw == "---help---") {
			inhelp = 1
		} else if (kw == "source") {
			path = unquote(expand(rest))
			if (path !~ /^\//) path = ENVIRON["srctree"] "/" path
			cur = ""
			read_kconfig(path)
		} else if (kw == "mainmenu") {
			title = unquote(expand(rest))
		} else if (kw == "menu" || kw == "comment" || kw == "endmenu") {
			cur = ""
		} else if (kw == "if") {
			rest = expand(rest)
			check_expr(rest, where)
			ifstack[++nif] = ifdeps
			ifdeps = and_expr(ifdeps, rest)
			cur = ""
		} else if (kw == "endif") {
			if (nif == 0) die(where ": 'endif' without 'if'")
			ifdeps = ifstack[nif--]
			cur = ""
		} else {
			die(where ": unsupported Kconfig keyword '" kw "'")
		}
	} while ((getline line < file) > 0)
	close(file)
}

# Tristate arithmetic on "n" < "m" < "y".
function tri_num(v) { return v == "y" ? 2 : (v == "m" ? 1 : 0) }
function num_tri(n) { return n == 2 ? "y" : (n == 1 ? "m" : "n") }

function term_value(t,    neg, v) {
	neg = 0
	if (substr(t, 1, 1) == "!") {
		neg = 1
		t = trim(substr(t, 2))
	}
	if (t == "y" || t == "m" || t == "n" || t == "")
		v = (t == "" ? "n" : t)
	else if ((t in type) && (type[t] == "bool" || type[t] == "tristate"))
		v = val[t]
	else
		v = "n"
	if (neg)
		v = num_tri(2 - tri_num(v))
	return v
}

function expr_value(e,    n, parts, i, m, v) {
	if (trim(e) == "")
		return "y"
	n = split(e, parts, /&&/)
	m = 2
	for (i = 1; i <= n; i++) {
		v = tri_num(term_value(trim(parts[i])))
		if (v < m) m = v
	}
	return num_tri(m)
}

# The value of symbol s's first default whose condition holds.
function default_value(s,    i, v, t) {
	t = type[s]
	for (i = 1; i <= ndefs[s]; i++) {
		if (expr_value(defcond[s, i]) == "n")
			continue
		v = defval[s, i]
		if (t == "bool" || t == "tristate")
			return trim(v) == "" ? "n" : expr_value(v)
		return unquote(v)
	}
	if (t == "bool" || t == "tristate")
		return "n"
	return ""
}

function valid_value(t, v) {
	if (t == "bool") return v == "y" || v == "n"
	if (t == "tristate") return v == "y" || v == "m" || v == "n"
	if (t == "int") return v ~ /^-?[0-9]+$/
	if (t == "hex") return v ~ /^(0[xX])?[0-9a-fA-F]+$/
	return 1
}

# The index of symbol s's first default whose condition holds, or 0.
function default_index(s,    i) {
	for (i = 1; i <= ndefs[s]; i++)
		if (expr_value(defcond[s, i]) != "n")
			return i
	return 0
}

# Compute symbol s's value into val/written; return 1 when it changed.
# Written (as Kconfig's SYMBOL_WRITE): visible, or a default applies (and,
# for bool/tristate, is not n).
function compute(s,    t, dep, visible, v, w, d) {
	t = type[s]
	dep = expr_value(deps[s])
	visible = (s in prompt) && dep != "n" && expr_value(promptcond[s]) != "n"
	d = dep == "n" ? 0 : default_index(s)
	if (dep == "n") {
		v = (t == "bool" || t == "tristate") ? "n" : ""
		w = 0
	} else if (t == "bool" || t == "tristate") {
		if (visible && (s in user))
			v = user[s]
		else if (visible && allmode != "")
			v = (allmode == "def") ? default_value(s) : allmode
		else
			v = default_value(s)
		if (v == "m" && (t == "bool" || val["MODULES"] != "y"))
			v = "y"
		if (t == "tristate" && dep == "m" && v == "y")
			v = "m"
		w = visible || (d && default_value(s) != "n")
	} else {
		v = (visible && (s in user)) ? user[s] : default_value(s)
		w = visible || d
	}
	if (v == val[s] && w == written[s])
		return 0
	val[s] = v
	written[s] = w
	return 1
}

function line_for(s,    t, v) {
	t = type[s]
	v = val[s]
	if (t == "bool" || t == "tristate")
		return v == "n" ? "# CONFIG_" s " is not set" : "CONFIG_" s "=" v
	if (t == "string")
		return "CONFIG_" s "=" quote(v)
	return "CONFIG_" s "=" v
}

BEGIN {
	if (kconfig == "") kconfig = "Kconfig"
	if (mode == "") mode = "olddefconfig"
	allmode = ""
	if (mode == "allnoconfig") allmode = "n"
	else if (mode == "allyesconfig") allmode = "y"
	else if (mode == "allmodconfig") allmode = "m"
	else if (mode == "alldefconfig") allmode = "def"
	else if (mode != "olddefconfig" && mode != "defconfig" && mode != "savedefconfig")
		die("conf.awk: unknown mode '" mode "'")
	title = "Main menu"
	cur = ""
	read_kconfig(kconfig)
	for (i = 1; i <= nsyms; i++)
		if (type[order[i]] == "")
			die(kconfig ": config " order[i] " has no type")
}

# The input .config files, read as Kconfig reads them: only the first
# character of a bool/tristate value counts, a string must be quoted.
/^CONFIG_[A-Za-z0-9_]+=/ || /^# CONFIG_[A-Za-z0-9_]+ is not set/ {
	if (substr($0, 1, 1) == "#") {
		s = $2
		v = "n"
	} else {
		s = $0
		sub(/=.*/, "", s)
		v = substr($0, length(s) + 2)
	}
	s = substr(s, 8)
	if (!(s in type))
		next
	t = type[s]
	if (t == "bool" || t == "tristate") {
		c = substr(v, 1, 1)
		if (c == "y" || c == "n" || (c == "m" && t == "tristate")) {
			v = c
		} else {
			warn(FILENAME ":" FNR ":warning: symbol value '" v "' invalid for " s)
			next
		}
	} else if (t == "string" && substr($0, 1, 1) == "#") {
		# no value, but it counts as an assignment
		if (setin[s] == FILENAME)
			warn(FILENAME ":" FNR ":warning: override: reassigning to symbol " s)
		setin[s] = FILENAME
		next
	} else if (t == "string") {
		if (substr(v, 1, 1) != "\"")
			next
		if (v !~ /^"([^"\\]|\\.)*"/) {
			warn(FILENAME ":" FNR ":warning: invalid string found")
			next
		}
		v = unquote(v)
	} else if (!valid_value(t, v)) {
		warn(FILENAME ":" FNR ":warning: symbol value '" v "' invalid for " s)
		next
	}
	if (setin[s] == FILENAME)
		warn(FILENAME ":" FNR ":warning: override: reassigning to symbol " s)
	setin[s] = FILENAME
	user[s] = v
}

END {
	if (failed)
		exit 1
	for (pass = 0; pass < 50; pass++) {
		changed = 0
		for (i = 1; i <= nsyms; i++)
			changed += compute(order[i])
		if (!changed)
			break
	}
	if (mode == "savedefconfig") {
		for (i = 1; i <= nsyms; i++) {
			s = order[i]
			if (written[s] && (s in prompt) && val[s] != default_value(s))
				print line_for(s)
		}
		exit 0
	}
	print "#"
	print "# Automatically generated file; DO NOT EDIT."
	print "# " title
	print "#"
	for (i = 1; i <= nsyms; i++)
		if (written[order[i]])
			print line_for(order[i])
}
