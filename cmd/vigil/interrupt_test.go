package main

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/internal/longtest"
)

// netTraces lists namespaces, links and host iptables rules that belong to
// the vigil process with this pid (--net netns names everything vg<pid>).
func netTraces(pid int) []string {
	id := fmt.Sprintf("vg%d", pid)
	br := fmt.Sprintf("vgbr%d", pid)
	var found []string
	for _, c := range [][]string{{"ip", "netns", "list"}, {"ip", "-o", "link"}, {"iptables", "-S", "FORWARD"}} {
		out, _ := exec.Command(c[0], c[1:]...).Output()
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, id) || strings.Contains(line, br) {
				found = append(found, line)
			}
		}
	}
	return found
}

// Runs with faults in flight are interrupted at seeded random moments, by
// SIGINT or SIGKILL; after `vigil cleanup` nothing of them is left: no
// etcd process, and with --net netns (as root) no namespace, veth, bridge
// or iptables rule.
func TestInterruptAtRandomMoments(t *testing.T) {
	longtest.Skip(t)
	if testing.Short() {
		t.Skip("runs vigil against real etcd")
	}
	rng := rand.New(rand.NewPCG(2026, 11))
	netns := os.Geteuid() == 0
	for i := 0; i < 4; i++ {
		sig := syscall.SIGINT
		if i%2 == 1 {
			sig = syscall.SIGKILL
		}
		delay := time.Duration(500+rng.IntN(9000)) * time.Millisecond
		t.Run(fmt.Sprintf("%d-%s-after-%s", i, sig, delay), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			faults, net := "kill-follower,isolate-leader,client-cut,pause-leader", "proxy"
			if netns && i >= 2 {
				faults, net = "kill-follower,isolate-leader,client-cut", "netns"
			}
			args := []string{"run", "--duration", "20s", "--out", out, "--seed", fmt.Sprint(i + 1),
				"--faults", faults, "--fault-interval", "2s", "--net", net}
			cmd := exec.Command(vigilBin, args...)
			stderr, _ := cmd.StderrPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Start the clock once the cluster is up.
			sc := bufio.NewScanner(stderr)
			for sc.Scan() && !strings.Contains(sc.Text(), "cluster up") {
			}
			go func() {
				for sc.Scan() {
				}
			}()
			time.Sleep(delay)
			cmd.Process.Signal(sig)
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(90 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("vigil did not exit within 90s of %s", sig)
			}
			res := vigil(t, time.Minute, "cleanup")
			if res.code != 0 {
				t.Fatalf("vigil cleanup: exit %d\n%s%s", res.code, res.stdout, res.stderr)
			}
			deadline := time.Now().Add(10 * time.Second)
			for len(processesUsing(out)) > 0 && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
			}
			assertNothingLeft(t, out)
			if left := netTraces(cmd.Process.Pid); len(left) > 0 {
				t.Fatalf("network leftovers of vigil pid %d:\n%s", cmd.Process.Pid, strings.Join(left, "\n"))
			}
		})
	}
}
