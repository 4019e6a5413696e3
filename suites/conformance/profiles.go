package conformance

import (
	"maps"
	"slices"
	"strings"

	"github.com/vigil-suite/vigil/checkers/check"
)

// kubernetesProbes are the etcd probes in the kubernetes profile, each
// with where Kubernetes' storage layer (k8s.io/apiserver/pkg/storage/etcd3
// and etcd's client/v3/kubernetes) relies on the behaviour it pins down;
// docs/profiles.md says the same in full. Every other etcd probe is in the
// etcd profile only: a new probe joins this table only with its reason.
var kubernetesProbes = map[string]string{
	// Reads: get, paginated list at a revision, count, keys only.
	"kv/range-header-revision":                "a get's or list's header revision becomes the resourceVersion of what it returns",
	"kv/range-old-revision-header":            "later pages of a list are read at the first page's revision; the header names the store's",
	"kv/range-old-revision-value":             "a list's later pages, and an Exact read, return the state at the revision asked for",
	"kv/range-old-revision-before-create":     "a page read at a revision must not show keys created after it",
	"kv/range-missing-key":                    "a get of a missing key is NotFound: no key-value, count 0",
	"kv/range-limit-more-count":               "a list page's limit, and count, give `continue` and remainingItemCount",
	"kv/range-limit-equal-count":              "a page that holds the last key must not announce more",
	"kv/range-count-only":                     "object counts (the storage's Count) are count-only ranges of a prefix",
	"kv/range-keys-only":                      "resource size estimates read keys only",
	"kv/range-prefix":                         "every list is a range over a resource's key prefix",
	"kv/range-end-exclusive":                  "a continue page ranges from the last key + \\x00 to the prefix end, excluded",
	"kv/future-revision-range":                "a list at a resourceVersion ahead of the store must fail (Kubernetes answers 504 'too large')",
	"kv/value-binary-roundtrip":               "objects are stored as protobuf: arbitrary bytes",
	"kv/version-counts-writes":                "the compaction transaction compares the version of compact_rev_key",
	"revision/old-revision-after-delete":      "a page read at a revision before a delete still returns the deleted key",
	"revision/create-revision-after-recreate": "a re-created object's event is a create (create_revision = mod_revision), an ADDED",
	// Writes: the three transaction forms.
	"revision/create-header":             "a create's response revision becomes the new object's resourceVersion",
	"txn/header-revision":                "an update's response revision becomes the object's new resourceVersion",
	"txn/else-branch":                    "a failed update or delete reads the current object in its else branch",
	"txn/compare-mod-revision-equal":     "updates and deletes compare mod_revision = the resourceVersion read",
	"txn/compare-mod-revision-stale":     "an update from a stale resourceVersion must fail (a 409 Conflict)",
	"txn/compare-missing-key-version":    "the first compaction compares version(compact_rev_key) = 0 on a missing key",
	"txn/compare-version-equal":          "the compaction transaction compares version(compact_rev_key) = the version last seen",
	"compaction/read-below":              "a continue token below the compaction must expire (410 Gone)",
	"compaction/read-at":                 "the compact revision stays readable: the revision of a list taken just before",
	"compaction/read-above":              "reads above the compaction return their revision's state",
	"compaction/keeps-latest":            "compaction keeps every object's current value",
	"compaction/watch-below":             "a watch below the compaction must be canceled with the compact revision (410 Gone, relist)",
	"compaction/watch-at":                "an API server watches from a list's revision + 1, which can be the compact revision",
	"watch/compacted-start-cancel":       "a compacted watch start must be refused, never silently started later",
	"watch/from-now":                     "the watch cache watches from its list's revision + 1",
	"watch/from-past":                    "watches resume from a resourceVersion: every change since, in order",
	"watch/from-future":                  "a watch from a revision a lagging member has not reached yet must wait for it",
	"watch/single-key":                   "a watch of one object (and of compact_rev_key) is a single-key watch",
	"watch/range-end-exclusive":          "a prefix watch is a range [prefix, prefix end)",
	"watch/prev-kv-put":                  "every watch asks prev_kv: the old object decides selector transitions",
	"watch/prev-kv-delete":               "a DELETED event carries the object's last state, from prev_kv",
	"watch/prev-kv-create":               "a create carries no previous value",
	"watch/is-create":                    "ADDED or MODIFIED is decided by the event's is-create",
	"watch/delete-event":                 "a DELETED event's resourceVersion is the deletion's revision",
	"watch/response-header":              "etcd's client resumes a broken watch from the response header's revision",
	"watch/two-on-one-stream":            "etcd's client multiplexes an API server's watches over one stream",
	"watch/cancel-by-id":                 "an API server cancels watches one by one on a shared stream",
	"watch/progress-request":             "consistent reads from the watch cache ask for progress (RequestProgress)",
	"watch/progress-then-no-older-event": "a progress notification moves the watch cache's resourceVersion: no older event may follow",
	"watch/progress-notify-option":       "the watch cache's watches ask for progress notifications",
	"lease/grant":                        "objects with a TTL (events) are put with a granted lease",
}

// ProfilesOf lists the profiles a probe belongs to: every probe is in the
// etcd profile; the Kubernetes API's probes (families kube-*) and the
// etcd probes of kubernetesProbes are in the kubernetes profile too.
func ProfilesOf(name string) []string {
	if strings.HasPrefix(name, "kube-") {
		return check.ForKubernetes
	}
	if _, ok := kubernetesProbes[name]; ok {
		return check.ForKubernetes
	}
	return check.EtcdOnly
}

// KubernetesProbes lists the etcd probes in the kubernetes profile, by
// name.
func KubernetesProbes() []string { return slices.Sorted(maps.Keys(kubernetesProbes)) }

// KubernetesReason says where Kubernetes relies on an etcd probe's
// behaviour ("" for a probe outside the kubernetes profile).
func KubernetesReason(name string) string { return kubernetesProbes[name] }

// ApplyProfile tags each result with its probe's profiles and marks those
// outside profile: they keep their verdict and are reported, but do not
// fail the conform ("" or etcd: nothing is outside).
func ApplyProfile(results []Result, profile string) []Result {
	out := slices.Clone(results)
	for i := range out {
		out[i].Profiles = ProfilesOf(out[i].Name)
		out[i].OutsideProfile = !check.InProfile(out[i].Profiles, profile)
	}
	return out
}
