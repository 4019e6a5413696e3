package main

import (
	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/launch"
	"github.com/vigil-suite/vigil/suites/bugs"
)

// cmdBugsRun is `vigil bugs run [NUMBER...]`.
func cmdBugsRun(fs *flag.FlagSet) action {
	attempts := fs.Int("attempts", 0, "attempts per release (0: each recipe's own budget)")
	which := fs.String("version", bugs.Both, "which releases: affected, fixed or both")
	out := fs.String("out", "", "output dir (default runs/bugs-<timestamp>)")
	seed := fs.Int64("seed", 1, "seed of the first attempt; attempt n uses seed+n-1")
	return func(pos []string) (int, error) {
		ctx, stop := stopContext()
		defer stop()
		return launch.Bugs(ctx, pos, launch.BugsOptions{Attempts: *attempts, Which: *which, Out: *out, Seed: *seed, Vigil: version})
	}
}
