package history

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkWrite writes the saved 3-member etcd run with faults (9,623
// records, 3.2 MB of JSON) through a Writer in each format, flushing every
// 200 records (about 65 KB, what a busy run writes in FlushEvery); it
// reports how many times smaller than the JSON the file is.
func BenchmarkWrite(b *testing.B) {
	h, err := Load("../checkers/testdata/etcd-v3.6.16-faults.jsonl.gz")
	if err != nil {
		b.Fatal(err)
	}
	recs := h.Records()
	var raw int64
	for _, r := range recs {
		line, _ := jsonLine(r)
		raw += int64(len(line))
	}
	for _, f := range Formats() {
		b.Run(string(f), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), FileFor(f))
			b.SetBytes(raw)
			for b.Loop() {
				w, err := Create(path)
				if err != nil {
					b.Fatal(err)
				}
				var since int
				for _, r := range recs {
					w.Write(r)
					if since++; since == 200 {
						w.flush()
						since = 0
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			st, _ := os.Stat(path)
			b.ReportMetric(float64(raw)/float64(st.Size()), "x_smaller")
		})
	}
}

// BenchmarkLoad loads the same run from each format.
func BenchmarkLoad(b *testing.B) {
	h, err := Load("../checkers/testdata/etcd-v3.6.16-faults.jsonl.gz")
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range Formats() {
		b.Run(string(f), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), FileFor(f))
			if err := Save(path, h); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Load(path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
