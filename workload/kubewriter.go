package workload

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets/kube"
)

// kubeWriter is one writer's memory: the last state it saw of each object
// (as a controller's cache would hold it) and the uids of incarnations it
// saw deleted, for stale-uid preconditions.
type kubeWriter struct {
	w       *KubeWorkload
	c       *kube.Recording
	rng     *rand.Rand
	index   int // the writer's number, which picks its field manager
	seq     int
	seen    map[string]*history.Object
	oldUIDs map[string]string
	// generated are the names the server gave the writer's generateName
	// creates, oldest first; batch numbers its delete-collection batches.
	generated []string
	batch     int
}

// writer issues writes at its share of the rate until runCtx ends. Calls
// hang off reqCtx, so the end of the run does not cut the calls in flight
// (that would make their outcome needlessly unknown).
func (w *KubeWorkload) writer(runCtx, reqCtx context.Context, index int, c *kube.Recording, rng *rand.Rand) {
	wr := &kubeWriter{w: w, c: c, rng: rng, index: index, seen: map[string]*history.Object{}, oldUIDs: map[string]string{}}
	interval := time.Duration(float64(time.Second) * float64(w.cfg.Writers+w.cfg.Readers) / w.cfg.Rate)
	next := time.Now()
	for pace(runCtx, &next, interval) {
		wr.step(reqCtx)
	}
}

func (wr *kubeWriter) value() string {
	wr.seq++
	return kubeValue(wr.c.ID(), wr.seq)
}

// step draws one action. The shares keep the conditional update loop the
// most common, as in a controller, and give every other write path
// (kubeverbs.go) enough draws to be sent and answered in a short run.
func (wr *kubeWriter) step(ctx context.Context) {
	name := wr.w.objectName(wr.rng.IntN(wr.w.cfg.Objects))
	switch p := wr.rng.IntN(100); {
	case p < 27:
		wr.occUpdate(ctx, name, nil)
	case p < 33:
		wr.create(ctx, name)
	case p < 35:
		wr.createGenerated(ctx)
	case p < 42:
		wr.delete(ctx, name)
	case p < 46:
		wr.staleUpdate(ctx, name)
	case p < 49:
		wr.staleUIDDelete(ctx, name)
	case p < 55:
		// Update from what this writer last saw, without reading first
		// (a controller acting on its cache); a 409 sends it to read.
		wr.occUpdate(ctx, name, wr.seen[name])
	case p < 59:
		wr.unconditionalUpdate(ctx, name)
	case p < 69:
		wr.patch(ctx, name)
	case p < 74:
		wr.apply(ctx, name)
	case p < 78:
		wr.finalizerCycle(ctx)
	case p < 81:
		wr.deleteCollection(ctx)
	case p < 87:
		wr.dryRun(ctx, name)
	case p < 94:
		wr.statusWrite(ctx, name)
	default:
		wr.fieldRead(ctx, name)
	}
}

// get reads one object consistently; nil when it does not exist.
func (wr *kubeWriter) get(ctx context.Context, name string) (*history.Object, error) {
	resp, err := wr.w.do(ctx, wr.c, history.KubeRequest{Verb: history.KubeGet, Name: name})
	if err != nil {
		if st := kube.StatusOf(err); st != nil && st.Code == 404 {
			wr.forget(name)
			return nil, nil
		}
		return nil, err
	}
	wr.learn(resp.Object)
	return resp.Object, nil
}

func (wr *kubeWriter) learn(o *history.Object) {
	if o == nil {
		return
	}
	if prev := wr.seen[o.Name]; prev != nil && prev.UID != o.UID && prev.UID != "" {
		wr.oldUIDs[o.Name] = prev.UID
	}
	cp := *o
	wr.seen[o.Name] = &cp
}

func (wr *kubeWriter) forget(name string) {
	if prev := wr.seen[name]; prev != nil && prev.UID != "" {
		wr.oldUIDs[name] = prev.UID
	}
	delete(wr.seen, name)
}

// labels keeps the object's group label, or flips it a quarter of the
// time, so objects move in and out of the selecting watchers' view.
func (wr *kubeWriter) labels(cur *history.Object) map[string]string {
	groups := [2]string{"a", "b"}
	if cur == nil {
		return map[string]string{kubeGroupLabel: groups[wr.rng.IntN(2)]}
	}
	g := cur.Labels[kubeGroupLabel]
	if wr.rng.IntN(4) == 0 {
		if g == "a" {
			g = "b"
		} else {
			g = "a"
		}
	}
	return map[string]string{kubeGroupLabel: g}
}

func (wr *kubeWriter) create(ctx context.Context, name string) {
	obj := &history.Object{Name: name, Value: wr.value(), Labels: wr.labels(nil)}
	resp, err := wr.w.do(ctx, wr.c, history.KubeRequest{Verb: history.KubeCreate, Object: obj})
	if err == nil {
		wr.learn(resp.Object)
	}
}

// update sends cur's next version with cur's RV as the precondition (and
// its uid when withUID).
func (wr *kubeWriter) update(ctx context.Context, cur *history.Object, withUID bool) error {
	obj := &history.Object{Name: cur.Name, ResourceVersion: cur.ResourceVersion, Value: wr.value(), Labels: wr.labels(cur)}
	if withUID {
		obj.UID = cur.UID
	}
	resp, err := wr.w.do(ctx, wr.c, history.KubeRequest{Verb: history.KubeUpdate, Name: cur.Name, Object: obj})
	if err == nil {
		wr.learn(resp.Object)
	}
	return err
}

// occUpdate is the optimistic-concurrency loop: read (unless from is
// given), update with the RV read, and on 409 read again, a few times.
func (wr *kubeWriter) occUpdate(ctx context.Context, name string, from *history.Object) {
	cur := from
	for attempt := 0; attempt < 4; attempt++ {
		if cur == nil {
			var err error
			if cur, err = wr.get(ctx, name); err != nil {
				return
			}
			if cur == nil {
				wr.create(ctx, name)
				return
			}
		}
		err := wr.update(ctx, cur, wr.rng.IntN(5) == 0)
		st := kube.StatusOf(err)
		if err == nil || st == nil || st.Code != 409 {
			if st != nil && st.Code == 404 {
				wr.forget(name)
			}
			return
		}
		cur = nil // conflict: somebody wrote in between; read again
	}
}

// delete reads the object, then deletes it with its RV as precondition
// (and its uid, sometimes).
func (wr *kubeWriter) delete(ctx context.Context, name string) {
	cur, err := wr.get(ctx, name)
	if err != nil || cur == nil {
		return
	}
	req := history.KubeRequest{Verb: history.KubeDelete, Name: name, PreconditionRV: cur.ResourceVersion}
	if wr.rng.IntN(3) == 0 {
		req.PreconditionUID = cur.UID
	}
	if wr.rng.IntN(6) == 0 {
		req.PreconditionRV = "" // unconditional, now and then
	}
	if _, err := wr.w.do(ctx, wr.c, req); err == nil {
		wr.forget(name)
	}
}

// staleUpdate updates an object, then updates it again with the RV it had
// before: the server must answer 409.
func (wr *kubeWriter) staleUpdate(ctx context.Context, name string) {
	cur, err := wr.get(ctx, name)
	if err != nil || cur == nil {
		return
	}
	if wr.update(ctx, cur, false) != nil {
		return
	}
	wr.update(ctx, cur, false)
}

// staleUIDDelete deletes an object with the uid of an earlier incarnation
// of its name as precondition: the server must answer 409 (or 404).
func (wr *kubeWriter) staleUIDDelete(ctx context.Context, name string) {
	old, ok := wr.oldUIDs[name]
	if !ok {
		wr.get(ctx, name)
		return
	}
	wr.w.do(ctx, wr.c, history.KubeRequest{Verb: history.KubeDelete, Name: name, PreconditionUID: old})
}

// races, now and then, reads one object and sends an update of it from
// every racer at once, all with the RV read: of each race at most one may
// succeed (exactly one when nothing else wrote the object in between).
func (w *KubeWorkload) races(runCtx, reqCtx context.Context, racers []*kube.Recording, rng *rand.Rand) {
	seq := 0
	for sleepCtx(runCtx, jitter(rng, 700*time.Millisecond)) {
		name := w.objectName(rng.IntN(w.cfg.Objects))
		resp, err := w.do(reqCtx, racers[0], history.KubeRequest{Verb: history.KubeGet, Name: name})
		if err != nil {
			if st := kube.StatusOf(err); st != nil && st.Code == 404 {
				seq++
				w.do(reqCtx, racers[0], history.KubeRequest{Verb: history.KubeCreate,
					Object: &history.Object{Name: name, Value: kubeValue(racers[0].ID(), seq), Labels: map[string]string{kubeGroupLabel: "a"}}})
			}
			continue
		}
		cur := resp.Object
		seq++
		var wg sync.WaitGroup
		for _, rc := range racers {
			obj := &history.Object{Name: name, ResourceVersion: cur.ResourceVersion, Value: kubeValue(rc.ID(), seq), Labels: cur.Labels}
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.do(reqCtx, rc, history.KubeRequest{Verb: history.KubeUpdate, Name: name, Object: obj})
			}()
		}
		wg.Wait()
	}
}
