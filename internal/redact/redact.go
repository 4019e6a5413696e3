// Package redact takes credentials out of command lines before vigil
// writes or prints them: its flags in the history, result.json, junit.xml,
// report.html and the certificate, the repro commands, the progress, and
// the line vigil writes above a server's output in its log. A run
// directory can then be published (a nightly job uploads it) even when a
// server was given a database DSN with its password.
//
// It is a leaf (the standard library and a shell parser only), so every
// stage that writes a command line — fixtures, suites, reports, launch —
// calls the same rules without importing another stage.
//
// What counts as a credential, in any value:
//   - the password of a URL or DSN: scheme://user:PASSWORD@host;
//   - the value of a NAME=value whose NAME ends in password, passwd,
//     passphrase, secret, token or api-key (case aside): a libpq DSN's
//     password=…, a URL query's token=…, --password=…, ETCDCTL_PASSWORD=…;
//   - the word after a flag so named (--password X, --token X), and the
//     part after the colon of --user NAME:PASSWORD (etcdctl's form).
//
// Over-redacting is the safe error: --auth-token simple (etcd's, not a
// secret) becomes --auth-token REDACTED. A user name alone is kept.
package redact

import (
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Mark replaces what is taken out. It needs no shell quoting, so a line
// stays as readable as it was.
const Mark = "REDACTED"

// secretName is a flag or variable name that holds a credential.
var secretName = regexp.MustCompile(`(?i)(password|passwd|passphrase|secret|token|api[-_]?key)$`)

// Within one value.
var (
	// scheme://user:password@ — greedy up to the last @ before a space, so
	// a password with @ or / in it is taken whole (a path or query with
	// an @ after the host is taken too: the safe side).
	urlPassword = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@'"]*):(\S*)@`)
	// NAME=value with NAME a secret's name: a quoted value whole, else up
	// to a space, & or quote.
	namedSecret = regexp.MustCompile(`(?i)([A-Za-z0-9_.-]*(?:password|passwd|passphrase|secret|token|api[-_]?key))=('[^']*'|"[^"]*"|[^\s&'"]*)`)
	// --user=name:password.
	userPassword = regexp.MustCompile(`(^|\s)(--?user=)([^\s:]*):(\S+)`)
)

// Flags is a command's flags (name without dashes → value) as vigil
// records them: each value redacted as the word after --name is.
func Flags(set map[string]string) map[string]string {
	if set == nil {
		return nil
	}
	out := make(map[string]string, len(set))
	for k, v := range set {
		out[k] = Flag(k, v)
	}
	return out
}

// Flag is the value of the flag named name (without dashes), redacted.
func Flag(name, value string) string { return word("--"+name, value, 0) }

// Args is an argument list (argv without the program, or with it) with
// its credentials replaced by Mark.
func Args(args []string) []string {
	out := make([]string, len(args))
	prev := ""
	for i, a := range args {
		out[i] = word(prev, a, 0)
		prev = a
	}
	return out
}

// Line is a command line, read as a shell reads it, with its credentials
// replaced by Mark; the words that hold none are left exactly as written.
// A value that is itself a command line (the script of sh -c, the
// --command of a repro) is redacted as one. A line that does not parse
// is redacted word by word, split on spaces.
func Line(s string) string { return line(s, 0) }

// maxDepth bounds command lines within command lines.
const maxDepth = 8

func line(s string, depth int) string {
	if depth > maxDepth {
		return Value(s)
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(s), "")
	if err != nil {
		return Text(s)
	}
	var edits []edit
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			for _, a := range n.Assigns {
				edits = append(edits, assign(s, a, depth)...)
			}
			prev := ""
			for _, w := range n.Args {
				edits = append(edits, rewrite(s, w, prev, depth)...)
				prev, _ = literal(w)
			}
			return false // the words' own innards are handled above
		case *syntax.Assign:
			edits = append(edits, assign(s, n, depth)...)
			return false
		}
		return true
	})
	return apply(s, edits)
}

// Value is one value (not a command line) with its credentials replaced.
func Value(v string) string {
	v = urlPassword.ReplaceAllString(v, "${1}:"+Mark+"@")
	v = namedSecret.ReplaceAllString(v, "${1}="+Mark)
	return userPassword.ReplaceAllString(v, "${1}${2}${3}:"+Mark)
}

// word is the value v redacted, prev being the word before it; depth
// counts the command lines v is within.
func word(prev, v string, depth int) string {
	switch {
	case v == "":
		return v
	case secretFlag(prev):
		return Mark
	case userFlag(prev):
		if name, _, ok := strings.Cut(v, ":"); ok {
			return name + ":" + Mark
		}
		return v
	case strings.ContainsAny(v, " \t\n"):
		return line(v, depth+1)
	}
	return Value(v)
}

// secretFlag says whether w is a flag whose value is a credential.
func secretFlag(w string) bool {
	name, ok := flagName(w)
	return ok && secretName.MatchString(name)
}

func userFlag(w string) bool {
	name, ok := flagName(w)
	return ok && name == "user"
}

func flagName(w string) (string, bool) {
	if !strings.HasPrefix(w, "-") || strings.Contains(w, "=") {
		return "", false
	}
	return strings.TrimLeft(w, "-"), true
}

type edit struct {
	from, to int
	text     string
}

// rewrite redacts the word w of s. A word vigil can read whole (quotes,
// escapes, no expansion) is replaced by its redacted value, quoted; one
// with $VAR or $(...) in it by its source text, redacted in place.
func rewrite(s string, w *syntax.Word, prev string, depth int) []edit {
	from, to := int(w.Pos().Offset()), int(w.End().Offset())
	v, ok := literal(w)
	if !ok {
		if r := Value(s[from:to]); r != s[from:to] {
			return []edit{{from, to, r}}
		}
		return nil
	}
	r := word(prev, v, depth)
	if r == v {
		return nil
	}
	return []edit{{from, to, Quote(r)}}
}

// assign redacts NAME=value: the whole value when NAME is a secret's.
func assign(s string, a *syntax.Assign, depth int) []edit {
	if a.Value == nil {
		return nil
	}
	if a.Name != nil && secretName.MatchString(a.Name.Value) {
		return []edit{{int(a.Value.Pos().Offset()), int(a.Value.End().Offset()), Mark}}
	}
	return rewrite(s, a.Value, "", depth)
}

// literal is the value of w, its quotes removed, when it has no
// expansion in it.
func literal(w *syntax.Word) (string, bool) {
	plain := true
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst, *syntax.ExtGlob, *syntax.BraceExp:
			plain = false
		}
		return plain
	})
	if !plain {
		return "", false
	}
	var b strings.Builder
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			// expand.Literal keeps the backslashes of an unquoted part
			// (an assignment's value keeps them); as an argument, \x is x.
			b.WriteString(unescape(l.Value))
			continue
		}
		v, err := expand.Literal(&expand.Config{}, &syntax.Word{Parts: []syntax.WordPart{p}})
		if err != nil {
			return "", false
		}
		b.WriteString(v)
	}
	return b.String(), true
}

// unescape removes the backslashes of unquoted text: \x is x, and a
// backslash before a newline joins the lines.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Text is free text (a message, a line that does not parse) redacted
// word by word, split on spaces, the spaces kept.
func Text(s string) string {
	var b strings.Builder
	prev := ""
	rest := s
	for rest != "" {
		i := strings.IndexFunc(rest, func(r rune) bool { return r != ' ' && r != '\t' && r != '\n' })
		if i < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i])
		rest = rest[i:]
		j := strings.IndexAny(rest, " \t\n")
		if j < 0 {
			j = len(rest)
		}
		w := rest[:j]
		b.WriteString(word(strings.Trim(prev, `'"`), w, maxDepth))
		prev, rest = w, rest[j:]
	}
	return b.String()
}

// apply makes the edits (which do not overlap) on s.
func apply(s string, edits []edit) string {
	if len(edits) == 0 {
		return s
	}
	slices.SortFunc(edits, func(a, b edit) int { return b.from - a.from })
	for _, e := range edits {
		s = s[:e.from] + e.text + s[e.to:]
	}
	return s
}

// Quote is s as one shell word: as it is when that is safe, else in
// single quotes.
func Quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:,=@+%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
