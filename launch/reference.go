package launch

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/vigil-suite/vigil/fixtures/binaries"
)

// maxReferenceTries bounds the releases of the reported one's line whose
// build is attempted before giving up (a failed fetch from the module
// proxy takes seconds; the cached ones are looked at first, for free).
const maxReferenceTries = 6

// buildEtcd and cachedEtcd are binaries.Etcd and binaries.Cached; tests
// stand in for the module proxy.
var (
	buildEtcd  = binaries.Etcd
	cachedEtcd = binaries.Cached
)

// referenceEtcd builds (or finds) the reference etcd for a server
// reporting version v: v itself when it builds here, else the nearest
// release of the same minor line that does, cached builds first. note
// says what was chosen instead of v, "" when v itself.
func referenceEtcd(ctx context.Context, v string) (bin, used, note string, err error) {
	bin, err = buildEtcd(ctx, binaries.Options{Version: v, Progress: os.Stderr})
	if err == nil || ctx.Err() != nil {
		return bin, v, "", err
	}
	first := err
	cands := sameLine(v)
	for _, c := range cands {
		if p, ok, _ := cachedEtcd(binaries.Options{Version: c}); ok {
			return p, c, nearestNote(v, c, first), nil
		}
	}
	tries := 0
	for _, c := range cands {
		if _, _, _, err := binaries.EtcdSource(c); err != nil {
			continue // not a release the proxy can serve (3.4 outside the table)
		}
		if tries++; tries > maxReferenceTries {
			break
		}
		if p, err := buildEtcd(ctx, binaries.Options{Version: c, Progress: os.Stderr}); err == nil {
			return p, c, nearestNote(v, c, first), nil
		}
		if ctx.Err() != nil {
			return "", "", "", ctx.Err()
		}
	}
	return "", "", "", fmt.Errorf("etcd %s does not build here (%v), nor any release of its line near it", v, first)
}

func nearestNote(v, c string, why error) string {
	return fmt.Sprintf("the server reports etcd %s, which does not build here (%v); the reference is %s, the nearest release of its line that does", v, why, c)
}

// sameLine lists the releases vX.Y.* other than v, nearest first (the
// later of two at the same distance first: it has the line's fixes).
func sameLine(v string) []string {
	var major, minor, patch int
	if _, err := fmt.Sscanf(v, "v%d.%d.%d", &major, &minor, &patch); err != nil || "v"+strconv.Itoa(major)+"."+strconv.Itoa(minor)+"."+strconv.Itoa(patch) != v {
		return nil
	}
	var out []string
	for d := 1; d <= 60; d++ {
		for _, p := range []int{patch + d, patch - d} {
			if p >= 0 {
				out = append(out, fmt.Sprintf("v%d.%d.%d", major, minor, p))
			}
		}
	}
	return out
}
