package suites

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

// Capabilities of the etcd API that the workload uses and that servers
// implementing part of the API (kine implements what Kubernetes needs)
// may refuse. Each is asked for once before the workload, with a request
// that changes nothing.
const (
	// CapDelete: a plain DeleteRange.
	CapDelete = "delete"
	// CapTxn: transactions beyond the forms the Kubernetes storage layer
	// sends (a compare on version with a read in its branch).
	CapTxn = "txn"
	// CapHashKV: the Maintenance HashKV call.
	CapHashKV = "hashkv"
	// CapSerializable: serializable ranges.
	CapSerializable = "serializable"
)

// probeCapabilities asks the target for each capability and returns the
// ones it refused (gRPC Unimplemented or an error saying "not
// supported"), with the server's words. Any other error is not a
// refusal: the workload will meet it again and the checks will judge it.
func probeCapabilities(ctx context.Context, c targets.Client, prefix string) map[string]string {
	key := prefix + "capability-probe"
	asks := []struct {
		name string
		req  history.Request
	}{
		{CapDelete, history.Request{Kind: history.OpDelete, Key: key}},
		{CapTxn, history.Request{Kind: history.OpTxn,
			Compares: []history.Compare{{Key: key, Target: "version", Result: "=", Int: 0}},
			Success:  []history.Request{{Kind: history.OpRange, Key: key}}}},
		{CapHashKV, history.Request{Kind: history.OpHashKV}},
		{CapSerializable, history.Request{Kind: history.OpRange, Key: key, Serializable: true}},
	}
	refused := map[string]string{}
	for _, a := range asks {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := c.Do(rctx, a.req)
		cancel()
		var oe *targets.OpError
		if errors.As(err, &oe) && oe.Code == history.ErrRefused {
			refused[a.name] = oe.Err.Error()
		}
	}
	return refused
}

// refusedText lists refused capabilities for a log line, in a stable order.
func refusedText(refused map[string]string) string {
	var names []string
	for n := range refused {
		names = append(names, n)
	}
	slices.Sort(names)
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s (%s)", n, refused[n]))
	}
	return strings.Join(parts, "; ")
}

// adapt makes the workload ask only for what the target serves: a target
// that refuses deletes or general transactions gets the requests of the
// Kubernetes storage layer (ShapeKubeLike), which is what such servers
// are built for. It fails for a shape that cannot do without them.
func (c *WorkloadConfig) adapt(refused map[string]string) error {
	c.Refused = refused
	_, noDelete := refused[CapDelete]
	_, noTxn := refused[CapTxn]
	if !noDelete && !noTxn {
		return nil
	}
	switch c.Shape {
	case "", ShapeDefault, ShapeFutureWatch:
		c.kubeLikeMix = true
	case ShapeChurn, ShapeDeleteHeavy:
		if noDelete {
			return fmt.Errorf("the %s workload needs plain deletes, which the target refuses (%s); use --workload kube-like or write-heavy", c.Shape, refused[CapDelete])
		}
	}
	return nil
}
