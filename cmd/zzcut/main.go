package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/vigil-suite/vigil/checkers"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

func main() {
	want, _ := strconv.Atoi(os.Args[2])
	_, _ = time.ParseDuration(os.Args[3])

	history.LoadSegments(os.Args[1], func(h *history.History) error {
		if want >= 0 && h.Meta.Segment.Index != want {
			return nil
		}
		for t := h.Meta.Segment.Start; t <= h.Meta.Segment.End; t += 500 * time.Millisecond {
			c := h.CutAt(t)
			for _, ch := range checkers.ForHistory(c) {
				if !ch.Safety() {
					continue
				}
				r := check.Run(ch, c, check.DefaultConfig())
				if r.Verdict == check.Fail {
					fmt.Println("cut", t, ch.Name, r.Reason)
					for _, v := range r.Violations {
						fmt.Printf("  %s\n  want %s\n  got %s\n  ops %v\n", v.Message, v.Want, v.Got, v.Operations)
					}
				}
			}
		}
		r := check.Run(checkers.ForHistory(h)[0], h, check.DefaultConfig())
		fmt.Println("whole segment:", r.Name, r.Verdict, r.Reason, len(r.Violations))
		return nil
	})
}
