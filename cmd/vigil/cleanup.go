package main

import (
	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/launch"
)

// cmdCleanup removes what killed runs left behind: it goes through the
// registry of runs whose vigil is gone and kills their members. With
// arguments, it cleans those output dirs instead. Docker runs are found
// by their labels; --images also removes vigil's cached Docker images.
func cmdCleanup(fs *flag.FlagSet) action {
	images := fs.Bool("images", false, "also remove the Docker images vigil built (they are rebuilt when needed)")
	return func(dirs []string) (int, error) { return exitCodeOf(launch.Cleanup(dirs, *images)) }
}
