package conformance

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/onsi/gomega"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/vigil-suite/vigil/fixtures"
)

// EtcdProbe is one behaviour of the etcd v3 API.
type EtcdProbe struct {
	Info
	Run func(p *P)
}

// EtcdConfig says where the probes go.
type EtcdConfig struct {
	// Endpoints of the server under test (one is enough; the probes talk
	// to the first).
	Endpoints []string
	// Version is the server's version ("v3.5.17"); empty: read from
	// Status, "" when the server does not say (a third-party server).
	Version string
	// Only runs the probes with these names (or name prefixes ending in
	// "/"); empty: all.
	Only []string
	// Timeout bounds one probe; default 10 s.
	Timeout time.Duration
	// DialOptions are added to every probe's client (tests put a
	// corrupting interceptor there).
	DialOptions []grpc.DialOption
	// Security is how to reach a server with TLS or auth on.
	Security fixtures.Security
	// Fresh, when set, replaces the server with a fresh one (an empty
	// store) and returns its endpoints; why says what happened to the old
	// one. The runner calls it when a probe leaves the server unable to
	// serve, and runs the remaining probes there. Set it only for a server
	// vigil started; nil: the remaining probes run against the damaged
	// server, and the report says that their results may depend on it.
	Fresh func(ctx context.Context, why string) ([]string, error)
}

// maxFresh bounds the fresh servers one run starts: a server that breaks
// on every probe is reported as broken, not restarted 122 times.
const maxFresh = 10

// P is what a probe runs with: its own key prefix, a recorded client, and
// gomega assertions that end the probe on the first failure.
type P struct {
	gomega.Gomega
	Ctx context.Context
	// C is a clientv3 client whose every request and answer is recorded.
	C *clientv3.Client
	// Prefix is the probe's own key prefix; K names keys under it.
	Prefix string
	// Base is the store revision when the probe started: the probe's
	// first write gets Base+1 on an idle server.
	Base int64
	// Version is the server's version as "3.5" (major.minor), or "" if it
	// does not report one: where etcd releases differ, a probe branches
	// on it (none needs to yet: 3.4.25 to 3.7.3 answer every probe alike).
	Version string
}

// K is the key name under the probe's prefix.
func (p *P) K(name string) string { return p.Prefix + name }

// Rev is the n-th revision after the probe's base.
func (p *P) Rev(n int64) int64 { return p.Base + n }

// Skip ends the probe as skipped, with the reason.
func (p *P) Skip(reason string) { SkipProbe(reason) }

// Put writes and expects success; it returns the revision.
func (p *P) Put(name, value string, opts ...clientv3.OpOption) int64 {
	resp, err := p.C.Put(p.Ctx, p.K(name), value, opts...)
	p.Expect(err).NotTo(gomega.HaveOccurred(), "put %s", name)
	return resp.Header.Revision
}

// RunEtcdProbes runs the probes one after another and returns one result
// each, in the order given. Probes assume the server is otherwise idle: a
// revision that moves with no write of the probe is reported, not blamed
// on it.
//
// The probes that damage the store on purpose (Damage) run after all the
// others. A probe after which the server stops serving (the next probe
// cannot even read the store revision) is named as the cause in its
// result's Broke; with cfg.Fresh the remaining probes run against a fresh
// server, the interrupted one first.
func RunEtcdProbes(ctx context.Context, cfg EtcdConfig, probes []EtcdProbe) ([]Result, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("conformance: no endpoint to probe")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	version := cfg.Version
	if version == "" {
		version = ServerVersion(ctx, cfg.Endpoints[0], cfg.Security)
	}
	run := fmt.Sprintf("/vigil-conform/%x/", time.Now().UnixNano())
	var selected []EtcdProbe
	for _, pr := range probes {
		if Selected(pr.Name, cfg.Only) {
			selected = append(selected, pr)
		}
	}
	byName := map[string]*Result{}
	var last *Result // the last probe that reached the server
	prevFailed, fresh := false, 0
	for _, pr := range runOrder(selected) {
		res := new(Result)
		*res = runEtcdProbe(ctx, cfg, pr, run, majorMinor(version))
		switch {
		case res.setupFailed && last != nil && !prevFailed && ctx.Err() == nil:
			// The probe before this one was served; this one is not.
			b := &Breakage{Next: pr.Name, Symptom: res.Reason}
			if cfg.Fresh != nil && fresh < maxFresh {
				fresh++
				eps, err := cfg.Fresh(ctx, fmt.Sprintf("probe %s left the server unable to %s", last.Name, b.unable()))
				if err != nil {
					b.FreshError = err.Error()
				} else {
					b.Fresh, cfg.Endpoints = true, eps
					*res = runEtcdProbe(ctx, cfg, pr, run, majorMinor(version))
				}
			}
			last.blame(b)
		case res.setupFailed && last != nil && last.Broke != nil && !last.Broke.Fresh:
			last.Broke.After++
		}
		prevFailed = res.setupFailed
		if !res.setupFailed {
			last = res
		}
		byName[pr.Name] = res
	}
	out := make([]Result, 0, len(selected))
	for _, pr := range selected {
		out = append(out, *byName[pr.Name])
	}
	return out, nil
}

// Breakage is what a probe left behind: a server that stopped serving.
type Breakage struct {
	// Next is the probe that then could not start, and Symptom why
	// ("cannot read the store revision: ...").
	Next    string `json:"next"`
	Symptom string `json:"symptom"`
	// Fresh: the remaining probes ran against a fresh server vigil
	// started (FreshError: starting it failed).
	Fresh      bool   `json:"fresh_server"`
	FreshError string `json:"fresh_server_error,omitempty"`
	// After counts, without a fresh server, the later probes that could
	// not start either.
	After int `json:"later_probes_in_error,omitempty"`
}

// unable is the symptom as what the server could no longer do.
func (b Breakage) unable() string {
	s := strings.TrimPrefix(b.Symptom, "cannot ")
	if strings.HasPrefix(s, "reach the server") {
		return "answer" + strings.TrimPrefix(s, "reach the server")
	}
	return s
}

// String says what happened to the server, and what vigil did about it.
func (b Breakage) String() string {
	return fmt.Sprintf("the server stopped serving after this probe (the next probe, %s, could not start: %s); %s", b.Next, b.Symptom, b.outcome())
}

// outcome says where the remaining probes ran.
func (b Breakage) outcome() string {
	switch {
	case b.Fresh:
		return "the remaining probes ran against a fresh server"
	case b.FreshError != "":
		return "starting a fresh server failed (" + b.FreshError + "), so the remaining probes ran against this one"
	}
	return fmt.Sprintf("vigil did not start this server and cannot replace it: the %d probe(s) after it could not start, and any later result may depend on the damage it did", b.After+1)
}

// blame records that the server stopped serving after this probe. The
// probe fails: whatever it asked, a server must go on serving after it.
func (r *Result) blame(b *Breakage) {
	r.Broke = b
	if r.Verdict == Fail || r.Verdict == Error {
		return
	}
	r.Failure = strings.TrimSpace(fmt.Sprintf("a server must go on serving after any probe; this probe's own expectations: %s %s", r.Verdict, r.Reason))
	r.Verdict, r.Reason = Fail, ""
}

func runEtcdProbe(ctx context.Context, cfg EtcdConfig, pr EtcdProbe, run, version string) (res Result) {
	res = Result{Info: pr.Info}
	begin := time.Now()
	rec := &recorder{}
	prefix := run + strings.ReplaceAll(pr.Name, "/", "_") + "/"
	pctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	cli, err := dial(cfg.Endpoints[0], cfg.Security, rec.dialOptions(cfg.DialOptions...)...)
	if err != nil {
		res.Verdict, res.Reason, res.setupFailed = Error, "cannot reach the server: "+err.Error(), true
		return res
	}
	defer cli.Close()
	// The base revision is read outside the transcript: it is the origin
	// of every relative revision in it.
	plain, err := dial(cfg.Endpoints[0], cfg.Security)
	if err != nil {
		res.Verdict, res.Reason, res.setupFailed = Error, "cannot reach the server: "+err.Error(), true
		return res
	}
	defer plain.Close()
	head, err := plain.Get(pctx, prefix)
	if err != nil {
		res.Verdict, res.Reason, res.setupFailed = Error, "cannot read the store revision: "+err.Error(), true
		return res
	}
	p := &P{Ctx: pctx, C: cli, Prefix: prefix, Base: head.Header.Revision, Version: version}
	others := watchOthers(ctx, plain, prefix, p.Base)
	p.Gomega = gomega.NewGomega(func(msg string, _ ...int) { FailProbe(msg) })

	res.Verdict, res.Reason, res.Failure = RunGuarded(func() { pr.Run(p) })
	defer others.cancel()
	if res.Verdict == Fail {
		// Another writer breaks every revision expectation: say so
		// instead of blaming the behaviour the probe checks.
		if foreign := others.stop(ctx); foreign != "" {
			res.Verdict, res.Reason = Error, fmt.Sprintf("the server is not idle: another client wrote %q while the probe ran; run the probes against a server no other client writes to", foreign)
		}
	}
	if res.Verdict == Fail && rec.unimplemented != "" {
		res.Verdict, res.Reason = Unsupported, "the server does not implement "+rec.unimplemented
	}
	if res.Verdict == Fail && pctx.Err() != nil && ctx.Err() == nil {
		res.Failure = fmt.Sprintf("the probe ran out of its %v: %s", cfg.Timeout, res.Failure)
	}
	raw := rec.snapshot()
	res.repro = &reproData{steps: raw, prefix: prefix, base: p.Base}
	n := newNormalizer(prefix, p.Base)
	for _, s := range raw {
		res.Transcript = append(res.Transcript, n.step(s))
	}
	res.Duration = time.Since(begin)
	return res
}

// dial is a client of the server at endpoint, reached as sec says.
func dial(endpoint string, sec fixtures.Security, opts ...grpc.DialOption) (*clientv3.Client, error) {
	cfg, err := sec.ClientConfig(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 3 * time.Second,
		Logger: zap.NewNop(), DialOptions: opts}, endpoint)
	if err != nil {
		return nil, err
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, sec.Explain(err)
	}
	return cli, nil
}

// ServerVersion asks the server its version; "" if it does not say.
func ServerVersion(ctx context.Context, endpoint string, sec fixtures.Security) string {
	cli, err := dial(endpoint, sec)
	if err != nil {
		return ""
	}
	defer cli.Close()
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	st, err := cli.Status(sctx, endpoint)
	if err != nil {
		return ""
	}
	return st.Version
}

var versionRe = regexp.MustCompile(`^v?(\d+)\.(\d+)`)

// majorMinor reads "3.5" out of "3.5.17" or "v3.5.17"; "" if none.
func majorMinor(v string) string {
	m := versionRe.FindStringSubmatch(v)
	if m == nil {
		return ""
	}
	return m[1] + "." + m[2]
}

func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// HeadRevision reads the server's current store revision.
func HeadRevision(ctx context.Context, endpoint string, sec fixtures.Security) (int64, error) {
	cli, err := dial(endpoint, sec)
	if err != nil {
		return 0, err
	}
	defer cli.Close()
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	r, err := cli.Get(sctx, "/vigil-conform-head")
	if err != nil {
		return 0, err
	}
	return r.Header.Revision, nil
}

// EtcdCompactor returns a function that compacts the etcd under an API
// server (at endpoints) at revision rev, or at its current revision when
// rev is 0: the Compact of kubeprobes.Config for a kube-apiserver vigil
// started, whose resourceVersions are that etcd's revisions. sec reaches
// an etcd served over TLS or with auth.
func EtcdCompactor(endpoints []string, sec fixtures.Security) func(ctx context.Context, rev int64) error {
	return func(ctx context.Context, rev int64) error {
		cfg, err := sec.ClientConfig(clientv3.Config{Endpoints: endpoints, DialTimeout: 3 * time.Second, Logger: zap.NewNop()}, endpoints[0])
		if err != nil {
			return err
		}
		cli, err := clientv3.New(cfg)
		if err != nil {
			return err
		}
		defer cli.Close()
		if rev == 0 {
			head, err := cli.Get(ctx, "/vigil-conform-head")
			if err != nil {
				return err
			}
			rev = head.Header.Revision
		}
		_, err = cli.Compact(ctx, rev, clientv3.WithCompactPhysical())
		if errors.Is(err, rpctypes.ErrCompacted) {
			return nil // compacted past rev already: what the probe needs
		}
		return err
	}
}

// otherWrites watches the whole keyspace while a probe runs, to tell a
// probe's failure from another client's write.
type otherWrites struct {
	cli    *clientv3.Client
	ch     clientv3.WatchChan
	cancel context.CancelFunc
	prefix string
	base   int64
}

func watchOthers(ctx context.Context, cli *clientv3.Client, prefix string, base int64) *otherWrites {
	wctx, cancel := context.WithCancel(ctx)
	return &otherWrites{cli: cli, cancel: cancel, prefix: prefix, base: base,
		ch: cli.Watch(wctx, "\x00", clientv3.WithFromKey(), clientv3.WithRev(base+1))}
}

// stop reads what the watch saw up to the store's current revision (with a
// progress notification as the fence) and returns a key written outside
// the probe's prefix, or "" (also when it cannot tell: a compaction ended
// the watch, or no fence came within 2 s).
func (o *otherWrites) stop(ctx context.Context) string {
	defer o.cancel()
	head, err := o.cli.Get(ctx, o.prefix)
	if err != nil || head.Header.Revision <= o.base {
		return "" // nobody wrote at all (and a watch ahead of the store gets no fence)
	}
	if err := o.cli.RequestProgress(ctx); err != nil {
		return ""
	}
	timeout := time.After(2 * time.Second)
	for {
		select {
		case r, ok := <-o.ch:
			if !ok || r.Canceled {
				return ""
			}
			for _, e := range r.Events {
				if !strings.HasPrefix(string(e.Kv.Key), o.prefix) {
					return string(e.Kv.Key)
				}
			}
			if r.Header.Revision >= head.Header.Revision {
				return ""
			}
			if r.IsProgressNotify() {
				o.cli.RequestProgress(ctx)
			}
		case <-timeout:
			return ""
		}
	}
}
