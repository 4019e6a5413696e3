package etcd

import (
	"fmt"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/protobuf/protoadapt"

	"github.com/vigil-suite/vigil/history"
)

// Message is a request as the etcd v3 API's protobuf message and the
// call that sends it ("Range", "Put", "DeleteRange", "Txn", "Compact",
// "LeaseGrant", "LeaseRevoke"), for programs that replay a history's
// requests with nothing but the API's generated client.
func Message(r history.Request) (call string, msg protoadapt.MessageV1, err error) {
	switch r.Kind {
	case history.OpRange:
		m, err := rangePB(r)
		return "Range", m, err
	case history.OpPut:
		return "Put", putPB(r), nil
	case history.OpDelete:
		return "DeleteRange", deletePB(r), nil
	case history.OpTxn:
		m, err := txnPB(r)
		return "Txn", m, err
	case history.OpCompact:
		return "Compact", &pb.CompactionRequest{Revision: r.Revision, Physical: r.Physical}, nil
	case history.OpLeaseGrant:
		return "LeaseGrant", &pb.LeaseGrantRequest{TTL: r.TTL, ID: r.Lease}, nil
	case history.OpLeaseRevoke:
		return "LeaseRevoke", &pb.LeaseRevokeRequest{ID: r.Lease}, nil
	}
	return "", nil, fmt.Errorf("etcd target: no protobuf message for a %q", r.Kind)
}

func rangePB(r history.Request) (*pb.RangeRequest, error) {
	m := &pb.RangeRequest{Key: []byte(r.Key), RangeEnd: bytesOrNil(r.End), Limit: r.Limit, Revision: r.Revision,
		Serializable: r.Serializable, KeysOnly: r.KeysOnly, CountOnly: r.CountOnly,
		MinModRevision: r.MinModRevision, MaxModRevision: r.MaxModRevision,
		MinCreateRevision: r.MinCreateRevision, MaxCreateRevision: r.MaxCreateRevision}
	if r.SortOrder != "" || r.SortTarget != "" {
		order, target, err := toSort(r.SortOrder, r.SortTarget)
		if err != nil {
			return nil, err
		}
		m.SortOrder, m.SortTarget = pb.RangeRequest_SortOrder(order), pb.RangeRequest_SortTarget(target)
	}
	return m, nil
}

func putPB(r history.Request) *pb.PutRequest {
	return &pb.PutRequest{Key: []byte(r.Key), Value: []byte(r.Value), Lease: r.Lease, PrevKv: r.PrevKV,
		IgnoreValue: r.IgnoreValue, IgnoreLease: r.IgnoreLease}
}

func deletePB(r history.Request) *pb.DeleteRangeRequest {
	return &pb.DeleteRangeRequest{Key: []byte(r.Key), RangeEnd: bytesOrNil(r.End), PrevKv: r.PrevKV}
}

func txnPB(r history.Request) (*pb.TxnRequest, error) {
	m := &pb.TxnRequest{}
	for _, c := range r.Compares {
		cmp, err := toCmp(c)
		if err != nil {
			return nil, err
		}
		pc := pb.Compare(cmp)
		m.Compare = append(m.Compare, &pc)
	}
	var err error
	if m.Success, err = requestOps(r.Success); err != nil {
		return nil, err
	}
	if m.Failure, err = requestOps(r.Failure); err != nil {
		return nil, err
	}
	return m, nil
}

func requestOps(rs []history.Request) ([]*pb.RequestOp, error) {
	var out []*pb.RequestOp
	for _, r := range rs {
		op := &pb.RequestOp{}
		switch r.Kind {
		case history.OpRange:
			m, err := rangePB(r)
			if err != nil {
				return nil, err
			}
			op.Request = &pb.RequestOp_RequestRange{RequestRange: m}
		case history.OpPut:
			op.Request = &pb.RequestOp_RequestPut{RequestPut: putPB(r)}
		case history.OpDelete:
			op.Request = &pb.RequestOp_RequestDeleteRange{RequestDeleteRange: deletePB(r)}
		case history.OpTxn:
			m, err := txnPB(r)
			if err != nil {
				return nil, err
			}
			op.Request = &pb.RequestOp_RequestTxn{RequestTxn: m}
		default:
			return nil, fmt.Errorf("etcd target: a txn branch cannot hold a %q", r.Kind)
		}
		out = append(out, op)
	}
	return out, nil
}

func bytesOrNil(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}
