package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

// Patterns are where and when requests are sent, beside what they are:
// the placements and timings servers are known to break under
// (history.Patterns names them). Each has a share, in percent, of its
// opportunities:
//
//   - read-after-ack: of a KV client's acknowledged writes, those after
//     which a linearizable read of a key written (a quarter of the time
//     a range over the prefix) goes at once to every other member, each
//     from a client of its own. A member that answers without a read
//     index serves it from a state that may lack the write.
//   - compact-race: of the compactions, those made to the revision of a
//     write just acknowledged while other writes to that key are sent at
//     the same instant, followed by reads at the compact revision and
//     one below it.
//   - watch-at-compact, watch-at-head: of a watcher's openings (its first
//     and its restarts on purpose), those opened at the compact revision,
//     or at the head revision.
//   - fault-start, fault-heal: of the faults, those whose start and heal
//     get a burst of requests to every member, the one hurt among them.
//
// Every request a pattern sends carries the draw entry
// "pattern=<name>", so its coverage is counted from the history. Each
// pattern draws from a seeded stream of its own, so the shares change
// nothing else the workload draws: with every share 0 the run sends what
// it sent before patterns existed.
func defaultPatternShares(shape string) map[string]int {
	s := map[string]int{
		history.PatternReadAfterAck:   20,
		history.PatternCompactRace:    50,
		history.PatternWatchAtCompact: 20,
		history.PatternWatchAtHead:    20,
		history.PatternFaultStart:     100,
		history.PatternFaultHeal:      100,
	}
	if shape == ShapeFutureWatch {
		// Its watchers all open ahead of the store: that is the shape.
		s[history.PatternWatchAtCompact], s[history.PatternWatchAtHead] = 0, 0
	}
	return s
}

// PatternShares are the shares of the patterns in a run of this config:
// its shape's, changed by cfg.Patterns ("none" sets every share to 0,
// "name=N" sets one; comma-separated, applied in order).
func (c Config) PatternShares() (map[string]int, error) {
	s := defaultPatternShares(c.Shape)
	if strings.TrimSpace(c.Patterns) == "" {
		return s, nil
	}
	for _, item := range strings.Split(c.Patterns, ",") {
		item = strings.TrimSpace(item)
		name, val, isSet := strings.Cut(item, "=")
		switch {
		case item == "none":
			for k := range s {
				s[k] = 0
			}
			continue
		case item == "default" || item == "":
			continue
		case !isSet:
			return nil, fmt.Errorf("--patterns: %q is not NAME=PERCENT, none or default", item)
		case !slices.Contains(history.Patterns(), name):
			return nil, fmt.Errorf("--patterns: unknown pattern %q; patterns: %s", name, strings.Join(history.Patterns(), ", "))
		}
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 || n > 100 {
			return nil, fmt.Errorf("--patterns: %s=%s: the share is a percentage, 0 to 100", name, val)
		}
		s[name] = n
	}
	if s[history.PatternWatchAtCompact]+s[history.PatternWatchAtHead] > 100 {
		return nil, errors.New("--patterns: watch-at-compact and watch-at-head share a watcher's openings: together at most 100")
	}
	return s, nil
}

// patterns is the patterns' state in a run: their shares, their clients
// and their seeded streams.
type patterns struct {
	shares map[string]int
	// chasers[i] are KV client i's clients of the other members, which
	// send its reads after an acknowledged write (read-after-ack); only
	// its goroutine uses them.
	chasers [][]*patternClient
	// racers are the compactor's clients, one per member, that write as
	// it compacts (compact-race); only its goroutine uses them.
	racers []*patternClient
	// bursters are one client per member for the bursts at a fault's
	// start and heal; a burst skips a member whose client is still busy.
	bursters []*patternClient

	// Each KV client's and the compactor's streams, drawn anew each
	// segment; each is used by one goroutine.
	chaseRNG   []*rand.Rand
	compactRNG *rand.Rand

	// The bursts: a fault edge comes from chaos's goroutine, any time.
	mu       sync.Mutex
	live     bool            // a segment is running: bursts may start
	ctx      context.Context // the run's: bursts hang off it
	prefix   string          // the running segment's
	faultRNG *rand.Rand
	bursts   sync.WaitGroup
}

// patternClient is a recorded client of one member that a pattern
// writes through: a value names its write, so the client counts its own.
type patternClient struct {
	*targets.Recording
	busy sync.Mutex // a burster's: one burst at a time
	seq  int
	// modRev is the mod revision this client last saw of each key (0:
	// absent), for the storage layer's compare-and-swap where a target
	// serves no plain put.
	modRev map[string]int64
}

func (pc *patternClient) value() string {
	pc.seq++
	return fmt.Sprintf("%d.%d", pc.ID(), pc.seq)
}

// openPatterns dials the clients of the patterns whose share is not 0,
// before the run starts; they are closed with the run's (add). members
// the workload knows are dialed as the KV clients are.
func (w *Workload) openPatterns(ctx context.Context, add func(*targets.Recording)) error {
	shares, err := w.cfg.PatternShares()
	if err != nil {
		return err
	}
	p := &patterns{shares: shares}
	dial := func(member int) (*patternClient, error) {
		c, err := w.NewClient(ctx, member)
		if err != nil {
			return nil, err
		}
		add(c)
		return &patternClient{Recording: c, modRev: map[string]int64{}}, nil
	}
	if shares[history.PatternReadAfterAck] > 0 {
		p.chasers = make([][]*patternClient, w.cfg.Clients)
		for i := range p.chasers {
			for _, m := range otherMembers(i%w.members, w.members) {
				c, err := dial(m)
				if err != nil {
					return err
				}
				p.chasers[i] = append(p.chasers[i], c)
			}
		}
	}
	if shares[history.PatternCompactRace] > 0 && w.cfg.CompactEvery > 0 {
		for m := range w.members {
			c, err := dial(m)
			if err != nil {
				return err
			}
			p.racers = append(p.racers, c)
		}
	}
	if (shares[history.PatternFaultStart] > 0 || shares[history.PatternFaultHeal] > 0) && w.During != nil {
		for m := range w.members {
			c, err := dial(m)
			if err != nil {
				return err
			}
			p.bursters = append(p.bursters, c)
		}
	}
	w.pat = p
	return nil
}

// otherMembers are the members other than m, or m itself when it is the
// only one (then the read goes to the same endpoint on another connection).
func otherMembers(m, members int) []int {
	if members <= 1 {
		return []int{0}
	}
	var out []int
	for i := range members {
		if i != m {
			out = append(out, i)
		}
	}
	return out
}

// beginPatterns readies the patterns for a segment: their streams drawn
// anew, the bursts allowed under the segment's prefix. ctx is the run's.
func (w *Workload) beginPatterns(ctx context.Context) {
	p := w.pat
	if p == nil {
		return
	}
	p.chaseRNG = make([]*rand.Rand, w.cfg.Clients)
	for i := range p.chaseRNG {
		p.chaseRNG[i] = w.seeded(fmt.Sprintf("patterns/client-%d", i))
	}
	p.compactRNG = w.seeded("patterns/compactor")
	p.mu.Lock()
	p.live, p.ctx, p.prefix = true, ctx, w.cfg.Prefix
	p.faultRNG = w.seeded("patterns/faults")
	p.mu.Unlock()
}

// endPatterns stops the bursts of a segment and waits for those under
// way: nothing of a segment is sent after it ended.
func (w *Workload) endPatterns() {
	p := w.pat
	if p == nil {
		return
	}
	p.mu.Lock()
	p.live = false
	p.mu.Unlock()
	p.bursts.Wait()
}

// draws says whether a pattern of this share fires, drawing from rng.
func draws(rng *rand.Rand, share int) bool { return share > 0 && rng.IntN(100) < share }

// chase is read-after-ack: KV client id's request req was just answered
// with resp; if it wrote and the draw says so, a read of a key it wrote
// goes at once to every other member, each from a client of its own.
func (w *Workload) chase(ctx context.Context, id int, req history.Request, resp *history.Response) {
	p := w.pat
	if p == nil || id >= len(p.chasers) || len(p.chasers[id]) == 0 {
		return
	}
	keys := executedWrites(req, resp)
	if len(keys) == 0 {
		return
	}
	rng := p.chaseRNG[id]
	if !draws(rng, p.shares[history.PatternReadAfterAck]) {
		return
	}
	read := history.Request{Kind: history.OpRange, Key: keys[rng.IntN(len(keys))]}
	if rng.IntN(4) == 0 && !w.cfg.refuses(grammarPrefixRange) {
		read = history.Request{Kind: history.OpRange, Key: w.cfg.Prefix, End: prefixEnd(w.cfg.Prefix)}
	}
	draw := history.PatternDraw(history.PatternReadAfterAck)
	var wg sync.WaitGroup
	for _, c := range p.chasers[id] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.sendPattern(ctx, c, read, draw)
		}()
	}
	wg.Wait()
}

// executedWrites are the keys an answered request put or deleted.
func executedWrites(req history.Request, resp *history.Response) []string {
	var keys []string
	history.Executed(&req, resp, func(r *history.Request, _ *history.Response) {
		if (r.Kind == history.OpPut || r.Kind == history.OpDelete) && r.End == "" && !slices.Contains(keys, r.Key) {
			keys = append(keys, r.Key)
		}
	})
	return keys
}

// sendPattern sends one request of a pattern, counted in the live stats,
// and teaches a writing client the mod revisions it learned.
func (w *Workload) sendPattern(ctx context.Context, c *patternClient, req history.Request, draw []string) (*history.Response, error) {
	rctx, cancel := context.WithTimeout(ctx, w.cfg.RequestTimeout)
	resp, err := c.DoDrawn(rctx, req, draw)
	cancel()
	w.Stats.Ops.Add(1)
	if err != nil {
		w.Stats.FailedOps.Add(1)
		req.Writes(func(r *history.Request, _ bool) { delete(c.modRev, r.Key) })
		return nil, err
	}
	w.Stats.sawRevision(resp.Revision)
	history.Executed(&req, resp, func(r *history.Request, in *history.Response) {
		switch r.Kind {
		case history.OpPut:
			c.modRev[r.Key] = resp.Revision
		case history.OpDelete:
			c.modRev[r.Key] = 0
		case history.OpRange:
			if r.Revision == 0 && r.End == "" {
				c.modRev[r.Key] = 0
				for _, kv := range in.KVs {
					c.modRev[kv.Key] = kv.ModRevision
				}
			}
		}
	})
	return resp, nil
}

// The grammar's productions the patterns' requests are made of: a plain
// put, the storage layer's compare-and-swap (a txn comparing a mod
// revision, a put if it holds, a read if not), a range over a prefix.
const (
	grammarPut         = "request.kind=put"
	grammarCAS         = "compare.test=mod/="
	grammarPrefixRange = "range.span=prefix"
)

// write is a write of key by c, of the plainest form the target serves:
// a put, else the storage layer's compare-and-swap on what c last saw
// of the key; ok is false when it serves neither.
func (w *Workload) write(c *patternClient, key string) (history.Request, bool) {
	value := c.value()
	switch {
	case !w.cfg.refuses(grammarPut):
		return history.Request{Kind: history.OpPut, Key: key, Value: value}, true
	case !w.cfg.refuses(grammarCAS):
		return kubeUpdate(key, value, c.modRev[key]), true
	}
	return history.Request{}, false
}

// compactRace is compact-race, drawn at one of the compactor's turns
// (last is its last compact revision): a write to a key, then at the
// same instant a compaction to that write's revision and a write to the
// key from every member, then reads of the key at the compact revision
// and one below. done says the turn was the pattern's; rev is the
// revision compacted to (0: none), or -1 when the target refuses
// compactions.
func (w *Workload) compactRace(ctx context.Context, control *targets.Recording, last int64) (rev int64, done bool) {
	p := w.pat
	if p == nil || len(p.racers) == 0 || !draws(p.compactRNG, p.shares[history.PatternCompactRace]) {
		return 0, false
	}
	// The member comparer's round before a compaction (members.go); while
	// it holds compactions back for a bisection, the ordinary turn does.
	if head := w.Stats.StoreRevision.Load(); w.beforeCompact(ctx, head) < head {
		return 0, false
	}
	draw := history.PatternDraw(history.PatternCompactRace)
	key := w.key(p.compactRNG.IntN(w.cfg.Keys))
	first, ok := w.write(p.racers[0], key)
	if !ok {
		return 0, false
	}
	resp, err := w.sendPattern(ctx, p.racers[0], first, draw)
	if err != nil || resp.Revision <= last || resp.Revision < w.cfg.MinRevision || (first.Kind == history.OpTxn && !resp.Succeeded) {
		return 0, true
	}
	rev = resp.Revision
	start := make(chan struct{})
	var wg sync.WaitGroup
	var compactErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-start
		rctx, cancel := context.WithTimeout(ctx, w.cfg.RequestTimeout)
		_, compactErr = control.DoDrawn(rctx, history.Request{Kind: history.OpCompact, Revision: rev}, draw)
		cancel()
		w.Stats.Ops.Add(1)
	}()
	for _, c := range p.racers {
		req, ok := w.write(c, key)
		if !ok {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			w.sendPattern(ctx, c, req, draw)
		}()
	}
	close(start)
	wg.Wait()
	switch {
	case targets.CodeOf(compactErr) == history.ErrRefused:
		return -1, true
	case compactErr != nil:
		w.Stats.FailedOps.Add(1)
		return 0, true
	}
	w.Stats.CompactRevision.Store(rev)
	// At the compact revision the key holds the first write; one below,
	// the server must say compacted (unless that is below the run).
	reads := []history.Request{{Kind: history.OpRange, Key: key, Revision: rev}}
	if rev-1 >= max(w.cfg.MinRevision, 1) {
		reads = append(reads, history.Request{Kind: history.OpRange, Key: key, Revision: rev - 1})
	}
	for _, r := range reads {
		rctx, cancel := context.WithTimeout(ctx, w.cfg.RequestTimeout)
		_, err := control.DoDrawn(rctx, r, draw)
		cancel()
		w.Stats.Ops.Add(1)
		if err != nil {
			w.Stats.FailedOps.Add(1)
		}
	}
	return rev, true
}

// watchPattern is watch-at-compact or watch-at-head, drawn at a
// watcher's opening from its stream rng: it moves *start to the compact
// revision or to the head and returns the watch's draw entries, or
// leaves *start and returns nil.
func (w *Workload) watchPattern(rng *rand.Rand, start *int64) []string {
	p := w.pat
	if p == nil || rng == nil || w.cfg.refuses(history.FormWatchStartRev) {
		return nil
	}
	atCompact, atHead := p.shares[history.PatternWatchAtCompact], p.shares[history.PatternWatchAtHead]
	if atCompact+atHead == 0 {
		return nil
	}
	floor := max(w.watchFloor.Load(), 1) // the watchers' floor (runSegment)
	switch d := rng.IntN(100); {
	case d < atCompact:
		if c := w.Stats.CompactRevision.Load(); c >= floor {
			*start = c
			return history.PatternDraw(history.PatternWatchAtCompact)
		}
	case d < atCompact+atHead:
		if h := w.Stats.StoreRevision.Load(); h >= floor {
			*start = h
			return history.PatternDraw(history.PatternWatchAtHead)
		}
	}
	return nil
}

// patternClass is the grammar's class of the start revision a watch
// pattern chose: the compact revision or the head.
func patternClass(draw []string) string {
	if history.PatternOf(draw) == history.PatternWatchAtCompact {
		return "compact"
	}
	return "head"
}

// FaultEdge tells the workload that a fault is about to start (healed
// false) or has just healed: if the draw says so, a burst of requests
// goes to every member at once, the one the fault hurts among them. It
// returns at once; package suites wires the chaos schedule to it.
func (w *Workload) FaultEdge(healed bool) {
	p := w.pat
	if p == nil || len(p.bursters) == 0 {
		return
	}
	name := history.PatternFaultStart
	if healed {
		name = history.PatternFaultHeal
	}
	p.mu.Lock()
	if !p.live || !draws(p.faultRNG, p.shares[name]) {
		p.mu.Unlock()
		return
	}
	ctx, prefix := p.ctx, p.prefix
	keys := make([]string, burstLength)
	for i := range keys {
		keys[i] = keyIn(prefix, p.faultRNG.IntN(w.cfg.Keys))
	}
	p.bursts.Add(len(p.bursters))
	p.mu.Unlock()
	for _, c := range p.bursters {
		go func() {
			defer p.bursts.Done()
			w.burst(ctx, c, prefix, keys, history.PatternDraw(name))
		}()
	}
}

// burstLength is how many requests a burst sends to each member.
const burstLength = 4

// burst sends a write, a read of it, a second write and a range over the
// prefix, back to back, through member client c, unless c is still busy
// with an earlier burst; it stops at the first request that got no
// answer (the member is down: the next would only wait as long).
func (w *Workload) burst(ctx context.Context, c *patternClient, prefix string, keys []string, draw []string) {
	if !c.busy.TryLock() {
		return
	}
	defer c.busy.Unlock()
	for i, key := range keys {
		var req history.Request
		switch i % 4 {
		case 0, 2:
			var ok bool
			if req, ok = w.write(c, key); !ok {
				continue
			}
		case 1:
			req = history.Request{Kind: history.OpRange, Key: keys[i-1]}
		case 3:
			if w.cfg.refuses(grammarPrefixRange) {
				continue
			}
			req = history.Request{Kind: history.OpRange, Key: prefix, End: prefixEnd(prefix)}
		}
		if _, err := w.sendPattern(ctx, c, req, draw); err != nil && !targets.CodeOf(err).Definite() {
			return
		}
	}
}
