package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// vigil reaches a real kube-apiserver the way kubectl does: through a
// kubeconfig whose user is an exec credential plugin (a script that
// prints the token the server accepts, and notes that it ran), and
// through $KUBECONFIG listing two files, one with the cluster and users,
// the other with the contexts, with --context choosing one that is not
// current.
func TestKubeconfigLikeKubectl(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	fx := startKubeServer(t)
	s := fx.Servers()
	server := s.Replicas()[0].ClientURL

	dir := t.TempDir()
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ran := filepath.Join(dir, "plugin-ran")
	plugin := write("token-plugin", fmt.Sprintf(`#!/bin/sh
touch %s
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}'
`, ran, s.Token()), 0o755)
	clusters := write("clusters", fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: vigil
  cluster: {server: %s, certificate-authority: %s}
users:
- name: plugin
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: %s, interactiveMode: Never}
- name: nobody
  user: {token: wrong}
contexts:
- name: exec
  context: {cluster: vigil, user: plugin}
current-context: exec
`, server, s.CAFile(), plugin), 0o600)
	contexts := write("contexts", `apiVersion: v1
kind: Config
contexts:
- name: wrong-user
  context: {cluster: vigil, user: nobody}
- name: right-user
  context: {cluster: vigil, user: plugin}
current-context: wrong-user
`, 0o600)

	t.Run("exec plugin", func(t *testing.T) {
		res := vigil(t, 5*time.Minute, "run", "--target", "kube", "--kubeconfig", clusters, "--duration", "5s",
			"--out", filepath.Join(t.TempDir(), "run"))
		if res.code != 0 {
			t.Fatalf("exit %d, want 0\n%s%s", res.code, res.stdout, res.stderr)
		}
		if _, err := os.Stat(ran); err != nil {
			t.Fatalf("the exec plugin did not run: %v", err)
		}
	})
	t.Run("KUBECONFIG with two files and --context", func(t *testing.T) {
		t.Setenv("KUBECONFIG", contexts+string(os.PathListSeparator)+clusters)
		res := vigil(t, 5*time.Minute, "run", "--target", "kube", "--context", "right-user", "--duration", "5s",
			"--out", filepath.Join(t.TempDir(), "run"))
		if res.code != 0 {
			t.Fatalf("exit %d, want 0\n%s%s", res.code, res.stdout, res.stderr)
		}
		// Its current context has a user the server refuses.
		res = vigil(t, 2*time.Minute, "run", "--target", "kube", "--context", "wrong-user", "--duration", "5s",
			"--out", filepath.Join(t.TempDir(), "run"))
		if res.code != 3 || !strings.Contains(res.stderr, "credentials") {
			t.Fatalf("the refused user: exit %d, want 3 naming the credentials\n%s%s", res.code, res.stdout, res.stderr)
		}
	})
}
