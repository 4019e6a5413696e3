package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"

	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
)

// brokenStore is an etcd-API server that breaks itself as the issue's
// server did: it is a gRPC proxy in front of a real etcd that accepts a
// compaction at a future revision (answering it itself) and from then on
// answers every range "required revision has been compacted". Every
// client of the runner (the recorded one, the setup read, the watch of
// other writers) reaches it over the network, as it would a real server.
type brokenStore struct {
	addr    string
	broken  atomic.Bool
	mu      sync.Mutex
	backend *grpc.ClientConn
	srv     *grpc.Server
}

// rawCodec passes gRPC frames through undecoded.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

func startBrokenStore(t *testing.T, backend string) *brokenStore {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &brokenStore{addr: l.Addr().String()}
	b.setBackend(t, backend)
	b.srv = grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.UnknownServiceHandler(b.handle))
	go b.srv.Serve(l)
	t.Cleanup(func() {
		b.srv.Stop()
		b.conn().Close()
	})
	return b
}

// setBackend points the proxy at a (fresh) etcd and forgets the damage:
// the state that broke lived in the store that was replaced.
func (b *brokenStore) setBackend(t *testing.T, endpoint string) {
	t.Helper()
	cc, err := grpc.NewClient(strings.TrimPrefix(endpoint, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	old := b.backend
	b.backend = cc
	b.mu.Unlock()
	if old != nil {
		old.Close()
	}
	b.broken.Store(false)
}

func (b *brokenStore) conn() *grpc.ClientConn {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.backend
}

func (b *brokenStore) handle(_ any, ss grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(ss)
	ctx := ss.Context()
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		ctx = metadata.NewOutgoingContext(ctx, md)
	}
	switch {
	case method == "/etcdserverpb.KV/Range" && b.broken.Load():
		return status.Error(codes.OutOfRange, "etcdserver: mvcc: required revision has been compacted")
	case method == "/etcdserverpb.KV/Compact":
		var in []byte
		if err := ss.RecvMsg(&in); err != nil {
			return err
		}
		req := &pb.CompactionRequest{}
		if err := proto.Unmarshal(in, protoV2(req)); err != nil {
			return err
		}
		head, err := pb.NewKVClient(b.conn()).Range(ctx, &pb.RangeRequest{Key: []byte("/brokenstore-head")})
		if err != nil {
			return err
		}
		if req.Revision > head.Header.Revision {
			b.broken.Store(true) // the bug: accepted, and the store now reads as compacted
			out, _ := proto.Marshal(protoV2(&pb.CompactionResponse{Header: head.Header}))
			return ss.SendMsg(&out)
		}
		return b.forward(ctx, ss, method, &in)
	}
	return b.forward(ctx, ss, method, nil)
}

// forward relays one call (unary or stream) to the backend etcd; first is
// a request already read from the client.
func (b *brokenStore) forward(ctx context.Context, ss grpc.ServerStream, method string, first *[]byte) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cs, err := b.conn().NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method, grpc.ForceCodec(rawCodec{}))
	if err != nil {
		return err
	}
	go func() {
		if first != nil {
			if cs.SendMsg(first) != nil {
				return
			}
		}
		for {
			var m []byte
			if err := ss.RecvMsg(&m); err != nil {
				cs.CloseSend()
				return
			}
			if cs.SendMsg(&m) != nil {
				return
			}
		}
	}()
	for {
		var m []byte
		if err := cs.RecvMsg(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := ss.SendMsg(&m); err != nil {
			return err
		}
	}
}

func protoV2(m protoadapt.MessageV1) proto.Message { return protoadapt.MessageV2Of(m) }

// etcdFixture starts a 1-member etcd of the default version in a new dir.
func etcdFixture(t *testing.T) *etcdproc.Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real etcd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin, err := binaries.Etcd(ctx, binaries.Options{Version: binaries.DefaultEtcdVersion, Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	c := etcdproc.New(etcdproc.Config{Binary: bin, Members: 1, Dir: t.TempDir(), Version: binaries.DefaultEtcdVersion})
	t.Cleanup(func() { c.Stop() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// The server: it accepts a compaction at a future revision and
// then refuses every read. Run as vigil runs a server it started, the
// probe that broke it is named, a fresh server is started, and the probes
// after it run there: none ends in error. Run as against a server vigil
// did not start, the report names the probe after which every later one
// could not start, and says later results may depend on its damage.
func TestAServerThatBreaksOnAProbeIsReplaced(t *testing.T) {
	etcd := etcdFixture(t)
	store := startBrokenStore(t, etcd.Endpoints()[0])
	var whys []string
	cfg := EtcdConfig{Endpoints: []string{store.addr}, Fresh: func(ctx context.Context, why string) ([]string, error) {
		whys = append(whys, why)
		etcd.Stop()
		etcd = etcdFixture(t) // a new dir: an empty store
		store.setBackend(t, etcd.Endpoints()[0])
		return []string{store.addr}, nil
	}}
	res, err := RunEtcdProbes(context.Background(), cfg, EtcdProbes())
	if err != nil {
		t.Fatal(err)
	}
	counts, broke := map[Verdict][]string{}, []string{}
	for _, r := range res {
		counts[r.Verdict] = append(counts[r.Verdict], r.Name)
		if r.Broke != nil {
			broke = append(broke, r.Name)
		}
	}
	t.Logf("with a fresh server: %d pass, fail %v, error %v; fresh servers: %q", len(counts[Pass]), counts[Fail], counts[Error], whys)
	if len(counts[Error]) > 2 {
		t.Errorf("%d probes ended in error, want at most 2: %v", len(counts[Error]), counts[Error])
	}
	want := "probe compaction/future left the server unable to read the store revision: etcdserver: mvcc: required revision has been compacted"
	if len(whys) != 1 || whys[0] != want {
		t.Errorf("fresh servers started: %q, want one, because %q", whys, want)
	}
	if len(broke) != 1 || broke[0] != "compaction/future" {
		t.Errorf("probes named as breaking the server: %v, want compaction/future", broke)
	}
	var table strings.Builder
	NewReport("test", "", res).Table(&table)
	if !strings.Contains(table.String(), want+"; the remaining probes ran against a fresh server") {
		t.Errorf("the report does not name the probe that broke the server:\n%s", table.String())
	}

	// A server vigil did not start: no fresh one.
	cfg.Fresh = nil
	res, err = RunEtcdProbes(context.Background(), cfg, EtcdProbes())
	if err != nil {
		t.Fatal(err)
	}
	table.Reset()
	NewReport("test", "", res).Table(&table)
	after := 0
	for i, p := range runOrder(EtcdProbes()) {
		if p.Name == "compaction/future" {
			after = len(EtcdProbes()) - i - 1
		}
	}
	want = fmt.Sprintf("probe compaction/future left the server unable to read the store revision: etcdserver: mvcc: required revision has been compacted; vigil did not start this server and cannot replace it: the %d probe(s) after it could not start, and any later result may depend on the damage it did", after)
	if !strings.Contains(table.String(), want) {
		t.Errorf("the report does not say %q:\n%s", want, table.String())
	}
	t.Logf("without a fresh server: %d probes after compaction/future, every one damaging", after)
}
