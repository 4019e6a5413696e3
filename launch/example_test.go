package launch_test

import (
	"context"
	"fmt"
	"time"

	"github.com/vigil-suite/vigil/launch"
)

// A 3-member etcd cluster vigil starts, 30 seconds of workload with a
// leader killed and a follower paused, checked; as `vigil run --faults
// kill-leader,pause-follower --fault-interval 8s --duration 30s --seed 42`.
func ExampleRun() {
	o := launch.DefaultOptions()
	o.Faults, o.FaultInterval, o.Seed = "kill-leader,pause-follower", 8*time.Second, 42
	o.Workload.Duration = 30 * time.Second
	if err := o.Resolve(); err != nil {
		fmt.Println(err) // a *launch.UsageError names the option to change
		return
	}
	code, err := launch.Run(context.Background(), &o)
	fmt.Println(code, err) // 0 pass, 1 a violation, 2 unknown, 3 setup error
}
