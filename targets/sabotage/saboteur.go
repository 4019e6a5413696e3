package sabotage

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

// Config says what to inject in one run.
type Config struct {
	// Mode is a Mode's Name.
	Mode string
	// Seed is the run's seed; every choice of the saboteur derives from it.
	Seed int64
	// Recorder is the run's recorder: its clock times the injection and
	// the fault record goes into it.
	Recorder *history.Recorder
	// Duration is how long the workload runs; the injection is armed at a
	// seeded fraction of it. Zero arms at once.
	Duration time.Duration
}

// Saboteur injects one semantic bug, once per run, into what the clients
// it wrapped see. It is shared by every client of the run and safe for
// concurrent use.
type Saboteur struct {
	mode  Mode
	rec   *history.Recorder
	armAt time.Duration
	// preferDelay: plain watches of a range become eligible this long after
	// arming, so that a watch of one key or with a filter, if any, goes first
	// (out-of-filter).
	preferDelay time.Duration

	mu      sync.Mutex
	rng     *rand.Rand
	skip    int
	state   claimState
	faults  int
	reads   map[string]rememberedRead // key -> last linearizable get that found it
	writes  map[string]ackedWrite     // key -> last acknowledged write to it
	counter int                       // numbers fabricated values

	// stale-list: what it remembers of lists and writes (kube.go).
	kube staleListMemory
	// contended-lost-write: the clients with a put in flight, by key.
	inflight map[string]map[int]bool
	// diverge-member: the write the member diverges at (diverge.go).
	div *divergence
}

type claimState int

const (
	idle claimState = iota
	claimed
	done
)

// rememberedRead is a linearizable single-key get with the key present.
type rememberedRead struct {
	resp history.Response
	at   time.Duration
}

// ackedWrite is the last acknowledged write of a key, as the saboteur saw
// its response.
type ackedWrite struct {
	rev int64
	at  time.Duration
}

// staleMargin is how long before a read's call the overwriting write must
// have been acknowledged for stale-read, so that in the history its return
// surely precedes the read's call (Recording stamps both a little outside
// of what the saboteur sees).
const staleMargin = 50 * time.Millisecond

// New returns a Saboteur for cfg.Mode. An unknown mode is an error naming
// the modes there are.
func New(cfg Config) (*Saboteur, error) {
	m, ok := Lookup(cfg.Mode)
	if !ok {
		return nil, fmt.Errorf("unknown sabotage mode %q; modes: %v", cfg.Mode, Names())
	}
	if cfg.Recorder == nil {
		return nil, fmt.Errorf("sabotage: a recorder is required")
	}
	h := fnv.New64a()
	h.Write([]byte("sabotage:" + m.Name))
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), h.Sum64()))
	frac := m.arm[0] + rng.Float64()*(m.arm[1]-m.arm[0])
	s := &Saboteur{
		mode: m, rec: cfg.Recorder, rng: rng,
		armAt:       time.Duration(frac * float64(cfg.Duration)),
		preferDelay: cfg.Duration / 8,
		skip:        rng.IntN(m.maxSkip + 1),
		reads:       map[string]rememberedRead{},
		writes:      map[string]ackedWrite{},
		inflight:    map[string]map[int]bool{},
	}
	return s, nil
}

// Mode is the mode being injected.
func (s *Saboteur) Mode() Mode { return s.mode }

// ArmAt is the time on the run's clock from which the saboteur injects at
// an eligible opportunity.
func (s *Saboteur) ArmAt() time.Duration { return s.armAt }

// Injected reports how many times the saboteur injected (0 or 1).
func (s *Saboteur) Injected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults
}

// Wrap wraps client number id of the run (it has the signature of
// workload.Wrapper). The wrapper sees every request and watch of the client
// and changes at most what the mode says, once per run.
func (s *Saboteur) Wrap(c targets.Client, id int) targets.Client {
	return &client{inner: c, id: id, s: s}
}

// claim reserves the run's one injection for the caller, if the saboteur
// is armed (delay after its arming time), has let its seeded number of
// opportunities pass, and has not injected yet. The caller then commits
// (records the fault) or releases it.
func (s *Saboteur) claim(delay time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != idle || s.rec.Now() < s.armAt+delay {
		return false
	}
	if s.skip > 0 {
		s.skip--
		return false
	}
	s.state = claimed
	return true
}

// release gives a claimed injection back: the opportunity fell through.
func (s *Saboteur) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == claimed {
		s.state = idle
	}
}

// commit records the injection the caller claimed as a fault of client c
// that started at start. details must hold "what"; "client" and "member"
// are added.
func (s *Saboteur) commit(c *client, start time.Duration, details map[string]string) {
	s.commitFor(c.id, c.inner.Member(), start, details)
}

// commitFor is commit for client number id talking to member.
func (s *Saboteur) commitFor(id int, member string, start time.Duration, details map[string]string) {
	s.mu.Lock()
	s.state = done
	s.faults++
	s.mu.Unlock()
	details["client"] = fmt.Sprint(id)
	details["member"] = member
	s.rec.Add(history.Record{Fault: &history.Fault{
		ID: s.rec.NextFaultID(), Name: FaultName(s.mode.Name),
		Targets: []string{fmt.Sprintf("client-%d", id), member},
		Start:   start, End: s.rec.Now(), Details: details,
	}})
}

// intn draws from the run's seeded stream.
func (s *Saboteur) intn(n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.IntN(n)
}

// fabricated returns a fresh number for a fabricated value.
func (s *Saboteur) fabricated() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counter++
	return s.counter
}

// ignoreProgress reports whether client c's progress request is to be
// dropped (ignore-progress): every one from the arming on. The first drop
// records the fault; it lasts to the end of the run.
func (s *Saboteur) ignoreProgress(c *client) bool {
	return s.lasting(c, "from here on, every progress request of every client is dropped before it reaches the server")
}

// lasting reports whether a mode that lasts from its arming to the run's
// end (ignore-progress, stale-member-read) applies to client c's request
// now. The first request it applies to records the fault, whose details
// say what every later one meets (what).
func (s *Saboteur) lasting(c *client, what string) bool {
	s.mu.Lock()
	started := s.state != idle
	s.mu.Unlock()
	if started {
		return true
	}
	start := s.rec.Now()
	if !s.claim(0) {
		// Claimed by another client meanwhile: it applies from then on.
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.state != idle
	}
	s.commit(c, start, map[string]string{"what": what})
	return true
}

// writing marks client id's put to key as in flight and returns the
// function that marks it done (contended-lost-write).
func (s *Saboteur) writing(id int, key string) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight[key] == nil {
		s.inflight[key] = map[int]bool{}
	}
	s.inflight[key][id] = true
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.inflight[key], id)
	}
}

// contended reports whether a client other than id has a put to key in
// flight.
func (s *Saboteur) contended(id int, key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for other := range s.inflight[key] {
		if other != id {
			return true
		}
	}
	return false
}
