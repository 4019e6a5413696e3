package check

import (
	"fmt"
	"slices"
	"strings"
)

// Profiles: what a server is held to. The etcd profile is the whole etcd
// API; the kubernetes profile is the calls and guarantees Kubernetes'
// storage layer (k8s.io/apiserver/pkg/storage/etcd3) depends on, as
// docs/profiles.md lists them. Every check and every probe is in the etcd
// profile; it is in the kubernetes profile only when Kubernetes relies on
// what it tests.
const (
	ProfileEtcd       = "etcd"
	ProfileKubernetes = "kubernetes"
)

// ProfileNames lists the profiles, the default first.
func ProfileNames() []string { return []string{ProfileEtcd, ProfileKubernetes} }

// Profile lists, to tag checks with.
var (
	// EtcdOnly: the guarantee is etcd's, but Kubernetes does not rely on it.
	EtcdOnly = []string{ProfileEtcd}
	// ForKubernetes: Kubernetes relies on it (and etcd promises it).
	ForKubernetes = []string{ProfileEtcd, ProfileKubernetes}
)

// ParseProfile checks a profile's name; "" is the default, etcd. The
// error names the profiles.
func ParseProfile(name string) (string, error) {
	if name == "" {
		return ProfileEtcd, nil
	}
	if !slices.Contains(ProfileNames(), name) {
		return "", fmt.Errorf("--profile %q: want one of %s", name, strings.Join(ProfileNames(), ", "))
	}
	return name, nil
}

// InProfile reports whether something tagged with profiles belongs to
// profile ("" is etcd, which holds everything: an untagged result of an
// older run included).
func InProfile(profiles []string, profile string) bool {
	if profile == "" || profile == ProfileEtcd {
		return true
	}
	return slices.Contains(profiles, profile)
}

// MarkProfile marks the results outside profile: they keep their verdict
// and are reported, but Overall does not count them.
func MarkProfile(results []Result, profile string) []Result {
	out := slices.Clone(results)
	for i := range out {
		out[i].OutsideProfile = !InProfile(out[i].Profiles, profile)
	}
	return out
}
