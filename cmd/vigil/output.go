package main

import (
	"context"

	"github.com/vigil-suite/vigil/fixtures/runs"
)

// startOutput makes the output dir of a command that starts servers
// (runs/<kind>-<timestamp> unless given), registers it so that vigil
// cleanup finds what a killed vigil left, and returns a context that
// SIGINT and SIGTERM cancel.
func startOutput(out *string, kind string) (context.Context, func(), error) {
	if *out == "" {
		*out = runs.DefaultOut(kind)
	}
	unregister, err := runs.Open(*out)
	if err != nil {
		return nil, nil, setupError(err)
	}
	ctx, stop := stopContext()
	return ctx, func() { stop(); unregister() }, nil
}
