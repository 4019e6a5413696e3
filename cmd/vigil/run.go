package main

import (
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/launch"
	"github.com/vigil-suite/vigil/workload"
)

// cmdRun is `vigil run`.
func cmdRun(fs *flag.FlagSet) action {
	o := defineRunFlags(fs)
	return func([]string) (int, error) {
		o.Given, o.Vigil = given(fs), version
		if err := o.Resolve(); err != nil {
			return exitSetup, err
		}
		ctx, stop := stopContext()
		defer stop()
		return launch.Run(ctx, o)
	}
}

// defineRunFlags defines vigil run's flags on fs, filling the options it
// returns.
func defineRunFlags(fs *flag.FlagSet) *launch.Options {
	o := launch.DefaultOptions()
	w := &o.Workload
	fs.StringVar(&o.Target, "target", o.Target, "API family of the system under test: etcd or kube")
	fs.StringVar(&o.Fixture, "fixture", o.Fixture, "how the system is run: process (local etcd processes), docker (one container per member, see fixtures/containers), kine (kine over SQLite, PostgreSQL or MySQL), command (your server, from --command) or external (your own cluster, see --endpoints)")
	fs.IntVar(&o.Members, "members", o.Members, "cluster size for the process and docker fixtures: 1, 3 or 5")
	fs.StringVar(&o.EtcdVersion, "etcd-version", o.EtcdVersion, "etcd version to build from the Go module proxy (e.g. v3.5.17, v3.6.16, v3.7.3, v3.4.25)")
	fs.StringVar(&o.EtcdBinary, "etcd-binary", "", "use this etcd binary instead of building one")
	fs.BoolVar(&o.Failpoints, "failpoints", false, "run a gofail build of etcd (vigil build etcd VERSION --failpoints) whose failpoints the failpoint:* faults arm; implied by those faults")
	fs.StringVar(&o.Endpoints, "endpoints", "", "comma-separated client endpoints of a running cluster (implies --fixture external; with --target kube --store endpoints, the store under the API servers)")
	fs.DurationVar(&w.Duration, "duration", w.Duration, "how long the workload runs")
	fs.IntVar(&w.Clients, "clients", w.Clients, "concurrent KV clients")
	fs.Float64Var(&w.Rate, "rate", w.Rate, "total KV requests per second (0: as fast as the clients get answers)")
	fs.StringVar(&w.Shape, "workload", workload.ShapeDefault, "the shape of the load: "+strings.Join(workload.Shapes(), ", ")+" (see docs/workload.md)")
	fs.StringVar(&w.Patterns, "patterns", "", "shares of the placement and timing patterns, from the shape's: none, or NAME=PERCENT,... for "+strings.Join(history.Patterns(), ", ")+" (see docs/workload.md)")
	fs.IntVar(&w.Keys, "keys", w.Keys, "distinct keys the workload writes")
	fs.IntVar(&w.Watchers, "watchers", w.Watchers, "concurrent watchers of the key prefix")
	fs.DurationVar(&w.CompactEvery, "compact-every", w.CompactEvery, "period of compactions (0 disables)")
	fs.DurationVar(&w.FinalTimeout, "watch-bound", w.FinalTimeout, "how long open watches get to deliver the final write")
	fs.DurationVar(&w.CompareEvery, "compare-every", w.CompareEvery, "period of the member comparer's rounds: every member asked HashKV and a serializable read at a revision all have applied, bisected when they differ (kv/member-agreement; 0: only at the end)")
	fs.Int64Var(&o.Seed, "seed", 0, "seed of every random choice (0: pick one and print it)")
	fs.StringVar(&o.Out, "out", "", "output dir (default runs/<timestamp>-<seed>)")
	fs.StringVar(&o.Faults, "faults", "", "comma-separated faults to inject, e.g. kill-leader,pause-follower (see vigil faults)")
	fs.DurationVar(&o.FaultInterval, "fault-interval", o.FaultInterval, "time between the starts of two faults")
	fs.StringVar(&o.Net, "net", o.Net, "how network faults reach the links: proxy (vigil's TCP proxies, no root) or netns (a network namespace per member, iptables; root)")
	fs.StringVar(&o.ScheduleFile, "schedule", "", "replay the fault schedule saved by an earlier run (its schedule.json)")
	fs.StringVar(&o.Sabotage, "sabotage", "", "inject one named semantic bug into what vigil's clients see, to prove the check it names catches it (see vigil sabotage list)")
	fs.IntVar(&o.Settings.SnapshotCount, "snapshot-count", 0, "etcd members' --snapshot-count (0: etcd's default)")
	fs.IntVar(&o.Settings.CompactionBatchLimit, "compaction-batch-limit", 0, "etcd members' compaction batch limit, revisions deleted per batch (0: etcd's default)")
	fs.DurationVar(&o.Settings.WatchProgressNotifyInterval, "watch-progress-notify-interval", 0, "etcd members' period of progress notifications (0: etcd's default, 10m)")
	fs.StringVar(&o.HistoryFormat, "history-format", o.HistoryFormat, "how the history is written as the run goes: zst (history.jsonl.zst, zstd), jsonl (history.jsonl, plain, to grep) or gz (history.jsonl.gz); vigil check reads each")
	fs.BoolVar(&o.Compress, "compress", false, "the same as --history-format gz (before zstd, it gzipped the plain history after the run)")
	fs.BoolVar(&o.KeepData, "keep-data", false, "keep the members' data dirs after a passing run (a failed or interrupted run keeps them always)")
	fs.BoolVar(&o.FailFast, "fail-fast", false, "stop the workload at the first violation the live judge finds (faults heal, the history is kept and judged, the reports written)")
	fs.DurationVar(&o.JudgeEvery, "judge-every", o.JudgeEvery, "period of the live judge, which checks the history's safety guarantees while the run goes on (0: judge only at the end)")
	fs.DurationVar(&o.Segment, "segment", o.Segment, "cut a run longer than 2m (any run, when given) into segments of this length, each judged as soon as it is complete and then dropped from memory (a watch open across a boundary is judged whole where it ends): how hours of chaos fit in the memory of a few segments (0: never)")
	defineHeldTo(fs, &o.Profile, &o.Limitations, "checks")
	fs.BoolVar(&o.Conform, "conform", false, "run the conformance probes (vigil conform) against the cluster first, and stop if any fails")
	fs.DurationVar(&o.StartTimeout, "start-timeout", o.StartTimeout, "how long the cluster gets to become healthy")
	fs.DurationVar(&o.CheckTimeout, "check-timeout", o.CheckTimeout, "budget of the linearizability search; past it the verdict is unknown")
	fs.DurationVar(&o.MaxUnavailable, "max-unavailable", o.MaxUnavailable, "run/availability: how long clients may go unanswered after the faults around an outage healed")
	k := &o.Kube
	fs.StringVar(&k.Version, "kube-version", k.Version, "--target kube: Kubernetes version whose kube-apiserver to build from the Go module proxy")
	fs.StringVar(&k.Binary, "kube-apiserver-binary", "", "--target kube: use this kube-apiserver binary instead of building one")
	fs.IntVar(&k.APIServers, "apiservers", k.APIServers, "--target kube: API server replicas over the etcd cluster: 1 or 2")
	fs.BoolVar(&k.WatchCache, "watch-cache", k.WatchCache, "--target kube: run the API servers with their watch cache (false: every read and watch goes to etcd, the differential baseline)")
	fs.DurationVar(&k.CompactionInterval, "kube-compaction-interval", 0, "--target kube: the API servers' --etcd-compaction-interval (0: their default, 5m; negative: off)")
	fs.StringVar(&k.ResourceName, "resource", k.ResourceName, "--target kube: the collection the workload works on: configmaps, or crd (a custom resource vigil defines, vigilobjects.vigil.dev)")
	fs.StringVar(&k.FeatureGates, "feature-gates", "", "--target kube: the API servers' --feature-gates, e.g. WatchList=false")
	fs.StringVar(&k.Store, "store", k.Store, "--target kube: what the API servers keep their data in: etcd, kine (as k3s runs them; see --kine-backend), command (your etcd-API server, from --command; every fault applies) or endpoints (one you run, from --endpoints; only client-side faults)")
	defineServerFlags(fs, &k.Server, &o.Security, " (implies --fixture external)")
	fs.BoolVar(&o.TLS, "tls", false, "the process fixture's members speak TLS on client and peer links and require client certificates, from a CA made for the run (under <out>/tls)")
	fs.BoolVar(&o.Auth, "auth", false, "the process fixture's cluster has etcd's authentication on: user root, a password made for the run (<out>/tls/etcdctl.env says how to reach the cluster)")
	defineKine(fs, &o.Kine)
	fs.StringVar(&o.Command, "command", "", "--fixture command (or --target kube --store command): the command line of your etcd-API server, with {client_port} where it takes the port to serve on 127.0.0.1 and optionally {data_dir}; read as a shell reads it (quotes, backslashes, $VAR; a bare program name is found on PATH), and written down with its credentials redacted (docs/kine.md)")
	return &o
}
