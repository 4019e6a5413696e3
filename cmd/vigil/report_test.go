package main

import (
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/reports"
)

// report.html of a passing run with faults and of a failing sabotage run:
// self-contained (nothing to fetch), the faults on the timeline, the
// failing run's finding placed in it; headless Chromium renders both
// (with -update the screenshots become docs/images/report-pass.png and
// docs/images/report-fail.png, which the README shows). vigil report DIR
// writes the page again.
func TestReportPage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real etcd clusters")
	}
	dir := t.TempDir()
	pages := map[string]string{}
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"pass", []string{"--duration", "8s", "--faults", "kill-leader,pause-follower", "--fault-interval", "3s"}, 0},
		{"fail", []string{"--duration", "10s", "--sabotage", "drop-event", "--faults", "kill-leader", "--fault-interval", "4s"}, 1},
	} {
		out := filepath.Join(dir, c.name)
		args := append([]string{"run", "--members", "3", "--seed", "5", "--out", out}, c.args...)
		res := vigil(t, 5*time.Minute, args...)
		if res.code != c.code {
			t.Fatalf("%s: exit %d, want %d\n%s%s", c.name, res.code, c.code, res.stdout, res.stderr)
		}
		b, err := os.ReadFile(filepath.Join(out, reports.PageFile))
		if err != nil {
			t.Fatal(err)
		}
		page := string(b)
		pages[c.name] = out
		// Nothing is fetched: no script, stylesheet, image or font from
		// anywhere (the SVG namespace is a name, not a fetch).
		for _, re := range []string{`<script`, `<link`, `<img`, `src=`, `url\(`, `@import`, `href="https?://`} {
			if regexp.MustCompile(re).MatchString(page) {
				t.Errorf("%s: report.html has %s: it must not fetch anything", c.name, re)
			}
		}
		for _, want := range []string{"kill-leader", "call latency", "throughput", "watch delivery lag", "Reproduce it", "--schedule=", "--seed=5"} {
			if !strings.Contains(page, want) {
				t.Errorf("%s: report.html lacks %q", c.name, want)
			}
		}
		if c.name == "fail" && (!strings.Contains(page, "finding 1") || !strings.Contains(page, "watch/reliable")) {
			t.Errorf("the failing run's report does not place its finding on the timeline")
		}
	}
	// vigil report writes it again, the same.
	before, _ := os.ReadFile(filepath.Join(pages["fail"], reports.PageFile))
	os.Remove(filepath.Join(pages["fail"], reports.PageFile))
	if res := vigil(t, time.Minute, "report", pages["fail"]); res.code != 0 {
		t.Fatalf("vigil report: exit %d\n%s", res.code, res.stderr)
	}
	after, _ := os.ReadFile(filepath.Join(pages["fail"], reports.PageFile))
	if string(before) != string(after) {
		t.Error("vigil report wrote another page than the run did")
	}

	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is missing: apt-get install chromium")
		}
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	for name, out := range pages {
		shot := filepath.Join(dir, name+".png")
		cmd := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
			"--window-size=1100,4000", "--screenshot="+shot, "file://"+filepath.Join(out, reports.PageFile))
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("chromium: %v\n%s", err, b)
		}
		f, err := os.Open(shot)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: the screenshot is not a PNG: %v", name, err)
		}
		// The fault bands' orange must be on the rendered page.
		if !hasColor(img, func(r, g, b uint32) bool { return r > 0xf000 && g > 0xd000 && g < 0xf000 && b < 0xe000 && b > 0xb000 }) {
			t.Errorf("%s: no shaded fault band in the screenshot", name)
		}
		if *update {
			dst := filepath.Join("..", "..", "docs", "images", "report-"+name+".png")
			os.MkdirAll(filepath.Dir(dst), 0o755)
			b, _ := os.ReadFile(shot)
			if err := os.WriteFile(dst, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// hasColor reports whether some pixel of img satisfies is (16-bit channels).
func hasColor(img image.Image, is func(r, g, b uint32) bool) bool {
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 2 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			if is(r, g, b) {
				return true
			}
		}
	}
	return false
}
