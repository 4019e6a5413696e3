package main

import (
	"context"
	"os"
	"slices"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	"github.com/vigil-suite/vigil/fixtures/command"
	"github.com/vigil-suite/vigil/fixtures/kine"
	"github.com/vigil-suite/vigil/history"
)

// kineFlags are the flags of --fixture kine, shared by run and conform.
type kineFlags struct {
	version, binary, backend string
}

func (k *kineFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&k.version, "kine-version", binaries.DefaultKineVersion, "--fixture kine: kine release to build from the Go module proxy")
	fs.StringVar(&k.binary, "kine-binary", "", "--fixture kine: use this kine binary instead of building one")
	fs.StringVar(&k.backend, "kine-backend", kine.BackendSQLite, "--fixture kine: where kine keeps its data: "+strings.Join(kine.Backends(), ", ")+" (a server vigil starts on loopback, installed from Debian's packages on first use)")
}

// check validates the backend.
func (k kineFlags) check() error {
	if !slices.Contains(kine.Backends(), k.backend) {
		return usageError("--kine-backend %q: want %s", k.backend, strings.Join(kine.Backends(), ", "))
	}
	return nil
}

// newKine builds (or finds) kine and returns its fixture, not started.
func (k kineFlags) newKine(ctx context.Context, dir string, net fixtures.Network) (*kine.Server, error) {
	bin, err := binaries.Kine(ctx, binaries.KineOptions{Version: k.version, Binary: k.binary, Progress: os.Stderr})
	if err != nil {
		return nil, err
	}
	v := k.version
	if k.binary != "" {
		v = "a binary given with --kine-binary"
	}
	return kine.New(kine.Config{Binary: bin, Version: v, Dir: dir, Network: net, Backend: k.backend, Progress: os.Stderr}), nil
}

// startConformKine starts kine over SQLite in dir for the probes.
func startConformKine(ctx context.Context, k kineFlags, dir string) ([]string, string, func(), error) {
	srv, err := k.newKine(ctx, dir, nil)
	if err != nil {
		return nil, "", nil, err
	}
	// A first use may install a database server: minutes.
	sctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := srv.Start(sctx); err != nil {
		srv.Stop()
		return nil, "", nil, err
	}
	return srv.Endpoints(), "kine " + k.version + " over " + k.backend + ", started by vigil", func() { srv.Stop() }, nil
}

// newCommandFixture is --fixture command: any etcd-API server started
// from --command, with {client_port} and {data_dir} filled in.
func newCommandFixture(line, dir string, net fixtures.Network) (*command.Server, error) {
	bin, args, err := command.ParseCommand(line)
	if err != nil {
		return nil, usageError("%v", err)
	}
	return command.New(command.Config{Name: "server-0", Binary: bin, Args: args, Dir: dir, Network: net,
		Target: history.Target{Kind: "etcd", Fixture: "command"}}), nil
}

// startConformCommand starts the --command server in dir for the probes.
func startConformCommand(ctx context.Context, line, dir string) ([]string, string, func(), error) {
	srv, err := newCommandFixture(line, dir, nil)
	if err != nil {
		return nil, "", nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := srv.Start(sctx); err != nil {
		srv.Stop()
		return nil, "", nil, err
	}
	return srv.Endpoints(), "the server of --command, started by vigil", func() { srv.Stop() }, nil
}
