package history

import (
	"regexp"
	"slices"
	"strings"
)

// A form names one shape of request the workload can send: the kind and
// the options that a server implementing part of the etcd API may serve
// or refuse on their own (a put with prev_kv, a range at a revision, a
// txn comparing versions). FormOf derives it from the recorded request,
// so any history, old ones too, can be counted by form.
//
// Ranges, puts and deletes name each option they carry, in a fixed order:
// "range-prefix-limit", "put-prev-kv", "delete-prev-kv". A range or
// delete over a prefix says "prefix", over any other interval "interval".
// A txn names its compares' targets, then its success branch ("" for one
// put, "-delete" or "-read" for one delete or range, "-multi" for more
// than one, "-empty" for none), then its failure branch ("-else-read"
// when it only reads, "-else-write" otherwise): "txn-mod-else-read" is a
// compare-and-swap with a read when the compare fails. Format 4's fields
// add their own words: "-sort" and "-filter" for a range,
// "-ignore-value" and "-ignore-lease" for a put, "-range" after a txn's
// targets when a compare spans keys, "-nested" when a branch holds a txn.
// The grammar's productions (Operation.Draw) say far more; forms stay the
// names a server refuses by.
func FormOf(r Request) string {
	switch r.Kind {
	case OpRange:
		return "range" + span(r) + flag(r.Limit > 0, "-limit") + flag(r.Revision > 0, "-rev") +
			flag(r.Serializable, "-serializable") + flag(r.KeysOnly, "-keys-only") + flag(r.CountOnly, "-count-only") +
			flag(r.SortOrder != "" || r.SortTarget != "", "-sort") +
			flag(r.MinModRevision != 0 || r.MaxModRevision != 0 || r.MinCreateRevision != 0 || r.MaxCreateRevision != 0, "-filter")
	case OpPut:
		return "put" + flag(r.PrevKV, "-prev-kv") + flag(r.Lease != 0, "-lease") +
			flag(r.IgnoreValue, "-ignore-value") + flag(r.IgnoreLease, "-ignore-lease")
	case OpDelete:
		return "delete" + span(r) + flag(r.PrevKV, "-prev-kv")
	case OpTxn:
		return txnForm(r)
	}
	return string(r.Kind)
}

func flag(on bool, s string) string {
	if on {
		return s
	}
	return ""
}

// span names a range's extent: "" for one key.
func span(r Request) string { return spanOf(r.Key, r.End) }

func spanOf(key, end string) string {
	switch {
	case end == "":
		return ""
	case end == PrefixEnd(key):
		return "-prefix"
	}
	return "-interval"
}

func txnForm(r Request) string {
	var targets []string
	for _, c := range r.Compares {
		if t := strings.ToLower(c.Target); !slices.Contains(targets, t) {
			targets = append(targets, t)
		}
	}
	f := "txn"
	for _, t := range targets {
		f += "-" + t
	}
	if slices.ContainsFunc(r.Compares, func(c Compare) bool { return c.End != "" }) {
		f += "-range"
	}
	if r.Nested() {
		f += "-nested"
	}
	switch {
	case len(r.Success) == 0:
		f += "-empty"
	case len(r.Success) > 1:
		f += "-multi"
	case r.Success[0].Kind == OpDelete:
		f += "-delete"
	case r.Success[0].Kind == OpRange:
		f += "-read"
	case r.Success[0].Kind != OpPut:
		f += "-" + string(r.Success[0].Kind)
	}
	if len(r.Failure) > 0 {
		reads := !slices.ContainsFunc(r.Failure, func(b Request) bool { return b.Kind != OpRange })
		f += flag(reads, "-else-read") + flag(!reads, "-else-write")
	}
	return f
}

// PrefixEnd is the exclusive end of the range of keys starting with p.
func PrefixEnd(p string) string {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return "\x00"
}

// WatchForms are the forms of a watch request: one per option it asks
// for ("watch-prev-kv", "watch-progress-notify", "watch-no-put",
// "watch-no-delete", "watch-start-rev", "watch-fragment"), or "watch"
// for a plain watch from now on. A watch counts once under each.
func WatchForms(r WatchRequest) []string {
	var out []string
	for _, o := range []struct {
		on   bool
		form string
	}{{r.PrevKV, FormWatchPrevKV}, {r.ProgressNotify, FormWatchProgressNotify}, {r.NoPut, FormWatchNoPut},
		{r.NoDelete, FormWatchNoDelete}, {r.StartRevision > 0, FormWatchStartRev}, {r.Fragment, "watch-fragment"}} {
		if o.on {
			out = append(out, o.form)
		}
	}
	if len(out) == 0 {
		out = []string{FormWatch}
	}
	return out
}

// The watch forms, and the forms of calls (a call's form is its kind).
const (
	FormWatch               = "watch"
	FormWatchPrevKV         = "watch-prev-kv"
	FormWatchProgressNotify = "watch-progress-notify"
	FormWatchNoPut          = "watch-no-put"
	FormWatchNoDelete       = "watch-no-delete"
	FormWatchStartRev       = "watch-start-rev"
)

// Capabilities that histories before per-form probing named in
// Meta.Refuses, and that checks still read: a probe that finds the form
// refused records the capability too, with the same words.
const (
	// CapDelete is the form "delete": a plain single-key DeleteRange.
	CapDelete = "delete"
	// CapTxn: a txn beyond the forms the Kubernetes storage layer sends
	// (any txn form but "txn-mod", "txn-mod-else-read" and
	// "txn-mod-delete-else-read").
	CapTxn = "txn"
	// CapHashKV is the form "hashkv".
	CapHashKV = "hashkv"
	// CapSerializable: serializable ranges (the form "range-serializable").
	CapSerializable = "serializable"
)

// refusalRe is how servers that implement part of the API say so in
// words: kine answers "lease revoke is not supported" and "unsupported
// operations in txn request".
var refusalRe = regexp.MustCompile(`(?i)\b(not supported|unsupported|not implemented)\b`)

// SaysRefused reports whether an error message declines a request as
// not implemented ("not supported", "unsupported", "not implemented").
func SaysRefused(msg string) bool { return refusalRe.MatchString(msg) }
