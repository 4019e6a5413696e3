package model

import (
	"fmt"
	"strings"
)

// LabelSelector is a parsed Kubernetes label selector: requirements that
// must all hold. It knows the forms of the label selector grammar:
// k=v, k==v, k!=v, k in (a,b), k notin (a,b), k (exists), !k (absent).
// A nil selector matches everything.
type LabelSelector struct {
	Raw  string
	reqs []labelReq
	// names are the requirements of a fieldSelector on metadata.name
	// (the only field vigil's objects are selected by; metadata.namespace
	// always matches, as every object is in the run's namespace).
	names []labelReq
}

type labelReq struct {
	key    string
	op     string // "=", "!=", "in", "notin", "exists", "!"
	values []string
}

// ParseSelector parses s; "" gives nil (everything).
func ParseSelector(s string) (*LabelSelector, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	sel := &LabelSelector{Raw: s}
	for _, part := range splitSelector(s) {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("label selector %q has an empty requirement", s)
		}
		r, err := parseRequirement(part)
		if err != nil {
			return nil, fmt.Errorf("label selector %q: %w", s, err)
		}
		sel.reqs = append(sel.reqs, r)
	}
	return sel, nil
}

// splitSelector splits at the commas outside parentheses.
func splitSelector(s string) []string {
	var out []string
	depth, from := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[from:i])
				from = i + 1
			}
		}
	}
	return append(out, s[from:])
}

func parseRequirement(p string) (labelReq, error) {
	if strings.HasPrefix(p, "!") {
		return labelReq{key: strings.TrimSpace(p[1:]), op: "!"}, nil
	}
	for _, op := range []string{"!=", "==", "="} {
		if i := strings.Index(p, op); i >= 0 {
			r := labelReq{key: strings.TrimSpace(p[:i]), op: op, values: []string{strings.TrimSpace(p[i+len(op):])}}
			if r.op == "==" {
				r.op = "="
			}
			return r, nil
		}
	}
	fields := strings.Fields(p)
	if len(fields) == 1 {
		return labelReq{key: fields[0], op: "exists"}, nil
	}
	if len(fields) >= 2 && (fields[1] == "in" || fields[1] == "notin") {
		rest := strings.TrimSpace(strings.Join(fields[2:], " "))
		if !strings.HasPrefix(rest, "(") || !strings.HasSuffix(rest, ")") {
			return labelReq{}, fmt.Errorf("%q: want %s (a,b,...)", p, fields[1])
		}
		var vals []string
		for _, v := range strings.Split(rest[1:len(rest)-1], ",") {
			vals = append(vals, strings.TrimSpace(v))
		}
		return labelReq{key: fields[0], op: fields[1], values: vals}, nil
	}
	return labelReq{}, fmt.Errorf("%q is not a requirement vigil understands", p)
}

// ParseSelectors parses a label selector and a field selector into one
// selector; both empty give nil (everything). A field selector on a field
// other than metadata.name and metadata.namespace is an error (the
// selection is then not judged).
func ParseSelectors(label, field string) (*LabelSelector, error) {
	sel, err := ParseSelector(label)
	if err != nil || strings.TrimSpace(field) == "" {
		return sel, err
	}
	if sel == nil {
		sel = &LabelSelector{}
	}
	if sel.Raw != "" {
		sel.Raw += ", "
	}
	sel.Raw += "fields " + field
	for _, part := range strings.Split(field, ",") {
		part = strings.TrimSpace(part)
		var r labelReq
		for _, op := range []string{"!=", "==", "="} {
			if i := strings.Index(part, op); i >= 0 {
				r = labelReq{key: strings.TrimSpace(part[:i]), op: op, values: []string{strings.TrimSpace(part[i+len(op):])}}
				if r.op == "==" {
					r.op = "="
				}
				break
			}
		}
		switch r.key {
		case "metadata.name":
			sel.names = append(sel.names, r)
		case "metadata.namespace":
		default:
			return nil, fmt.Errorf("field selector %q: vigil judges only metadata.name and metadata.namespace", field)
		}
	}
	return sel, nil
}

// Matches reports whether an object with this name and these labels
// satisfies the selector.
func (s *LabelSelector) Matches(name string, labels map[string]string) bool {
	if s == nil {
		return true
	}
	for _, r := range s.names {
		if (r.op == "=") != (name == r.values[0]) {
			return false
		}
	}
	for _, r := range s.reqs {
		v, ok := labels[r.key]
		switch r.op {
		case "=":
			if !ok || v != r.values[0] {
				return false
			}
		case "!=":
			if ok && v == r.values[0] {
				return false
			}
		case "in":
			if !ok || !containsStr(r.values, v) {
				return false
			}
		case "notin":
			if ok && containsStr(r.values, v) {
				return false
			}
		case "exists":
			if !ok {
				return false
			}
		case "!":
			if ok {
				return false
			}
		}
	}
	return true
}

func containsStr(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
