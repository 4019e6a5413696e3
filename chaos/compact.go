package chaos

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/vigil-suite/vigil/history"
)

// compactStorm compacts right behind the head, over and over, while the
// fault lasts: watches that fall behind or resume meet ErrCompacted and
// must say so (watch expiry). Its compactions are recorded as chaos's own
// operations.
type compactStorm struct{}

func (compactStorm) Name() string { return "compact-storm" }
func (compactStorm) Needs() Needs { return Needs{} }
func (compactStorm) Describe() string {
	return "compact to the head revision every 200 ms while it lasts, so lagging and resuming watches meet ErrCompacted"
}

func (compactStorm) Inject(ctx context.Context, env *Env, _ uint32) (Injected, error) {
	if env.Do == nil {
		return Injected{}, fmt.Errorf("compact-storm needs a client")
	}
	stormCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	var mu sync.Mutex
	count := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		var last int64
		for {
			rctx, cancel := context.WithTimeout(stormCtx, 2*time.Second)
			resp, err := env.Do(rctx, history.Request{Kind: history.OpStatus})
			if err == nil && resp.Revision > last {
				if _, err := env.Do(rctx, history.Request{Kind: history.OpCompact, Revision: resp.Revision}); err == nil {
					last = resp.Revision
					mu.Lock()
					count++
					mu.Unlock()
				}
			}
			cancel()
			select {
			case <-stormCtx.Done():
				return
			case <-t.C:
			}
		}
	}()
	in := Injected{Details: map[string]string{}}
	in.Heal = func(context.Context) error {
		stop()
		wg.Wait()
		mu.Lock()
		in.Details["compactions"] = fmt.Sprint(count)
		mu.Unlock()
		return nil
	}
	return in, nil
}

func init() { register(compactStorm{}) }
