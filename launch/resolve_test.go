package launch

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/history"
)

// resolved resolves the defaults changed by edit, with given naming the
// options set as on a command line.
func resolved(t *testing.T, edit func(*Options), given ...string) (*Options, error) {
	t.Helper()
	o := DefaultOptions()
	o.Out = t.TempDir()
	edit(&o)
	for _, g := range given {
		o.Given[g] = "given"
	}
	return &o, o.Resolve()
}

func TestResolveRefuses(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func(*Options)
		given []string
		want  string
	}{
		{"fixture", func(o *Options) { o.Fixture = "vm" }, nil, "--fixture \"vm\": want process, docker, kine, command or external"},
		{"members", func(o *Options) { o.Members = 4 }, nil, "--members 4: want 1, 3 or 5"},
		{"fault typo", func(o *Options) { o.Faults = "kil-leader" }, nil, "did you mean kill-leader?"},
		{"sabotage typo", func(o *Options) { o.Sabotage = "drop-evnt" }, nil, "did you mean drop-event?"},
		{"sabotage of the other target", func(o *Options) { o.Target = "kube"; o.Sabotage = "drop-event" }, nil, "not a mode of --target kube"},
		{"endpoints with process", func(o *Options) { o.Endpoints = "127.0.0.1:2379" }, []string{"fixture"}, "--endpoints goes with --fixture external"},
		{"link faults on a cluster vigil does not run", func(o *Options) { o.Endpoints = "127.0.0.1:2379"; o.Faults = "isolate-leader" }, nil, "network faults need"},
		{"failpoints on kine", func(o *Options) { o.Fixture = "kine"; o.Faults = "failpoint-random" }, nil, "need the process or docker fixture"},
		{"schedule and faults", func(o *Options) { o.Faults = "kill-leader"; o.ScheduleFile = "s.json" }, nil, "exclude each other"},
		{"tls on docker", func(o *Options) { o.Fixture = "docker"; o.TLS = true }, nil, "--tls and --auth set up"},
		{"peer faults over tls", func(o *Options) { o.TLS = true; o.Faults = "isolate-leader" }, nil, "need --net netns"},
		{"no room for a fault", func(o *Options) { o.Faults = "kill-leader"; o.Workload.Duration = time.Second }, nil, "leaves no room"},
		{"workload", func(o *Options) { o.Workload.Clients = 0 }, nil, "--clients must be at least 1"},
		{"kube endpoints", func(o *Options) { o.Target = "kube"; o.Endpoints = "x:1" }, nil, "--endpoints names etcd members"},
		{"kube apiservers", func(o *Options) { o.Target = "kube"; o.Kube.APIServers = 3 }, nil, "--apiservers 3: want 1 or 2"},
		{"kube resource", func(o *Options) { o.Target = "kube"; o.Kube.ResourceName = "pods" }, nil, "--resource \"pods\""},
		{"kube server without CA", func(o *Options) { o.Target = "kube"; o.Kube.Server.URL = "https://127.0.0.1:6443" }, nil, "needs --ca-file"},
		{"docker proxy fault", func(o *Options) { o.Target = "kube"; o.Fixture = "docker"; o.Faults = "latency" }, nil, "--fixture docker"},
		{"history format", func(o *Options) { o.HistoryFormat = "json" }, nil, "--history-format \"json\": want zst"},
		{"compress and plain", func(o *Options) { o.HistoryFormat = "jsonl"; o.Compress = true }, []string{"history-format"}, "does not go with --history-format jsonl"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := resolved(t, c.edit, c.given...)
			var ue *UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Resolve = %v, want a usage error with %q", err, c.want)
			}
		})
	}
}

func TestResolveFillsIn(t *testing.T) {
	o, err := resolved(t, func(o *Options) { o.Endpoints = "127.0.0.1:2379" })
	if err != nil || o.Fixture != "external" || o.Seed == 0 || o.Given["seed"] == "" {
		t.Fatalf("--endpoints: fixture %q, seed %d (%q), err %v; want external and a recorded seed", o.Fixture, o.Seed, o.Given["seed"], err)
	}

	o, err = resolved(t, func(o *Options) {
		o.Seed, o.Faults, o.Workload.Duration = 7, "failpoint-random,kill-leader", time.Minute
	})
	if err != nil || !o.Failpoints || len(o.Schedule().Steps) == 0 {
		t.Fatalf("failpoint faults: failpoints %v, %d steps, err %v; want failpoints on and a schedule", o.Failpoints, len(o.Schedule().Steps), err)
	}
	again, _ := resolved(t, func(o *Options) {
		o.Seed, o.Faults, o.Workload.Duration = 7, "failpoint-random,kill-leader", time.Minute
	})
	if len(again.Schedule().Steps) != len(o.Schedule().Steps) || again.Schedule().Steps[0] != o.Schedule().Steps[0] {
		t.Fatal("the same seed planned another schedule")
	}

	// The Kubernetes workload takes only the workload options given.
	o, err = resolved(t, func(o *Options) { o.Target = "kube"; o.Workload.Clients, o.Workload.Watchers = 5, 6 }, "clients", "watchers")
	if err != nil || o.Kube.workload.Writers != 5 || o.Kube.workload.Informers != 4 || o.Kube.workload.Streamers != 2 ||
		o.StartTimeout != 3*time.Minute {
		t.Fatalf("kube workload %+v, start timeout %s, err %v", o.Kube.workload, o.StartTimeout, err)
	}

	// A sabotage mode that needs compactions gets them.
	o, err = resolved(t, func(o *Options) { o.Sabotage = "compaction-silent"; o.Workload.Duration = time.Minute })
	if err != nil || o.Given["compact-every"] == "" {
		t.Fatalf("compaction-silent: compact every %s, not recorded as given (err %v)", o.Workload.CompactEvery, err)
	}

	// A mode that needs several members refuses one.
	if _, err = resolved(t, func(o *Options) { o.Sabotage, o.Members = "diverge-member", 1 }); err == nil ||
		!strings.Contains(err.Error(), "at least 2 members") {
		t.Fatalf("diverge-member on one member: err %v", err)
	}
	if _, err = resolved(t, func(o *Options) { o.Sabotage = "diverge-member"; o.Endpoints = "127.0.0.1:1,127.0.0.1:2" }); err != nil {
		t.Fatalf("diverge-member on two endpoints: %v", err)
	}
}

// The history is zstd unless told: jsonl to grep, and --compress (gz) as
// before.
func TestResolveHistoryFormat(t *testing.T) {
	for _, c := range []struct {
		edit func(*Options)
		want string
	}{
		{func(o *Options) {}, "history.jsonl.zst"},
		{func(o *Options) { o.HistoryFormat = "" }, "history.jsonl.zst"},
		{func(o *Options) { o.HistoryFormat = "jsonl" }, "history.jsonl"},
		{func(o *Options) { o.Compress = true }, "history.jsonl.gz"},
	} {
		o, err := resolved(t, c.edit)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.common(nil).HistoryFormat; history.FileFor(got) != c.want {
			t.Errorf("history file %s, want %s", history.FileFor(got), c.want)
		}
	}
}

// A run longer than 2 minutes is cut into 30 s segments, a Kubernetes run
// as an etcd one; --segment is honoured for either, and refused below 10 s.
func TestResolveSegment(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func(*Options)
		given []string
		want  time.Duration
	}{
		{"etcd, 30 s", func(o *Options) {}, nil, 0},
		{"etcd, 3 m", func(o *Options) { o.Workload.Duration = 3 * time.Minute }, nil, DefaultSegment},
		{"kube, 30 s", func(o *Options) { o.Target = "kube" }, nil, 0},
		{"kube, 1 h", func(o *Options) { o.Target = "kube"; o.Workload.Duration = time.Hour }, nil, DefaultSegment},
		{"kube, --segment 15s", func(o *Options) { o.Target = "kube"; o.Segment = 15 * time.Second }, []string{"segment"}, 15 * time.Second},
		{"kube, 1 h, --segment 0", func(o *Options) { o.Target = "kube"; o.Workload.Duration = time.Hour; o.Segment = 0 }, []string{"segment"}, 0},
	} {
		o, err := resolved(t, c.edit, c.given...)
		if err != nil || o.Segment != c.want {
			t.Errorf("%s: segment %v, %v; want %v", c.name, o.Segment, err, c.want)
		}
	}
	_, err := resolved(t, func(o *Options) { o.Target = "kube"; o.Segment = 5 * time.Second }, "segment")
	if err == nil || !strings.Contains(err.Error(), "at least 10s") {
		t.Errorf("--segment 5s = %v, want a usage error", err)
	}
}
