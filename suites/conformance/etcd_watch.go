package conformance

import (
	"strings"

	. "github.com/onsi/gomega"
	"github.com/vigil-suite/vigil/checkers/watch"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// watchPrefix creates a watch on the probe's whole prefix.
func watchPrefix(p *P, s *Stream, mod func(*pb.WatchCreateRequest)) *pb.WatchResponse {
	req := &pb.WatchCreateRequest{Key: []byte(p.Prefix), RangeEnd: []byte(p.End())}
	if mod != nil {
		mod(req)
	}
	return s.Create(req)
}

func watchProbes() []EtcdProbe {
	return []EtcdProbe{
		{Info{"watch/created-header", "a watch's created response does not carry the store's current revision", []string{watch.NameResumable}}, func(p *P) {
			p.Put("a", "1")
			s := p.Stream()
			defer s.Close()
			r := watchPrefix(p, s, nil)
			p.Expect(r.Header.Revision).To(Equal(p.Rev(1)))
			p.Expect(r.Events).To(BeEmpty())
		}},
		{Info{"watch/from-now", "a watch from the current revision does not deliver the next change, or delivers an older one", []string{watch.NameReliable, watch.NameResumable}}, func(p *P) {
			p.Put("a", "0")
			s := p.Stream()
			defer s.Close()
			watchPrefix(p, s, nil)
			p.Put("a", "1")
			evs, _ := s.Events(1)
			p.Expect(evs[0].Kv.ModRevision).To(Equal(p.Rev(2)))
			p.Expect(string(evs[0].Kv.Value)).To(Equal("1"))
		}},
		{Info{"watch/from-past", "a watch from a past revision does not replay every change since that revision, in order", []string{watch.NameResumable, watch.NameOrdered, watch.NameReliable}}, func(p *P) {
			p.Put("a", "1")
			p.Put("b", "1")
			p.Put("a", "2")
			s := p.Stream()
			defer s.Close()
			watchPrefix(p, s, func(r *pb.WatchCreateRequest) { r.StartRevision = p.Rev(2) })
			evs, _ := s.Events(2)
			p.Expect([]int64{evs[0].Kv.ModRevision, evs[1].Kv.ModRevision}).To(Equal([]int64{p.Rev(2), p.Rev(3)}))
		}},
		{Info{"watch/from-future", "a watch from a future revision delivers changes below its start revision", []string{watch.NameResumable}}, func(p *P) {
			p.Put("a", "1")
			s := p.Stream()
			defer s.Close()
			watchPrefix(p, s, func(r *pb.WatchCreateRequest) { r.StartRevision = p.Rev(3) })
			p.Put("a", "2")
			p.Put("a", "3")
			p.Put("a", "4")
			evs, _ := s.Events(2)
			p.Expect(evs[0].Kv.ModRevision).To(Equal(p.Rev(3)))
		}},
		{Info{"watch/filter-noput", "a watch with the NoPut filter receives PUT events", []string{watch.NameFilter}}, func(p *P) {
			s := p.Stream()
			defer s.Close()
			watchPrefix(p, s, func(r *pb.WatchCreateRequest) {
				r.Filters = []pb.WatchCreateRequest_FilterType{pb.WatchCreateRequest_NOPUT}
			})
			p.Put("a", "1")
			_, err := p.C.Delete(p.Ctx, p.K("a"))
			p.Expect(err).NotTo(HaveOccurred())
			evs, _ := s.Events(1)
			p.Expect(evs[0].Type).To(Equal(mvccpb.DELETE))
		}},
		{Info{"watch/filter-nodelete", "a watch with the NoDelete filter receives DELETE events", []string{watch.NameFilter}}, func(p *P) {
			s := p.Stream()
			defer s.Close()
			watchPrefix(p, s, func(r *pb.WatchCreateRequest) {
				r.Filters = []pb.WatchCreateRequest_FilterType{pb.WatchCreateRequest_NODELETE}
			})
			p.Put("a", "1")
			_, err := p.C.Delete(p.Ctx, p.K("a"))
			p.Expect(err).NotTo(HaveOccurred())
			p.Put("a", "2")
			evs, _ := s.Events(2)
			p.Expect([]mvccpb.Event_EventType{evs[0].Type, evs[1].Type}).To(Equal([]mvccpb.Event_EventType{mvccpb.PUT, mvccpb.PUT}))
			p.Expect(evs[1].Kv.ModRevision).To(Equal(p.Rev(3)))
		}},
		{Info{"watch/single-key", "a watch on one key receives events of other keys", []string{watch.NameFilter}}, func(p *P) {
			s := p.Stream()
			defer s.Close()
			s.Create(&pb.WatchCreateRequest{Key: []byte(p.K("a"))})
			p.Put("ab", "1")
			p.Put("b", "1")
			p.Put("a", "1")
			evs, _ := s.Events(1)
			p.Expect(p.KeysOf(evs)).To(Equal([]string{"a"}))
		}},
		{Info{"watch/range-end-exclusive", "a watch on [a, c) receives events of c", []string{watch.NameFilter}}, func(p *P) {
			s := p.Stream()
			defer s.Close()
			s.Create(&pb.WatchCreateRequest{Key: []byte(p.K("a")), RangeEnd: []byte(p.K("c"))})
			p.Put("c", "1")
			p.Put("b", "1")
			evs, _ := s.Events(1)
			p.Expect(p.KeysOf(evs)).To(Equal([]string{"b"}))
		}},
		{Info{"watch/prev-kv-put", "a watch with prev_kv does not carry the previous value on a PUT event", []string{watch.NamePrevKV}}, func(p *P) {
			p.Put("a", "old")
			s := p.Stream()
			defer s.Close()
			watchPrefix(p, s, func(r *pb.WatchCreateRequest) { r.PrevKv = true })
			p.Put("a", "new")
			evs, _ := s.Events(1)
			p.Expect(evs[0].PrevKv).NotTo(BeNil())
			p.Expect(string(evs[0].PrevKv.Value)).To(Equal("old"))
			p.Expect(evs[0].PrevKv.ModRevision).To(Equal(p.Rev(1)))
		}},
		{Info{"watch/prev-kv-delete", "a watch with prev_kv does not carry the deleted value on a DELETE event", []string{watch.NamePrevKV}}, func(p *P) {
			p.Put("a", "old")
			s := p.Stream()
			defer s.Close()
			watchPrefix(p, s, func(r *pb.WatchCreateRequest) { r.PrevKv = true })
			_, err := p.C.Delete(p.Ctx, p.K("a"))
			p.Expect(err).NotTo(HaveOccurred())
			evs, _ := s.Events(1)
			p.Expect(evs[0].Type).To(Equal(mvccpb.DELETE))
			p.Expect(evs[0].PrevKv).NotTo(BeNil())
			p.Expect(string(evs[0].PrevKv.Value)).To(Equal("old"))
		}},
		{Info{"watch/prev-kv-create", "a watch with prev_kv carries a previous value on a create", []string{watch.NamePrevKV}}, func(p *P) {
			s := p.Stream()
			defer s.Close()
			watchPrefix(p, s, func(r *pb.WatchCreateRequest) { r.PrevKv = true })
			p.Put("a", "first")
			evs, _ := s.Events(1)
			p.Expect(evs[0].PrevKv).To(BeNil())
		}},
		{Info{"watch/no-prev-kv-unasked", "a watch without prev_kv carries previous values", nil}, func(p *P) {
			p.Put("a", "old")
			s := p.Stream()
			defer s.Close()
			watchPrefix(p, s, nil)
			p.Put("a", "new")
			evs, _ := s.Events(1)
			p.Expect(evs[0].PrevKv).To(BeNil())
		}},
		{Info{"watch/txn-one-response", "the events of one txn are split over several watch responses", []string{watch.NameAtomic}}, func(p *P) {
			s := p.Stream()
			defer s.Close()
			watchPrefix(p, s, nil)
			_, err := p.C.Txn(p.Ctx).Then(clientv3.OpPut(p.K("a"), "1"), clientv3.OpPut(p.K("b"), "1"), clientv3.OpPut(p.K("c"), "1")).Commit()
			p.Expect(err).NotTo(HaveOccurred())
			r := s.Recv()
			p.Expect(p.KeysOf(r.Events)).To(Equal([]string{"a", "b", "c"}))
			for _, e := range r.Events {
				p.Expect(e.Kv.ModRevision).To(Equal(p.Rev(1)))
			}
		}},
		{Info{"watch/delete-range-one-response", "the DELETE events of one range delete are split over several watch responses", []string{watch.NameAtomic}}, func(p *P) {
			p.Put("a1", "1")
			p.Put("a2", "1")
			s := p.Stream()
			defer s.Close()
			watchPrefix(p, s, nil)
			_, err := p.C.Delete(p.Ctx, p.K("a"), clientv3.WithPrefix())
			p.Expect(err).NotTo(HaveOccurred())
			r := s.Recv()
			p.Expect(r.Events).To(HaveLen(2))
			p.Expect(r.Events[0].Kv.ModRevision).To(Equal(p.Rev(3)))
		}},
		{Info{"watch/is-create", "a watch event for a new key does not say it is a create (create_revision = mod_revision, version 1)", []string{watch.NameIsCreate}}, func(p *P) {
			s := p.Stream()
			defer s.Close()
			watchPrefix(p, s, nil)
			p.Put("a", "1")
			p.Put("a", "2")
			evs, _ := s.Events(2)
			p.Expect(evs[0].Kv.CreateRevision).To(Equal(evs[0].Kv.ModRevision))
			p.Expect(evs[0].Kv.Version).To(Equal(int64(1)))
			p.Expect(evs[1].Kv.CreateRevision).To(Equal(p.Rev(1)))
			p.Expect(evs[1].Kv.Version).To(Equal(int64(2)))
		}},
		{Info{"watch/delete-event", "a DELETE event does not carry the deletion's revision, or carries a value", []string{watch.NameReliable}}, func(p *P) {
			p.Put("a", "1")
			s := p.Stream()
			defer s.Close()
			watchPrefix(p, s, nil)
			_, err := p.C.Delete(p.Ctx, p.K("a"))
			p.Expect(err).NotTo(HaveOccurred())
			evs, _ := s.Events(1)
			p.Expect(evs[0].Type).To(Equal(mvccpb.DELETE))
			p.Expect(evs[0].Kv.ModRevision).To(Equal(p.Rev(2)))
			p.Expect(evs[0].Kv.Value).To(BeEmpty())
		}},
		{Info{"watch/response-header", "a watch response's header revision is below the revision of the events it carries", []string{watch.NameBookmarkable}}, func(p *P) {
			s := p.Stream()
			defer s.Close()
			watchPrefix(p, s, nil)
			p.Put("a", "1")
			_, rs := s.Events(1)
			p.Expect(rs[len(rs)-1].Header.Revision).To(BeNumerically(">=", p.Rev(1)))
		}},
		{Info{"watch/two-on-one-stream", "two watches on one stream do not get distinct ids, or get each other's events", []string{watch.NameFilter}}, func(p *P) {
			s := p.Stream()
			defer s.Close()
			w1 := s.Create(&pb.WatchCreateRequest{Key: []byte(p.K("a"))})
			w2 := s.Create(&pb.WatchCreateRequest{Key: []byte(p.K("b"))})
			p.Expect(w1.WatchId).NotTo(Equal(w2.WatchId))
			p.Put("b", "1")
			p.Put("a", "1")
			r1, r2 := s.Recv(), s.Recv()
			p.Expect(r1.WatchId).To(Equal(w2.WatchId))
			p.Expect(p.KeysOf(r1.Events)).To(Equal([]string{"b"}))
			p.Expect(r2.WatchId).To(Equal(w1.WatchId))
			p.Expect(p.KeysOf(r2.Events)).To(Equal([]string{"a"}))
		}},
		{Info{"watch/cancel-by-id", "canceling one watch by id is not acknowledged, or cancels the other watches of the stream", []string{watch.NameCancelReason}}, func(p *P) {
			s := p.Stream()
			defer s.Close()
			w1 := s.Create(&pb.WatchCreateRequest{Key: []byte(p.K("a"))})
			w2 := s.Create(&pb.WatchCreateRequest{Key: []byte(p.K("b"))})
			s.CancelWatch(w1.WatchId)
			r := s.Recv()
			p.Expect(r.Canceled).To(BeTrue())
			p.Expect(r.WatchId).To(Equal(w1.WatchId))
			p.Put("a", "1")
			p.Put("b", "1")
			r = s.Recv()
			p.Expect(r.WatchId).To(Equal(w2.WatchId))
			p.Expect(p.KeysOf(r.Events)).To(Equal([]string{"b"}))
		}},
		{Info{"watch/progress-request", "a progress request is not answered with a progress notification at the store's revision", []string{watch.NameBookmarkable, watch.NameLiveness}}, func(p *P) {
			s := p.Stream()
			defer s.Close()
			watchPrefix(p, s, nil)
			p.Put("a", "1")
			s.Events(1)
			s.Progress()
			r := s.Recv()
			p.Expect(r.Events).To(BeEmpty())
			p.Expect(r.Header.Revision).To(Equal(p.Rev(1)))
		}},
		{Info{"watch/progress-then-no-older-event", "an event at or below a progress notification's revision arrives after it", []string{watch.NameBookmarkable}}, func(p *P) {
			s := p.Stream()
			defer s.Close()
			watchPrefix(p, s, nil)
			p.Put("a", "1")
			p.Put("a", "2")
			s.Events(2)
			s.Progress()
			prog := s.Recv()
			p.Expect(prog.Events).To(BeEmpty())
			p.Put("a", "3")
			evs, _ := s.Events(1)
			p.Expect(evs[0].Kv.ModRevision).To(BeNumerically(">", prog.Header.Revision))
		}},
		{Info{"watch/progress-notify-option", "a watch created with progress_notify is refused", []string{watch.NameLiveness}}, func(p *P) {
			s := p.Stream()
			defer s.Close()
			r := watchPrefix(p, s, func(r *pb.WatchCreateRequest) { r.ProgressNotify = true })
			p.Expect(r.Canceled).To(BeFalse())
		}},
		{Info{"watch/fragment", "a watch with fragment=true gets one response over the size limit unfragmented, or loses events when fragmenting", []string{watch.NameAtomic, watch.NameReliable}}, func(p *P) {
			big := strings.Repeat("v", 200*1024)
			keys := []string{"f01", "f02", "f03", "f04", "f05", "f06", "f07", "f08", "f09", "f10", "f11", "f12"}
			for _, k := range keys {
				p.Put(k, big)
			}
			s := p.Stream()
			defer s.Close()
			watchPrefix(p, s, func(r *pb.WatchCreateRequest) { r.Fragment, r.PrevKv = true, true })
			_, err := p.C.Delete(p.Ctx, p.K("f"), clientv3.WithPrefix())
			p.Expect(err).NotTo(HaveOccurred())
			evs, rs := s.Events(len(keys))
			p.Expect(len(rs)).To(BeNumerically(">", 1), "2.4 MB of prev_kv in one revision (over the 2 MiB a watch response may hold) must be fragmented")
			for i, r := range rs {
				p.Expect(r.Fragment).To(Equal(i < len(rs)-1), "response %d of %d", i+1, len(rs))
			}
			for _, e := range evs {
				p.Expect(e.Kv.ModRevision).To(Equal(p.Rev(int64(len(keys) + 1))))
			}
		}},
		{Info{"watch/compacted-start-cancel", "a watch started below the compact revision is silently started later instead of canceled", []string{watch.NameResumable, watch.NameCancelReason}}, func(p *P) {
			p.Put("a", "1")
			p.Put("a", "2")
			p.Put("a", "3")
			_, err := p.C.Compact(p.Ctx, p.Rev(3))
			p.Expect(err).NotTo(HaveOccurred())
			s := p.Stream()
			defer s.Close()
			watchPrefix(p, s, func(r *pb.WatchCreateRequest) { r.StartRevision = p.Rev(2) })
			r := s.Recv()
			p.Expect(r.Canceled).To(BeTrue())
			p.Expect(r.CompactRevision).To(Equal(p.Rev(3)))
		}},
	}
}
