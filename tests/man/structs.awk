# SPDX-License-Identifier: MIT
# Prints "STRUCT MEMBER" for every member of every struct cc_* defined in
# the header on stdin (comments removed, declarations split on ';').
{ text = text $0 "\n" }
END {
	out = ""
	while ((i = index(text, "/*")) > 0) {
		rest = substr(text, i + 2)
		j = index(rest, "*/")
		text = substr(text, 1, i - 1) " " substr(rest, j + 2)
	}
	while (match(text, /struct cc_[a-z_]+ \{[^}]*\}/)) {
		body = substr(text, RSTART, RLENGTH)
		text = substr(text, RSTART + RLENGTH)
		name = body
		sub(/^struct /, "", name)
		sub(/ .*/, "", name)
		sub(/^[^{]*\{/, "", body)
		sub(/\}$/, "", body)
		n = split(body, decl, ";")
		for (d = 1; d <= n; d++) {
			s = decl[d]
			gsub(/\[[^]]*\]/, "", s)
			gsub(/[\t\n]+/, " ", s)
			gsub(/\*/, " ", s)
			if (s ~ /^ *$/)
				continue
			m = split(s, part, ",")
			for (k = 1; k <= m; k++) {
				w = split(part[k], word, " ")
				print name, word[w]
			}
		}
	}
}
