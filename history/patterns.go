package history

import "strings"

// A pattern is a placement and timing of requests that servers are known
// to break under, as opposed to a request's form: a read sent to another
// member the instant a write is acknowledged, a write racing a
// compaction of its revision, a watch opened at the compact revision or
// at the head, a burst of requests as a fault starts or heals. The
// workload tags every request a pattern sends with the draw entry
// PatternPrefix + name, so a pattern's coverage is counted from the
// history alone (PatternOf), as forms are.
const PatternPrefix = "pattern="

// The patterns the etcd workload sends (workload/patterns.go).
const (
	// PatternReadAfterAck: a linearizable read of the written key (or of
	// the prefix), sent by a client of another member the instant a
	// client's write is acknowledged.
	PatternReadAfterAck = "read-after-ack"
	// PatternCompactRace: a compaction to the head revision sent at the
	// same instant as writes to keys written at the head, then reads at
	// the compact revision and one below it.
	PatternCompactRace = "compact-race"
	// PatternWatchAtCompact: a watch opened at the compact revision.
	PatternWatchAtCompact = "watch-at-compact"
	// PatternWatchAtHead: a watch opened at the head revision.
	PatternWatchAtHead = "watch-at-head"
	// PatternFaultStart, PatternFaultHeal: a burst of requests to every
	// member (the one a fault hurts among them) as a fault starts, and
	// the instant it has healed.
	PatternFaultStart = "fault-start"
	PatternFaultHeal  = "fault-heal"
)

// Patterns lists every pattern, in the order reports list them.
func Patterns() []string {
	return []string{PatternReadAfterAck, PatternCompactRace, PatternWatchAtCompact, PatternWatchAtHead,
		PatternFaultStart, PatternFaultHeal}
}

// PatternOf is the pattern a request was sent by, from its draw entries;
// "" when no pattern sent it.
func PatternOf(draw []string) string {
	for _, d := range draw {
		if p, ok := strings.CutPrefix(d, PatternPrefix); ok {
			return p
		}
	}
	return ""
}

// PatternDraw is the draw entry that tags a request as sent by pattern p.
func PatternDraw(p string) []string { return []string{PatternPrefix + p} }
