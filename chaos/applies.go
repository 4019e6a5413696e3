package chaos

import (
	"fmt"
	"slices"

	"github.com/vigil-suite/vigil/fixtures/binaries"
)

// FailpointBuild is what this machine holds of the etcd failpoint build
// that the failpoint faults would run against. The failpoint faults
// depend on the build (each needs its failpoint in it), so whether they
// can run here is read from the build's failpoint list.
type FailpointBuild struct {
	Names   []string // the build's failpoints
	Missing string   // why there is no usable build, as AppliesHere says it; "": there is one
	Of      string   // what the build is, for AppliesHere: "etcd v3.6.16" or a binary's path
}

// FindFailpointBuild looks up the failpoint build of etcd version in
// vigil's binary cache, or binary, a failpoint build of one's own (its
// failpoint list beside it), when given. It is vigil faults' view of the
// failpoint faults: a build that is missing or lists no failpoints is no
// error but a Missing that says what to do. The error is the cache's:
// version is no etcd version vigil builds, or there is no cache dir.
func FindFailpointBuild(version, binary string) (FailpointBuild, error) {
	if binary != "" {
		// A list that is missing or empty makes the build unusable alike.
		if names, _ := binaries.Failpoints(binary); len(names) > 0 {
			return FailpointBuild{Names: names, Of: binary}, nil
		}
		return FailpointBuild{Missing: "no: " + binary + " has no " + binaries.FailpointsFile + " listing failpoints beside it"}, nil
	}
	path, ok, err := binaries.Cached(binaries.Options{Version: version, Failpoints: true})
	if err != nil {
		return FailpointBuild{}, err
	}
	if !ok {
		return FailpointBuild{Missing: fmt.Sprintf("no: needs `vigil build etcd %s --failpoints` first", version)}, nil
	}
	// An unreadable list (binaries.Failpoints returns no names with its
	// error) is no better than an empty one: the build must be redone.
	if names, _ := binaries.Failpoints(path); len(names) > 0 {
		return FailpointBuild{Names: names, Of: "etcd " + version}, nil
	}
	return FailpointBuild{Missing: fmt.Sprintf("no: the build of etcd %s lists no failpoints; rebuild it", version)}, nil
}

// AppliesHere says whether an injector with needs n can run on this
// machine with the process fixture, and with what ("yes, with
// --failpoints"), or why not: vigil faults' HERE column. Every injector
// but those of the API servers, Docker and failpoints acts on local
// processes, through the client or through vigil's proxies, which the
// process fixture always offers.
func (b FailpointBuild) AppliesHere(n Needs) string {
	switch {
	case n.APIServers:
		return "yes, with --target kube"
	case n.Docker:
		return "yes, with --fixture docker"
	case !n.Failpoints && n.Failpoint == "":
		return "yes"
	case b.Missing != "":
		return b.Missing
	case n.Failpoint != "" && !slices.Contains(b.Names, n.Failpoint):
		return fmt.Sprintf("no: %s has no failpoint %s", b.Of, n.Failpoint)
	}
	return "yes, with --failpoints"
}

// AppliesToKine says whether inj applies to --fixture kine, one kine
// process over SQLite or a database server vigil runs, and why not:
// vigil faults' KINE column. Kine has no failpoints, peers or members to
// change, and refuses Defragment.
func AppliesToKine(inj Injector) string {
	n := inj.Needs()
	switch {
	case n.Failpoints || n.Failpoint != "":
		return "no: etcd builds only"
	case n.Members > 1 || n.Membership:
		return "no: kine is one process"
	case n.Peers:
		return "no: kine has no peers"
	case n.Docker || n.APIServers:
		return "no"
	case n.Database:
		return "yes, with --kine-backend postgres|mysql"
	case n.Defragment:
		return "no: kine refuses Defragment"
	}
	return "yes"
}
