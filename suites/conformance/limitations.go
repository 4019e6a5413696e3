package conformance

import (
	"encoding/json"
	"slices"
	"sort"

	"github.com/vigil-suite/vigil/fixtures/kine"
	"github.com/vigil-suite/vigil/history"
)

// A Limitation is a way a target departs from etcd that its own
// documentation or code states. A probe that fails in that way is
// reported as a documented limitation, not as a failure; failing in any
// other way it stays a failure.
type Limitation struct {
	// Probes are the probes the limitation can explain.
	Probes []string
	// Reason says what the target does and where it says so.
	Reason string
	// Explains says whether a failed probe's result shows the documented
	// behaviour (and so is explained by it).
	Explains func(Result) bool
	// Mask are the answer fields the limitation leaves meaningless: a
	// probe that passed but whose transcript differs from the reference's
	// only in them is a documented limitation, not a difference.
	Mask []string
}

// masked is a transcript without the answer fields named.
func masked(steps []Step, fields []string) []Step {
	drop := map[string]bool{}
	for _, f := range fields {
		drop[f] = true
	}
	var strip func(v any) any
	strip = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, e := range x {
				if !drop[k] {
					out[k] = strip(e)
				}
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = strip(e)
			}
			return out
		}
		return v
	}
	out := slices.Clone(steps)
	for i, s := range out {
		var v any
		if len(s.Answer) == 0 || json.Unmarshal(s.Answer, &v) != nil {
			continue
		}
		if b, err := json.Marshal(strip(v)); err == nil {
			out[i].Answer = b
		}
	}
	return out
}

// ApplyLimitations turns each failure that a limitation explains into a
// Documented verdict whose reason is the limitation's.
func ApplyLimitations(results []Result, lims []Limitation) []Result {
	out := slices.Clone(results)
	for i, r := range out {
		if r.Verdict != Fail || r.Broke != nil {
			continue // a server that stopped serving after it is no documented departure
		}
		for _, l := range lims {
			if slices.Contains(l.Probes, r.Name) && l.Explains(r) {
				out[i].Verdict, out[i].Reason = Documented, l.Reason
				break
			}
		}
	}
	return out
}

// KineLimitations are the departures from etcd that kine documents, in
// its README ("implements the subset of the etcd v3 API required by the
// Kubernetes API server") and its code, and that a probe can fail on. The
// requests kine refuses outright are not here: those probes are
// unsupported already.
func KineLimitations() []Limitation { return LimitationsFor(kine.Documented()) }

// probeLimitations is how each named limitation (check.Limitations)
// meets the probes: which ones it can explain, on what evidence, and
// which answer fields it leaves meaningless.
var probeLimitations = map[string]Limitation{
	history.LimitationNoVersions: {
		Probes:   []string{"kv/version-counts-writes", "kv/range-keys-only", "watch/is-create"},
		Explains: func(r Result) bool { return versionsAllZero(r.Transcript) },
		Mask:     []string{"version"},
	},
	history.LimitationNoSizeLimit: {
		Probes:   []string{"kv/oversized-request"},
		Explains: func(r Result) bool { return oversizedAccepted(r.Transcript) },
	},
}

// LimitationsFor are the limitations declared, by name, each with its
// reason (where the target states it); a name no probe can meet adds
// nothing.
func LimitationsFor(declared map[string]string) []Limitation {
	names := make([]string, 0, len(declared))
	for name := range declared {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []Limitation
	for _, name := range names {
		if l, ok := probeLimitations[name]; ok {
			l.Reason = declared[name]
			out = append(out, l)
		}
	}
	return out
}

// oversizedAccepted says whether the transcript's puts were all answered
// without an error: the oversized request was taken, as a server without
// a size limit does (refused with the wrong error, it is not that).
func oversizedAccepted(steps []Step) bool {
	puts := 0
	for _, s := range steps {
		if s.Call == "Put" {
			puts++
			if s.Error != "" {
				return false
			}
		}
	}
	return puts > 0
}

// versionsAllZero says whether the transcript returns key-values and none
// of them has a version.
func versionsAllZero(steps []Step) bool {
	seen := false
	var walk func(v any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case map[string]any:
			if _, isKV := x["mod_revision"]; isKV {
				seen = true
				if ver, ok := x["version"]; ok && ver != nil && ver != float64(0) && ver != "0" {
					return false
				}
			}
			for _, e := range x {
				if !walk(e) {
					return false
				}
			}
		case []any:
			for _, e := range x {
				if !walk(e) {
					return false
				}
			}
		}
		return true
	}
	for _, s := range steps {
		if len(s.Answer) == 0 {
			continue
		}
		var v any
		if json.Unmarshal(s.Answer, &v) != nil || !walk(v) {
			return false
		}
	}
	return seen
}
