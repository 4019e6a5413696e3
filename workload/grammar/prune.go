package grammar

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Pruner holds what the target refused, shared by the run's clients: the
// productions refused (before the run, by the probe; or during it), and
// the combinations of productions refused though each was served alone.
// A generator never draws a refused production, and draws again when it
// drew a refused combination.
type Pruner struct {
	refused  []atomic.Bool // by Tag
	answered []atomic.Bool // by Tag: some request drawn from it was answered
	mu       sync.Mutex
	combos   map[uint64]bool
	words    map[string]string
	during   []string // what refusals during the run pruned, in order
}

// NewPruner prunes nothing yet.
func NewPruner() *Pruner {
	return &Pruner{refused: make([]atomic.Bool, len(tagNames)), answered: make([]atomic.Bool, len(tagNames)),
		combos: map[uint64]bool{}, words: map[string]string{}}
}

// Refuse prunes the production named (one of Productions), with the
// target's words; it reports whether the name is a production.
func (p *Pruner) Refuse(production, words string) bool {
	t, ok := tagByStr[production]
	if !ok {
		return false
	}
	p.refuse(t, words)
	return true
}

func (p *Pruner) refuse(t Tag, words string) {
	p.refused[t].Store(true)
	p.mu.Lock()
	p.words[tagNames[t]] = words
	p.mu.Unlock()
}

// Refused reports whether the production is pruned.
func (p *Pruner) Refused(production string) bool {
	t, ok := tagByStr[production]
	return ok && p.refused[t].Load()
}

func (p *Pruner) pruned(t Tag) bool { return p != nil && p.refused[t].Load() }

func (p *Pruner) comboPruned(sig uint64) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.combos[sig]
}

// answer notes that a request drawn from tags was answered (a response,
// or an error that is no refusal).
func (p *Pruner) answer(tags []Tag) {
	for _, t := range tags {
		if !p.answered[t].Load() {
			p.answered[t].Store(true)
		}
	}
}

// Served lists the productions some answer showed served.
func (p *Pruner) Served() []string {
	var out []string
	for t := range p.answered {
		if p.answered[t].Load() {
			out = append(out, tagNames[t])
		}
	}
	return out
}

// MarkServed notes a production served (the probe saw it answered), so
// that a refusal during the run does not blame it.
func (p *Pruner) MarkServed(production string) {
	if t, ok := tagByStr[production]; ok {
		p.answered[t].Store(true)
	}
}

// refuseDuring prunes what a refusal met during the run names: the
// productions of the request that no answer has shown served yet; when
// every one of them was served in other requests, the combination. It
// returns what it pruned, for the log.
func (p *Pruner) refuseDuring(tags []Tag, sig uint64, words string) []string {
	var out []string
	for _, t := range tags {
		if !p.answered[t].Load() && !p.refused[t].Load() {
			p.refuse(t, words)
			out = append(out, tagNames[t])
		}
	}
	if len(out) > 0 {
		p.mu.Lock()
		p.during = append(p.during, out...)
		p.mu.Unlock()
		return out
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.combos[sig] {
		p.combos[sig] = true
		var names []string
		for _, t := range tags {
			if !valueField[tagField[t]] {
				names = append(names, tagNames[t])
			}
		}
		combo := "{" + strings.Join(names, " ") + "}"
		p.words[combo] = words
		p.during = append(p.during, combo)
		out = append(out, combo)
	}
	return out
}

// Words are the pruned productions (and combinations, in braces) with
// the target's words.
func (p *Pruner) Words() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]string, len(p.words))
	for k, v := range p.words {
		out[k] = v
	}
	return out
}

// signature names the options of a set of tags (sorted, without
// repeats): the tags of value fields left out.
func signature(tags []Tag) uint64 {
	h := fnv.New64a()
	var b [4]byte
	for _, t := range tags {
		if valueField[tagField[t]] {
			continue
		}
		b[0], b[1], b[2], b[3] = byte(t), byte(t>>8), byte(t>>16), byte(t>>24)
		h.Write(b[:])
	}
	return h.Sum64()
}

// normalize sorts tags by the vocabulary and drops repeats.
func normalize(tags []Tag) []Tag {
	slices.Sort(tags)
	return slices.Compact(tags)
}

// During says what refusals met during the run pruned: how many
// productions, and how many combinations, with the productions named.
func (p *Pruner) During() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var prods []string
	combos := 0
	for _, d := range p.during {
		if strings.HasPrefix(d, "{") {
			combos++
		} else {
			prods = append(prods, fmt.Sprintf("%s (%s)", d, p.words[d]))
		}
	}
	if len(prods) == 0 && combos == 0 {
		return ""
	}
	return fmt.Sprintf("%d production(s)%s and %d combination(s) of productions served alone",
		len(prods), strings.Join(append([]string{""}, prods...), "; "), combos)
}

// String lists the pruned productions, for a log line.
func (p *Pruner) String() string {
	w := p.Words()
	keys := make([]string, 0, len(w))
	for k := range w {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, Order)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s (%s)", k, w[k]))
	}
	return strings.Join(parts, "; ")
}
