// Package grammar draws etcd v3 API requests from the API's own structure:
// a request (range, put, delete, txn, HashKV, the lease calls), each of
// its fields, and, for every field, a class of value that the client's
// knowledge of the store defines (a revision that is the head, the compact
// revision, one below it...; a key that is present, absent, just
// deleted...). Each field drawn is named by a tag "production.field=class"
// (range.revision=compact), recorded with the request (Operation.Draw),
// so a run's coverage is counted from its history and a refusal prunes
// the production that was refused.
//
// It is a leaf (it imports history alone): the workload draws from it,
// and the reports read its vocabulary to list what a run never drew.
package grammar

import (
	"fmt"
	"strings"
)

// field is one field of a production: the classes its values are drawn
// from, the plainest of them (what a probe asks alongside the class it
// asks for), and whether its tags are derived from the draw rather than
// drawn (txn.depth).
type field struct {
	prod, name string
	classes    []string
	plain      string
	derived    bool
}

// The fields, in the order the vocabulary lists them.
const (
	fRequest = iota
	fRangeSpan
	fRangeKey
	fRangeRevision
	fRangeLimit
	fRangeSort
	fRangeSerializable
	fRangeKeysOnly
	fRangeCountOnly
	fRangeMinMod
	fRangeMaxMod
	fRangeMinCreate
	fRangeMaxCreate
	fPutKey
	fPutPrevKV
	fPutLease
	fPutIgnoreValue
	fPutIgnoreLease
	fDeleteSpan
	fDeleteKey
	fDeletePrevKV
	fTxnCompares
	fTxnThen
	fTxnElse
	fTxnOp
	fTxnDepth
	fTxnWrites
	fCompareTest
	fCompareSpan
	fCompareKey
	fCompareOperand
	fHashKVRevision
	fCompactRevision
	fCompactPhysical
	fGrantID
	fRevokeLease
	fKeepAliveLease
	fTTLLease
	fTTLKeys
	fWatchStart
	fWatchSpan
	fWatchPrevKV
	fWatchProgress
	fWatchFilter
	fWatchFragment
	numFields
)

// The request kinds a client draws (request.kind).
const (
	KindRange          = "range"
	KindPut            = "put"
	KindDelete         = "delete"
	KindTxn            = "txn"
	KindHashKV         = "hashkv"
	KindLeaseGrant     = "lease-grant"
	KindLeaseRevoke    = "lease-revoke"
	KindLeaseKeepAlive = "lease-keepalive"
	KindLeaseTTL       = "lease-ttl"
)

var (
	keyClasses  = []string{"any", "present", "absent", "deleted", "leased", "boundary", "focus"}
	spanClasses = []string{"key", "interval", "from", "prefix", "empty"}
	revClasses  = []string{"0", "head", "past", "compact", "below-compact", "future"}
	// A filter on the keys' revisions: none, or a bound at a past
	// revision, the head, or beyond it.
	filterClasses = []string{"0", "past", "head", "future"}
	boolClasses   = []string{"false", "true"}
	countClasses  = []string{"0", "1", "2", "many"}
)

func sortClasses() []string {
	out := []string{"none"}
	for _, o := range []string{"none", "ascend", "descend"} {
		for _, t := range []string{"key", "version", "create", "mod", "value"} {
			if o == "none" && t == "key" {
				continue // etcd's default: "none"
			}
			out = append(out, o+"/"+t)
		}
	}
	return out
}

func compareTests() []string {
	var out []string
	for _, t := range []string{"mod", "version", "create", "value", "lease"} {
		for _, r := range []string{"=", "!=", "<", ">"} {
			out = append(out, t+"/"+r)
		}
	}
	return out
}

var fields = [numFields]field{
	fRequest: {"request", "kind", []string{KindRange, KindPut, KindDelete, KindTxn, KindHashKV,
		KindLeaseGrant, KindLeaseRevoke, KindLeaseKeepAlive, KindLeaseTTL}, KindRange, false},
	fRangeSpan:         {"range", "span", spanClasses, "key", false},
	fRangeKey:          {"range", "key", keyClasses, "any", false},
	fRangeRevision:     {"range", "revision", revClasses, "0", false},
	fRangeLimit:        {"range", "limit", []string{"0", "1", "below", "at", "above"}, "0", false},
	fRangeSort:         {"range", "sort", sortClasses(), "none", false},
	fRangeSerializable: {"range", "serializable", boolClasses, "false", false},
	fRangeKeysOnly:     {"range", "keys_only", boolClasses, "false", false},
	fRangeCountOnly:    {"range", "count_only", boolClasses, "false", false},
	fRangeMinMod:       {"range", "min_mod", filterClasses, "0", false},
	fRangeMaxMod:       {"range", "max_mod", filterClasses, "0", false},
	fRangeMinCreate:    {"range", "min_create", filterClasses, "0", false},
	fRangeMaxCreate:    {"range", "max_create", filterClasses, "0", false},
	fPutKey:            {"put", "key", keyClasses, "any", false},
	fPutPrevKV:         {"put", "prev_kv", boolClasses, "false", false},
	fPutLease:          {"put", "lease", []string{"0", "live", "revoked", "never"}, "0", false},
	fPutIgnoreValue:    {"put", "ignore_value", boolClasses, "false", false},
	fPutIgnoreLease:    {"put", "ignore_lease", boolClasses, "false", false},
	fDeleteSpan:        {"delete", "span", spanClasses, "key", false},
	fDeleteKey:         {"delete", "key", keyClasses, "any", false},
	fDeletePrevKV:      {"delete", "prev_kv", boolClasses, "false", false},
	fTxnCompares:       {"txn", "compares", countClasses, "1", false},
	fTxnThen:           {"txn", "then", append(countClasses[:4:4], "max"), "1", false},
	fTxnElse:           {"txn", "else", countClasses, "1", false},
	fTxnOp: {"txn", "op", []string{"then/range", "then/put", "then/delete", "then/txn",
		"else/range", "else/put", "else/delete", "else/txn"}, "then/put", false},
	fTxnDepth:        {"txn", "depth", []string{"1", "2", "3"}, "1", true},
	fTxnWrites:       {"txn", "writes", []string{"distinct", "duplicate", "overlap"}, "distinct", false},
	fCompareTest:     {"compare", "test", compareTests(), "mod/=", false},
	fCompareSpan:     {"compare", "span", []string{"key", "interval", "from", "prefix"}, "key", false},
	fCompareKey:      {"compare", "key", keyClasses, "focus", false},
	fCompareOperand:  {"compare", "operand", []string{"known", "zero", "other"}, "known", false},
	fHashKVRevision:  {"hashkv", "revision", revClasses, "0", false},
	fCompactRevision: {"compact", "revision", []string{"past", "head", "compact", "below-compact", "future"}, "past", false},
	fCompactPhysical: {"compact", "physical", boolClasses, "false", false},
	fGrantID:         {"lease-grant", "id", []string{"auto", "chosen"}, "auto", false},
	fRevokeLease:     {"lease-revoke", "lease", []string{"live", "attached", "revoked", "never"}, "live", false},
	fKeepAliveLease:  {"lease-keepalive", "lease", []string{"live", "revoked", "never"}, "live", false},
	fTTLLease:        {"lease-ttl", "lease", []string{"live", "revoked", "never"}, "live", false},
	fTTLKeys:         {"lease-ttl", "keys", boolClasses, "false", false},
	// resume: a watch continuing another from the revision after the
	// last it saw; the others are drawn (or, compact, where a watch
	// restarts after its start was compacted).
	fWatchStart:    {"watch", "start", []string{"0", "head", "past", "compact", "below-compact", "future", "resume"}, "0", false},
	fWatchSpan:     {"watch", "span", []string{"key", "prefix"}, "key", false},
	fWatchPrevKV:   {"watch", "prev_kv", boolClasses, "false", false},
	fWatchProgress: {"watch", "progress_notify", boolClasses, "false", false},
	fWatchFilter:   {"watch", "filter", []string{"none", "no_put", "no_delete"}, "none", false},
	fWatchFragment: {"watch", "fragment", boolClasses, "false", false},
}

// Tag is one production of the grammar: a field of a request and a class
// of its values, as "production.field=class".
type Tag int

// tagBase[f] is the Tag of field f's first class; tags of a field are
// consecutive.
var (
	tagBase  [numFields + 1]Tag
	tagNames []string
	tagField []int
	tagByStr = map[string]Tag{}
	plainTag [numFields]Tag
)

func init() {
	for f := range fields {
		tagBase[f] = Tag(len(tagNames))
		for c, cl := range fields[f].classes {
			name := fields[f].prod + "." + fields[f].name + "=" + cl
			tagByStr[name] = Tag(len(tagNames))
			tagNames = append(tagNames, name)
			tagField = append(tagField, f)
			if cl == fields[f].plain {
				plainTag[f] = tagBase[f] + Tag(c)
			}
		}
	}
	tagBase[numFields] = Tag(len(tagNames))
	for _, f := range []int{fRangeKey, fPutKey, fDeleteKey, fCompareKey, fCompareOperand, fHashKVRevision,
		fRevokeLease, fKeepAliveLease, fTTLLease} {
		valueField[f] = true
	}
}

// valueField marks the fields whose classes are values, not options: a
// server refuses a request for its options, so a combination refused is
// named by the rest (a txn refused for its shape is refused whatever key
// it is on).
var valueField [numFields]bool

func (t Tag) String() string { return tagNames[t] }

// tagOf is field f's tag for class number c.
func tagOf(f, c int) Tag { return tagBase[f] + Tag(c) }

// classOf is the class name of tag t.
func classOf(t Tag) string { return fields[tagField[t]].classes[t-tagBase[tagField[t]]] }

// class is field f's class number named cl; it panics on a name the
// vocabulary lacks (a mistake in this package).
func class(f int, cl string) int {
	for i, c := range fields[f].classes {
		if c == cl {
			return i
		}
	}
	panic(fmt.Sprintf("grammar: %s.%s has no class %q", fields[f].prod, fields[f].name, cl))
}

// Productions lists every production of the grammar, as
// "production.field=class", in the vocabulary's order.
func Productions() []string { return append([]string(nil), tagNames...) }

// Known reports whether s names a production of the grammar.
func Known(s string) bool {
	_, ok := tagByStr[s]
	return ok
}

// Order sorts productions by the vocabulary's order (unknown ones last,
// by name): a key for slices.SortFunc.
func Order(a, b string) int {
	ta, oka := tagByStr[a]
	tb, okb := tagByStr[b]
	switch {
	case oka && okb:
		return int(ta) - int(tb)
	case oka:
		return -1
	case okb:
		return 1
	}
	return strings.Compare(a, b)
}

// Field is the "production.field" part of a production's name.
func Field(s string) string {
	if i := strings.IndexByte(s, '='); i >= 0 {
		return s[:i]
	}
	return s
}
