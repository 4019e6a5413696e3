package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/vigil-suite/vigil/fixtures/binaries"
)

// secret is planted in the --command of the tests below; no file vigil
// writes may hold it.
const secret = "SECRET"

// plantedCommand starts one etcd member through /bin/sh (a bare sh would
// do as well: it is found on PATH), with a database DSN and its password
// as the script's $1, the way a server that needs a database is handed
// one. etcd never sees it; vigil's record of the command line must not
// keep it either.
func plantedCommand(bin string) string {
	return "/bin/sh -c 'exec " + bin + " --data-dir {data_dir} --listen-client-urls http://127.0.0.1:{client_port}" +
		" --advertise-client-urls http://127.0.0.1:{client_port} --listen-peer-urls http://127.0.0.1:0' etcd postgres://admin:" + secret + "@db.example:5432/app"
}

// assertNoSecret fails the test if the secret is in any file under dir
// (compressed ones read decompressed) or in vigil's output. A server's
// own log (members/<name>/log) is the server's: only the lines vigil
// writes in it (how it started the process) are held to it.
func assertNoSecret(t *testing.T, dir string, res result) {
	t.Helper()
	if strings.Contains(res.stdout, secret) || strings.Contains(res.stderr, secret) {
		t.Errorf("vigil printed the secret:\n%s\n%s", grepSecret(res.stdout), grepSecret(res.stderr))
	}
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := readDecompressed(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		files++
		if d.Name() == "log" && filepath.Base(filepath.Dir(filepath.Dir(path))) == "members" {
			b = vigilLines(b)
		}
		if bytes.Contains(b, []byte(secret)) {
			rel, _ := filepath.Rel(dir, path)
			t.Errorf("%s holds the secret:\n%s", rel, grepSecret(string(b)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 3 {
		t.Fatalf("only %d files under %s", files, dir)
	}
}

// readDecompressed reads a file, decompressing a .zst or .gz one.
func readDecompressed(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	switch {
	case strings.HasSuffix(path, ".zst"):
		z, err := zstd.NewReader(f)
		if err != nil {
			return nil, err
		}
		defer z.Close()
		r = z
	case strings.HasSuffix(path, ".gz"):
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		r = z
	}
	return io.ReadAll(r)
}

// vigilLines are the lines vigil wrote into a server's log.
func vigilLines(log []byte) []byte {
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "--- vigil:") {
			out.WriteString(sc.Text() + "\n")
		}
	}
	return out.Bytes()
}

func grepSecret(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, secret) {
			if len(l) > 300 {
				i := max(strings.Index(l, secret)-150, 0)
				l = "…" + l[i:min(i+300, len(l))] + "…"
			}
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// A run of a server started from a shell line with a DSN in it: the
// server starts (the line is read as sh reads it), the run passes, and
// the DSN's password is in no file of the run directory — the history,
// result.json, junit.xml, report.html and its repro, the schedule — nor
// in what vigil printed; the record shows it redacted. So for a server
// that cannot start (sh, found on PATH, exits).
func TestRunCommandSecretStaysOut(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real etcd")
	}
	bin, err := binaries.Etcd(context.Background(), binaries.Options{Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	res := vigil(t, 4*time.Minute, "run", "--fixture", "command", "--command", plantedCommand(bin),
		"--duration", "8s", "--faults", "kill-leader", "--fault-interval", "2s", "--keep-data", "--seed", "5", "--out", out)
	if res.code != exitPass {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	r := readResult(t, filepath.Join(out, "result.json"))
	if !strings.Contains(r.Flags["command"], "postgres://admin:REDACTED@db.example:5432/app") || !strings.HasPrefix(r.Flags["command"], "/bin/sh -c 'exec ") {
		t.Errorf("result.json records --command as %q", r.Flags["command"])
	}
	log, _ := os.ReadFile(filepath.Join(out, "members", "server-0", "log"))
	if n := strings.Count(string(log), "--- vigil:"); n < 2 || !strings.Contains(string(log), "etcd") {
		t.Errorf("the server's log shows %d starts (want the first and the restart after kill-leader):\n%s", n, vigilLines(log))
	}
	assertNoSecret(t, out, res)
	assertNothingLeft(t, out)

	// A server that exits at once: the setup error's result.json keeps
	// the flags and the reason, both without the secret.
	out = filepath.Join(t.TempDir(), "dead")
	res = vigil(t, 2*time.Minute, "run", "--fixture", "command", "--command",
		"sh -c 'echo no database at $1 >&2; exit 1' srv postgres://admin:"+secret+"@db.example/app {client_port}", "--duration", "5s", "--out", out)
	if r := readResult(t, filepath.Join(out, "result.json")); res.code != exitSetup || !r.SetupFailed || !strings.Contains(r.Flags["command"], "REDACTED") {
		t.Fatalf("exit %d, setup failed %v, command %q\n%s", res.code, r.SetupFailed, r.Flags["command"], res.stderr)
	}
	assertNoSecret(t, out, res)
}
