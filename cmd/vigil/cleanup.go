package main

import (
	"fmt"

	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/fixtures/runs"
)

// cmdCleanup removes what killed runs left behind: it goes through the
// registry of runs whose vigil is gone and kills their members. With
// arguments, it cleans those output dirs instead. Docker runs are found
// by their labels; --images also removes vigil's cached Docker images.
func cmdCleanup(fs *flag.FlagSet) action {
	images := fs.Bool("images", false, "also remove the Docker images vigil built (they are rebuilt when needed)")
	return func(dirs []string) (int, error) { return exitCodeOf(cleanup(dirs, *images)) }
}

// cleanup is vigil cleanup: it has fixtures/runs kill the leftovers of
// each dir, chaos remove --net netns leftovers and cleanupDocker the
// containers, and says what each removed.
func cleanup(dirs []string, images bool) error {
	var entries []runs.Entry
	if len(dirs) == 0 {
		gone, alive, err := runs.Abandoned()
		if err != nil {
			return err
		}
		for _, e := range alive {
			fmt.Printf("run in %s is still going (vigil pid %d); left alone\n", e.Out, e.PID)
		}
		entries = gone
		for _, e := range gone {
			dirs = append(dirs, e.Out)
		}
	}
	total := 0
	for _, d := range dirs {
		killed, err := runs.KillLeftovers(d)
		if err != nil {
			return err
		}
		for _, k := range killed {
			fmt.Printf("killed %s of the run in %s\n", k, d)
		}
		total += len(killed)
	}
	for _, e := range entries {
		e.Remove()
	}
	// Namespaces, bridges and host rules of --net netns runs whose vigil is gone.
	for _, r := range chaos.CleanupNetns(false) {
		fmt.Printf("removed %s\n", r)
		total++
	}
	// Containers and networks of docker runs whose vigil is gone, by label.
	n, err := cleanupDocker(images)
	total += n
	if err != nil {
		return err
	}
	fmt.Printf("cleanup: %d leftover(s) removed, %d interrupted run(s) cleared\n", total, len(entries))
	return nil
}
