package launch

import (
	"context"
	"fmt"
	"time"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/fixtures/containers"
	"github.com/vigil-suite/vigil/fixtures/runs"
)

// Cleanup removes what killed runs left behind and says what it removed:
// the processes of the runs in dirs (by default every registered run
// whose vigil is gone), the namespaces and rules of --net netns runs, and
// the containers and networks of docker runs, found by their labels; with
// images also vigil's cached Docker images.
func Cleanup(dirs []string, images bool) error {
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
		for _, k := range killed {
			fmt.Printf("killed %s of the run in %s\n", k, d)
		}
		total += len(killed)
		if err != nil {
			return err
		}
	}
	for _, e := range entries {
		e.Remove()
	}
	for _, r := range chaos.CleanupNetns(false) {
		fmt.Printf("removed %s\n", r)
		total++
	}
	n, err := cleanupDocker(images)
	total += n
	if err != nil {
		return err
	}
	fmt.Printf("cleanup: %d leftover(s) removed, %d interrupted run(s) cleared\n", total, len(entries))
	return nil
}

// cleanupDocker removes the containers and networks of docker runs whose
// vigil is gone, and with images vigil's cached images. Without an engine
// there is nothing to remove, unless images were asked for: then it says so.
func cleanupDocker(images bool) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := containers.Connect(ctx, 3*time.Second)
	if err != nil {
		if images {
			return 0, err
		}
		return 0, nil
	}
	defer e.Close()
	removed, err := e.Cleanup(ctx, containers.CleanupOptions{Images: images})
	for _, r := range removed {
		fmt.Printf("removed docker %s\n", r)
	}
	if err != nil {
		return len(removed), fmt.Errorf("docker cleanup: %w", err)
	}
	return len(removed), nil
}
