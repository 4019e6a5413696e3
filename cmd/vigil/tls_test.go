package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/fixtures/binaries"
)

// An etcd that speaks only TLS on its client port and has auth on: vigil
// reaches it with --cacert, --user and --password (or etcdctl's
// environment variables) and the run passes; the wrong CA or the wrong
// password is a setup error (exit 3) that names what to check, and no
// password is written to the run's files.
func TestTLSAndAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real etcd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin, err := binaries.Etcd(ctx, binaries.Options{Version: binaries.DefaultEtcdVersion})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ports, err := fixtures.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	// SelfCert takes host:port and puts the host in the certificate.
	host := []string{fmt.Sprintf("127.0.0.1:%d", ports[0])}
	certs, err := transport.SelfCert(zap.NewNop(), filepath.Join(dir, "certs"), host, 1)
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := transport.SelfCert(zap.NewNop(), filepath.Join(dir, "other-ca"), host, 1)
	if err != nil {
		t.Fatal(err)
	}
	client, peer := fmt.Sprintf("https://127.0.0.1:%d", ports[0]), fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	etcd := exec.Command(bin, "--name", "tls0", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", "tls0="+peer,
		"--cert-file", certs.CertFile, "--key-file", certs.KeyFile)
	etcd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	logf, err := os.Create(filepath.Join(dir, "etcd.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	etcd.Stdout, etcd.Stderr = logf, logf
	if err := etcd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-etcd.Process.Pid, syscall.SIGKILL)
		etcd.Wait()
	})

	// Turn auth on, over TLS.
	tc, err := transport.TLSInfo{TrustedCAFile: certs.CertFile}.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{client}, TLS: tc, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	for i := 0; ; i++ {
		sctx, scancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := cli.Status(sctx, client)
		scancel()
		if err == nil {
			break
		}
		if i == 30 {
			b, _ := os.ReadFile(filepath.Join(dir, "etcd.log"))
			t.Fatalf("the TLS etcd did not come up: %v\n%s", err, b[max(0, len(b)-3000):])
		}
		time.Sleep(time.Second)
	}
	for _, step := range []func() error{
		func() error { _, err := cli.RoleAdd(ctx, "root"); return err },
		func() error { _, err := cli.UserAdd(ctx, "root", "s3cret"); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := cli.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}

	endpoint := strings.TrimPrefix(client, "https://")
	t.Run("right CA and password", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "run")
		res := vigil(t, 5*time.Minute, "run", "--endpoints", endpoint, "--cacert", certs.CertFile, "--user", "root",
			"--password", "s3cret", "--duration", "5s", "--out", out)
		if res.code != 0 {
			t.Fatalf("exit %d, want 0\n%s%s", res.code, res.stdout, res.stderr)
		}
		r := readResult(t, filepath.Join(out, "result.json"))
		if r.Flags["password"] != "(redacted)" {
			t.Errorf("result.json keeps the password: %v", r.Flags)
		}
	})
	t.Run("etcdctl's environment variables", func(t *testing.T) {
		t.Setenv("ETCDCTL_CACERT", certs.CertFile)
		t.Setenv("ETCDCTL_USER", "root:s3cret")
		res := vigil(t, 5*time.Minute, "run", "--endpoints", endpoint, "--duration", "3s", "--out", filepath.Join(t.TempDir(), "run"))
		if res.code != 0 {
			t.Fatalf("exit %d, want 0\n%s%s", res.code, res.stdout, res.stderr)
		}
	})
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"wrong CA", []string{"--cacert", stranger.CertFile, "--user", "root", "--password", "s3cret"}, "check --cacert"},
		{"wrong password", []string{"--cacert", certs.CertFile, "--user", "root", "--password", "nope"}, "check --user and --password"},
		{"no user", []string{"--cacert", certs.CertFile}, "give --user and --password"},
		{"plain http to a TLS port", []string{"--endpoints", "http://" + endpoint}, "speaks TLS: give it as https://"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"run", "--endpoints", endpoint, "--duration", "3s", "--out", filepath.Join(t.TempDir(), "run")}, c.args...)
			res := vigil(t, 2*time.Minute, args...)
			if res.code != 3 || !strings.Contains(res.stderr, c.want) {
				t.Fatalf("exit %d, want 3 and %q\n%s%s", res.code, c.want, res.stdout, res.stderr)
			}
		})
	}
}
