package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-suite/vigil/history"
)

// A failpoint fault arms one of etcd's gofail failpoints on one member
// through the member's gofail HTTP endpoint (a build made with
// `vigil build etcd VERSION --failpoints`, run with vigil run --failpoints).
// The panic kind crashes the member at that exact line of code, the next
// time it passes there, which a SIGKILL from outside hits only by chance;
// healing restarts it on its data dir. The sleep kind slows that line down
// while the fault lasts.

// panicTerm is the gofail term of the panic kind; the sleep kind arms sleep(MS).
const (
	panicTerm = `panic("vigil")`
)

// crashPoint is a failpoint worth crashing a member at: on a path every
// vigil workload runs (the raft loop, WAL, backend commit, apply,
// compaction), so that it fires while the fault holds.
type crashPoint struct {
	name string
	aim  aim
	// compact: the path runs on compaction, so the fault compacts once
	// itself rather than wait for the workload to.
	compact bool
	// defrag: the path runs on defragmentation, so the fault defragments
	// the armed member itself.
	defrag bool
	what   string
}

// crashPoints are the failpoints vigil injects; a build that lacks one
// (older etcd) makes that fault unmet, not an error. Names as in etcd's
// `// gofail: var NAME` comments (3.5 and 3.6 hold most of them).
var crashPoints = []crashPoint{
	{name: "raftBeforeSave", aim: aimRandom, what: "in the raft loop, before entries and hard state are written to the WAL"},
	{name: "raftAfterSave", aim: aimRandom, what: "in the raft loop, after the WAL write, before raft's memory storage has the entries"},
	{name: "raftBeforeLeaderSend", aim: aimLeader, what: "on the leader, before it sends a Ready's messages to the followers"},
	{name: "raftBeforeFollowerSend", aim: aimFollower, what: "on a follower, before it answers the leader"},
	{name: "raftBeforeAdvance", aim: aimRandom, what: "in the raft loop, after a Ready is handled, before raft is told (etcd 3.6+)"},
	{name: "walBeforeSync", aim: aimRandom, what: "before the WAL fsyncs a write"},
	{name: "walAfterSync", aim: aimRandom, what: "right after the WAL fsyncs a write"},
	{name: "beforeApplyOneEntryNormal", aim: aimRandom, what: "before a committed entry is applied (etcd 3.5+)"},
	{name: "beforeCommit", aim: aimRandom, what: "before the backend commits its batch to bbolt"},
	{name: "afterCommit", aim: aimRandom, what: "right after the backend's bbolt commit"},
	{name: "beforeWritebackBuf", aim: aimRandom, what: "after a bbolt commit, before the read buffer sees the batch (etcd 3.5+)"},
	{name: "compactBeforeSetFinishedCompact", aim: aimRandom, compact: true, what: "at the end of a compaction, before it is marked finished (etcd 3.5+)"},
	{name: "compactBeforeCommitScheduledCompact", aim: aimRandom, compact: true, what: "before a scheduled compaction is committed (etcd 3.6+)"},
	{name: "compactAfterCommitScheduledCompact", aim: aimRandom, compact: true, what: "after a scheduled compaction is committed (etcd 3.6+)"},
	{name: "defragBeforeCopy", aim: aimRandom, defrag: true, what: "in a defragmentation, before the keys are copied to the new file"},
	{name: "defragBeforeRename", aim: aimRandom, defrag: true, what: "in a defragmentation, after the copy, before the new file replaces the old"},
	{name: "compactBeforeCommitBatch", aim: aimRandom, compact: true, what: "before a compaction batch is committed (etcd 3.6+)"},
	{name: "compactAfterCommitBatch", aim: aimRandom, compact: true, what: "after a compaction batch is committed (etcd 3.6+)"},
}

// sleepPoints get a sleep variant too: a slow WAL, a slow commit, a slow
// leader, a slow apply.
var sleepPoints = []string{"raftBeforeSave", "beforeCommit", "raftBeforeLeaderSend", "beforeApplyOneEntryNormal"}

func crashPointNamed(name string) crashPoint {
	for _, p := range crashPoints {
		if p.name == name {
			return p
		}
	}
	return crashPoint{name: name, aim: aimRandom}
}

// failpointFault arms one failpoint (panic or sleep) on one member.
type failpointFault struct {
	point crashPoint
	sleep bool
	// nap is how long the sleep kind sleeps at each pass; 0: 100 ms.
	nap time.Duration
	// named is the name it was asked for with parameters (parseFailpoint);
	// empty for the registered, unparameterized faults.
	named string
}

func (f failpointFault) Name() string {
	if f.named != "" {
		return f.named
	}
	if f.sleep {
		return "failpoint-sleep:" + f.point.name
	}
	return "failpoint:" + f.point.name
}

// parseFailpoint reads a failpoint fault with parameters:
//
//	failpoint:NAME[@AIM]
//	failpoint-sleep:NAME[@AIM][=DURATION]
//
// AIM is leader, follower or random (default: the failpoint's own, or
// random for a failpoint vigil does not list); DURATION is a Go duration,
// at least 1 ms (default 100 ms). Any failpoint of the build may be named:
// whether it exists is the Needs check's business, at run time.
func parseFailpoint(name string) (failpointFault, bool) {
	rest, sleep := strings.CutPrefix(name, "failpoint-sleep:")
	if !sleep {
		var ok bool
		if rest, ok = strings.CutPrefix(name, "failpoint:"); !ok {
			return failpointFault{}, false
		}
	}
	var nap time.Duration
	if i := strings.IndexByte(rest, '='); i >= 0 {
		if !sleep {
			return failpointFault{}, false
		}
		d, err := time.ParseDuration(rest[i+1:])
		if err != nil || d < time.Millisecond {
			return failpointFault{}, false
		}
		nap, rest = d, rest[:i]
	}
	fpName, aimName, hasAim := strings.Cut(rest, "@")
	if fpName == "" || strings.ContainsAny(fpName, "/ ") {
		return failpointFault{}, false
	}
	p := crashPointNamed(fpName)
	if hasAim {
		switch a := aim(aimName); a {
		case aimLeader, aimFollower, aimRandom:
			p.aim = a
		default:
			return failpointFault{}, false
		}
	}
	return failpointFault{point: p, sleep: sleep, nap: nap, named: name}, true
}

func (f failpointFault) Needs() Needs {
	return Needs{Processes: true, Failpoint: f.point.name, Members: minMembers(f.point.aim)}
}

func (f failpointFault) Describe() string {
	who := map[aim]string{aimLeader: "the leader", aimFollower: "a follower", aimRandom: "a random member"}[f.point.aim]
	if f.sleep {
		return fmt.Sprintf("%s sleeps %v each time it passes %s: %s; disarmed when healed", who, f.napOr100(), f.point.name, f.point.what)
	}
	return fmt.Sprintf("%s panics at %s: %s; restarted when healed", who, f.point.name, f.point.what)
}

func (f failpointFault) Inject(ctx context.Context, env *Env, pick uint32) (Injected, error) {
	if err := f.Needs().Unmet(env); err != nil {
		return Injected{}, err
	}
	return armFailpoint(ctx, env, f.point, f.term(), pick)
}

func (f failpointFault) napOr100() time.Duration {
	if f.nap == 0 {
		return 100 * time.Millisecond
	}
	return f.nap
}

// term is the gofail term the fault arms.
func (f failpointFault) term() string {
	if !f.sleep {
		return panicTerm
	}
	return fmt.Sprintf("sleep(%d)", f.napOr100().Milliseconds())
}

// failpointRandom arms a panic at a failpoint of the build chosen by the
// seeded pick.
type failpointRandom struct{}

func (failpointRandom) Name() string { return "failpoint-random" }
func (failpointRandom) Needs() Needs { return Needs{Processes: true, Failpoints: true} }
func (failpointRandom) Describe() string {
	return "a member panics at one of the failpoints:NAME above (those the build has), chosen by the seed; restarted when healed"
}

func (r failpointRandom) Inject(ctx context.Context, env *Env, pick uint32) (Injected, error) {
	if err := r.Needs().Unmet(env); err != nil {
		return Injected{}, err
	}
	names := env.Failpoints.FailpointNames()
	members := len(env.Fixture.Members())
	var avail []crashPoint
	for _, p := range crashPoints {
		if slices.Contains(names, p.name) && members >= minMembers(p.aim) {
			avail = append(avail, p)
		}
	}
	if len(avail) == 0 {
		return Injected{}, errors.New("this etcd build has none of the failpoints vigil crashes members at")
	}
	// The low bits choose the failpoint, the rest the member.
	p := avail[int(pick%uint32(len(avail)))]
	return armFailpoint(ctx, env, p, panicTerm, pick/uint32(len(avail)))
}

// armFailpoint arms point on the member the aim and pick choose, and
// returns a Heal that finds out whether it fired, disarms it if the
// member still runs, and restarts the member if it exited.
func armFailpoint(ctx context.Context, env *Env, point crashPoint, term string, pick uint32) (Injected, error) {
	m, err := choose(ctx, env, point.aim, pick)
	if err != nil {
		return Injected{}, err
	}
	fp := env.Failpoints
	addr := fp.FailpointAddr(m.Name)
	if addr == "" {
		return Injected{}, fmt.Errorf("member %s has no failpoint endpoint", m.Name)
	}
	exited := fp.Exited(m.Name) // this process's exit, not a later one's
	select {
	case <-exited:
		return Injected{}, fmt.Errorf("member %s is not running", m.Name)
	default:
	}
	// The panic is the fault's: the member's exit is expected, said
	// before the failpoint can fire, and taken back if it never does.
	expect := func(string) {}
	if x, ok := env.Fixture.(ExitExpecter); ok && term == panicTerm {
		expect = func(why string) { x.ExpectExit(m.Name, why) }
	}
	expect(fmt.Sprintf("failpoint %s armed to panic (%s)", point.name, term))
	armed := time.Now()
	if err := gofail(ctx, http.MethodPut, addr, point.name, term); err != nil {
		expect("")
		return Injected{}, fmt.Errorf("arming failpoint %s on %s: %w", point.name, m.Name, err)
	}
	in := Injected{Targets: []string{m.Name}, Details: map[string]string{
		"failpoint": point.name, "term": term, "aim": string(point.aim), "fired": "false"}}

	// When did the member go down? Measured as it happens, not at heal.
	exitedAfter := make(chan time.Duration, 1)
	stopWatch := make(chan struct{})
	go func() {
		select {
		case <-exited:
			exitedAfter <- time.Since(armed)
		case <-stopWatch:
		}
	}()
	if point.compact && env.Do != nil {
		// Run the path now; the compaction goes into the history.
		compactOnce(ctx, env.Do)
	}
	if point.defrag && env.DoOn != nil {
		// Defragment the armed member now; the request goes into the
		// history, and its error (the member crashing under it) too.
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		env.DoOn(dctx, m.Name, history.Request{Kind: history.OpDefrag})
		cancel()
	}

	in.Heal = func(ctx context.Context) error {
		defer close(stopWatch)
		select {
		case <-exited:
		default:
			// Still up: how often did it pass there? Then disarm.
			if n, err := gofailCount(ctx, addr, point.name); err == nil {
				in.Details["hits"] = strconv.Itoa(n)
				if n > 0 {
					in.Details["fired"] = "true"
				}
			}
			if err := gofail(ctx, http.MethodDelete, addr, point.name, ""); err != nil {
				// The endpoint is gone with its process, or going.
				select {
				case <-exited:
				case <-time.After(5 * time.Second):
					return fmt.Errorf("disarming failpoint %s on %s: %w", point.name, m.Name, err)
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}
		select {
		case <-exited:
		default:
			expect("")
			return nil // the sleep kind, or a panic that never fired
		}
		in.Details["fired"] = "true"
		in.Details["exited"] = "true"
		select {
		case d := <-exitedAfter:
			in.Details["exited_after"] = d.Round(time.Millisecond).String()
		case <-time.After(time.Second):
		}
		return env.Processes.StartMember(ctx, m.Name)
	}
	return in, nil
}

// ExitExpecter is what a fixture offers when it watches its processes
// for exits (fixtures.Supervised): a fault that makes a member exit by
// itself (a failpoint armed to panic) says so first, and the exit is
// recorded as the fault's doing, not the member's.
type ExitExpecter interface {
	// ExpectExit marks the member's coming exit as expected, why saying
	// what makes it come; an empty why takes the mark back.
	ExpectExit(member, why string)
}

// compactOnce compacts to the current revision through do (recorded in
// the history); a failure is left to the history to tell.
func compactOnce(ctx context.Context, do func(context.Context, history.Request) (*history.Response, error)) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	resp, err := do(ctx, history.Request{Kind: history.OpStatus})
	if err != nil || resp.Revision <= 1 {
		return
	}
	do(ctx, history.Request{Kind: history.OpCompact, Revision: resp.Revision})
}

// gofail sends one request to a gofail endpoint: PUT arms name with term,
// DELETE disarms it (a failpoint already disarmed is no error).
func gofail(ctx context.Context, method, addr, name, term string) error {
	_, err := gofailRequest(ctx, method, addr, name, term)
	if err != nil && method == http.MethodDelete && strings.Contains(err.Error(), "disabled") {
		return nil
	}
	return err
}

// gofailCount says how often an armed failpoint has fired.
func gofailCount(ctx context.Context, addr, name string) (int, error) {
	body, err := gofailRequest(ctx, http.MethodGet, addr, name+"/count", "")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(body))
}

func gofailRequest(ctx context.Context, method, addr, path, body string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+"/"+path, strings.NewReader(body))
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("gofail %s /%s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(b)))
	}
	return string(b), nil
}

// NeedsFailpoints reports whether any step needs a failpoint build.
func (s Schedule) NeedsFailpoints() bool {
	for _, st := range s.Steps {
		if inj, ok := Lookup(st.Fault); ok && (inj.Needs().Failpoints || inj.Needs().Failpoint != "") {
			return true
		}
	}
	return false
}

func init() {
	for _, p := range crashPoints {
		register(failpointFault{point: p})
	}
	for _, name := range sleepPoints {
		register(failpointFault{point: crashPointNamed(name), sleep: true})
	}
	register(failpointRandom{})
}
