package main

import (
	"context"
	"fmt"
	"time"

	"github.com/vigil-suite/vigil/fixtures/containers"
)

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
