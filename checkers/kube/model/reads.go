package model

import (
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// ReadKind is the resourceVersion semantics a get or list asked for
// (the API concepts document's table for get and list).
type ReadKind int8

const (
	ReadConsistent ReadKind = iota // RV unset: the most recent state
	ReadAny                        // RV "0": any state
	ReadNotOlder                   // RV N (get, list without limit), or resourceVersionMatch=NotOlderThan
	ReadExact                      // resourceVersionMatch=Exact, or RV N with a limit (legacy)
	ReadContinue                   // a next page
	ReadInvalid                    // a combination the server must refuse, or a malformed RV
)

func ReadKindOf(r history.KubeRequest) (ReadKind, int64) {
	if r.Continue != "" {
		return ReadContinue, 0
	}
	switch r.ResourceVersion {
	case "":
		if r.ResourceVersionMatch != "" {
			return ReadInvalid, 0
		}
		return ReadConsistent, 0
	case "0":
		if r.ResourceVersionMatch == "Exact" {
			return ReadInvalid, 0
		}
		return ReadAny, 0
	}
	n, ok := facts.ParseRV(r.ResourceVersion)
	if !ok {
		return ReadInvalid, 0
	}
	switch r.ResourceVersionMatch {
	case "Exact":
		return ReadExact, n
	case "NotOlderThan":
		return ReadNotOlder, n
	case "":
		if r.Verb == history.KubeList && r.Limit > 0 {
			return ReadExact, n
		}
		return ReadNotOlder, n
	}
	return ReadInvalid, 0
}
