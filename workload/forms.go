package workload

import (
	"github.com/vigil-suite/vigil/history"
)

// The requests the workload makes outside the grammar's draw (grammar
// draws the clients' requests): the final write and the Kubernetes
// storage layer's update and delete, which the final write and the
// probe's cleanup fall back on where a target serves no other write.
const (
	// formKubeDelete is the storage layer's guarded delete.
	formKubeDelete = "txn-mod-delete-else-read"
	// formFinal is the final write: a put and a delete in one txn.
	formFinal = "txn-multi"
)

// kubeUpdate puts value to key if its mod revision is still modRev, and
// reads the key when it is not.
func kubeUpdate(key, value string, modRev int64) history.Request {
	return history.Request{Kind: history.OpTxn,
		Compares: []history.Compare{{Key: key, Target: "mod", Result: "=", Int: modRev}},
		Success:  []history.Request{{Kind: history.OpPut, Key: key, Value: value}},
		Failure:  []history.Request{{Kind: history.OpRange, Key: key}}}
}

// kubeDelete deletes key if its mod revision is still modRev.
func kubeDelete(key string, modRev int64) history.Request {
	return history.Request{Kind: history.OpTxn,
		Compares: []history.Compare{{Key: key, Target: "mod", Result: "=", Int: modRev}},
		Success:  []history.Request{{Kind: history.OpDelete, Key: key}},
		Failure:  []history.Request{{Kind: history.OpRange, Key: key}}}
}

// finalWrite is the final write's form: it puts one key and deletes
// another in one revision, so watches filtering puts or deletes out see
// an event too.
func finalWrite(put, del, value string) history.Request {
	return history.Request{Kind: history.OpTxn, Success: []history.Request{
		{Kind: history.OpPut, Key: put, Value: value}, {Kind: history.OpDelete, Key: del}}}
}
