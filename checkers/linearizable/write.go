package linearizable

import (
	"fmt"

	"github.com/vigil-suite/vigil/history"
)

func kvText(kv *history.KV) string {
	if kv == nil {
		return "<absent>"
	}
	return fmt.Sprintf("%q@%d (created %d, version %d)", kv.Value, kv.ModRevision, kv.CreateRevision, kv.Version)
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
